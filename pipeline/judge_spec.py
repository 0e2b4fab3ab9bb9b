"""A candidate judge as the pipeline runs it: which model, which prompt, how it thinks, and in
which order it sees the two images.

The default judge is prompts/judge.j2 with the paper's model. A candidate carries the full
text of its own prompt template, so a verdict always names exactly what produced it: the
spec's version hashes the template text with every setting that changes an answer.

A candidate's template is written in the browser, so it is rendered in Jinja's sandbox
(no attribute of a Python object beyond the plain data it is given), strictly (an unknown
variable is an error, never an empty string), and checked before it is kept: it must render
for a sample task and name every field the verdict parser reads.
"""

import hashlib
import json
from dataclasses import asdict, dataclass
from typing import Any

from jinja2 import StrictUndefined, TemplateError
from jinja2.sandbox import ImmutableSandboxedEnvironment

from pipeline import prompts
from pipeline.prompts import Prompt
from pipeline.rubric import rubric

# What the verdict parser reads from the judge's answer (pipeline/gemini.py JudgeAnswer); a
# prompt that never names one of them leaves the model to guess what it means.
ANSWER_FIELDS = ("compliance", "structure", "realism", "fidelity", "has_disease",
                 "weighted_score", "qualified", "reason")
# The variables a judge template is given (the same as prompts/judge.j2 is).
VARIABLES = ("modality", "disease", "direction", "instruction", "modality_words",
             "disease_words", "rubric", "edited_first")
# Offline only: deterministic judges with known faults, for trying the whole loop without a
# key (pipeline/offline_judges.py).
OFFLINE_BIASES = ("lenient", "strict", "order_biased", "noisy")
SAMPLE = {"modality": "chest_xray", "disease": "Pleural_Effusion", "direction": "add",
          "instruction": "Add a small left pleural effusion blunting the costophrenic angle."}
MAX_TEMPLATE = 20_000

_sandbox = ImmutableSandboxedEnvironment(undefined=StrictUndefined, trim_blocks=True,
                                         lstrip_blocks=True, keep_trailing_newline=False,
                                         autoescape=False)


class TemplateProblem(ValueError):
    """The template cannot be used; the message is the template's own error, or what it lacks."""


@dataclass(frozen=True)
class JudgeSpec:
    model: str
    template: str  # the prompt template's full text (Jinja)
    rubric_version: str
    thinking_budget: int | None = None  # tokens; None leaves the model's default
    temperature: float | None = None  # None leaves the model's default
    # False: the edited image first, as the paper's judge sees them; True: the original first
    # (an order-bias run of the same candidate).
    original_first: bool = False
    bias: str | None = None  # offline only, one of OFFLINE_BIASES

    @property
    def version(self) -> str:
        """12 hex digits of the SHA-256 of everything that changes an answer."""
        settings = {k: v for k, v in asdict(self).items() if k != "template"}
        digest = hashlib.sha256(self.template.encode() + b"\0" +
                                json.dumps(settings, sort_keys=True).encode())
        return digest.hexdigest()[:12]


def default_template() -> str:
    """The judge of record's template text, as shipped in prompts/judge.j2."""
    return (prompts.PROMPTS_DIR / "judge.j2").read_text(encoding="utf-8")


def render(spec: JudgeSpec, modality: str, disease: str, direction: str,
           instruction: str) -> Prompt:
    """The spec's prompt for one edit, named by the spec's version."""
    context: dict[str, Any] = {
        "modality": modality, "disease": disease, "direction": direction,
        "instruction": instruction, "modality_words": prompts.MODALITY_WORDS.get(
            modality, prompts.MODALITY_WORDS["medical"]),
        "disease_words": prompts.words(disease), "rubric": rubric(),
        "edited_first": not spec.original_first}
    try:
        text = _sandbox.from_string(spec.template).render(context).strip()
    except TemplateError as error:
        raise TemplateProblem(_described(error)) from None
    except Exception as error:
        raise TemplateProblem(f"the prompt template does not render: {error}") from None
    return Prompt("candidate", spec.version, text)


def check_template(template: str) -> None:
    """TemplateProblem unless ``template`` renders for a sample task and names every answer
    field and the instruction."""
    if not template.strip():
        raise TemplateProblem("the prompt template is empty")
    if len(template) > MAX_TEMPLATE:
        raise TemplateProblem(f"the prompt template is {len(template):,} characters; "
                              f"at most {MAX_TEMPLATE:,}")
    spec = JudgeSpec(model="check", template=template, rubric_version="check")
    text = render(spec, **SAMPLE).text
    missing = [name for name in ANSWER_FIELDS if name not in text]
    if missing:
        raise TemplateProblem("the rendered prompt never names " + ", ".join(missing) +
                              ": the verdict parser reads these fields from the judge's answer")
    if SAMPLE["instruction"] not in text:
        raise TemplateProblem("the rendered prompt does not contain the edit's instruction "
                              "({{ instruction }}): the judge cannot rate compliance without it")


def _described(error: TemplateError) -> str:
    line = getattr(error, "lineno", None)
    where = f" (line {line})" if line else ""
    return f"the prompt template does not render{where}: {error.message or error}"
