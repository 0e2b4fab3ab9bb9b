"""The prompt templates in prompts/: rendered strictly, each with the version that made it.

A version is the first 12 hex digits of the SHA-256 of the template's source, of the
partials it includes and of the data it renders (the judge's rubric), so changing a word
anywhere in a prompt changes the version stored with every verdict made from it.
"""

import hashlib
from dataclasses import dataclass
from functools import cache
from importlib.resources import files
from pathlib import Path
from typing import Any

from jinja2 import Environment, FileSystemLoader, StrictUndefined

from pipeline.rubric import RUBRIC_FILE, rubric

# The top-level prompts/ folder, shipped in the wheel as this package (pyproject.toml).
PROMPTS_DIR = files("pipeline.prompt_templates")
if not isinstance(PROMPTS_DIR, Path):
    raise RuntimeError(f"the prompt templates are not on the file system ({PROMPTS_DIR})")
PARTIALS = ("_constraints.j2", "_reader_feedback.j2")
# Data a template renders besides its partials: part of that template's version.
DATA = {"judge.j2": (RUBRIC_FILE,)}
MODALITY_WORDS = {"chest_xray": "chest X-ray", "brain_mri": "axial brain MRI",
                  "fundus": "colour fundus photograph", "medical": "medical image"}

_env = Environment(loader=FileSystemLoader(PROMPTS_DIR), undefined=StrictUndefined,
                   keep_trailing_newline=False, trim_blocks=True, lstrip_blocks=True)


@dataclass(frozen=True)
class Prompt:
    name: str  # the template file
    version: str
    text: str


@cache
def version_of(name: str) -> str:
    digest = hashlib.sha256()
    for part in (name, *PARTIALS, *DATA.get(name, ())):
        digest.update(part.encode() + b"\0" + (PROMPTS_DIR / part).read_bytes())
    return digest.hexdigest()[:12]


def words(disease: str) -> str:
    """Pleural_Effusion -> pleural effusion; acronyms (AMD) keep their capitals."""
    spaced = disease.replace("_", " ")
    return spaced if spaced.isupper() else spaced.lower()


def render(name: str, **variables: Any) -> Prompt:
    modality = variables.get("modality", "medical")
    context = {"modality_words": MODALITY_WORDS.get(modality, "medical image"), "rubric": rubric(),
               "disease_words": words(variables.get("disease", "")), **variables}
    text = _env.get_template(name).render(context).strip()
    return Prompt(name, version_of(name), text)


def first_instruction(modality: str, disease: str, direction: str,
                      reader_feedback: list[dict[str, Any]] | None = None) -> Prompt:
    """The first instruction; with readers' answers on an earlier edit of the task when a
    regeneration asks for them (the judge accepted that edit in round 1 as often as not)."""
    return render(f"instruction_{direction}.j2", modality=modality, disease=disease,
                  reader_feedback=reader_feedback or [])


def refinement(modality: str, disease: str, direction: str, history: list[dict[str, Any]],
               reader_feedback: list[dict[str, Any]] | None = None) -> Prompt:
    return render("refinement.j2", modality=modality, disease=disease, direction=direction,
                  history=history, reader_feedback=reader_feedback or [])


def judge(modality: str, disease: str, direction: str, instruction: str) -> Prompt:
    return render("judge.j2", modality=modality, disease=disease, direction=direction,
                  instruction=instruction)
