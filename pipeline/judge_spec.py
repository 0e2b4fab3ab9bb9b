"""A candidate judge as the pipeline runs it: which model, which prompt, how it thinks, and in
which order it sees the two images.

The default judge is prompts/judge.j2 with the paper's model. A candidate carries the full
text of its own prompt template, so a verdict always names exactly what produced it: the
spec's version hashes the template text with every setting that changes an answer.

A candidate's template is written in the browser, so it is rendered in a sandbox with a budget
no task can break (pipeline/template_sandbox.py), strictly (an unknown variable is an error,
never an empty string), in a process of its own under a time and a memory limit
(pipeline/guarded_render.py), and checked before it is kept: its syntax must offer nothing
past the budget, and it must render, the same prompt each time, for every sample task and
every (modality, disease, direction) of the data, each with a short and a long instruction,
and name every field the verdict parser reads.
"""

import hashlib
import json
from collections.abc import Iterable
from dataclasses import asdict, dataclass
from typing import Any

from jinja2 import TemplateError

from pipeline import prompts
from pipeline.guarded_render import MAX_PROMPT, RenderFailed, renderer
from pipeline.prompts import Prompt
from pipeline.template_sandbox import WORK_BUDGET, refusals

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
# Every task a template is checked with before it is kept: a template may branch on its task,
# so one sample is not enough (one that rendered in a millisecond for the sample ran for
# minutes on real tasks).
SHORT, LONG = SAMPLE["instruction"], SAMPLE["instruction"] + " Keep the rest." * 120
SAMPLES = tuple(
    {"modality": modality, "disease": disease, "direction": direction, "instruction": text}
    for modality, disease in (("chest_xray", "Pleural_Effusion"), ("brain_mri", "glioma"),
                              ("fundus", "Diabetic_Retinopathy"))
    for direction in ("add", "remove")
    for text in (SHORT, LONG))
MAX_TEMPLATE = 20_000
__all__ = ["ANSWER_FIELDS", "MAX_PROMPT", "MAX_TEMPLATE", "OFFLINE_BIASES", "SAMPLE", "VARIABLES",
           "WORK_BUDGET", "JudgeSpec", "TemplateProblem", "check_template", "default_template",
           "render"]


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
    """The spec's prompt for one edit, named by the spec's version; TemplateProblem when it
    cannot be had within the budget and the render process's limits."""
    # The render process adds the rubric (pipeline/render_process.py).
    context: dict[str, Any] = {
        "modality": modality, "disease": disease, "direction": direction,
        "instruction": instruction, "modality_words": prompts.MODALITY_WORDS.get(
            modality, prompts.MODALITY_WORDS["medical"]),
        "disease_words": prompts.words(disease), "edited_first": not spec.original_first}
    try:
        text = renderer.render(spec.template, context).strip()
    except RenderFailed as failed:
        raise TemplateProblem(str(failed)) from None
    return Prompt("candidate", spec.version, text)


def check_template(template: str, kinds: Iterable[tuple[str, str, str]] = ()) -> None:
    """TemplateProblem unless ``template`` offers nothing past the budget, renders the same
    prompt twice for every sample task and every (modality, disease, direction) of ``kinds``
    (the data's: a template may branch on a disease no sample has), each with a short and a
    long instruction, and names every answer field and the instruction."""
    if not template.strip():
        raise TemplateProblem("the prompt template is empty")
    if len(template) > MAX_TEMPLATE:
        raise TemplateProblem(f"the prompt template is {len(template):,} characters; "
                              f"at most {MAX_TEMPLATE:,}")
    try:
        refused = refusals(template)
    except TemplateError as error:
        line = getattr(error, "lineno", None)
        where = f" (line {line})" if line else ""
        raise TemplateProblem(f"the prompt template does not render{where}: "
                              f"{getattr(error, 'message', None) or error}") from None
    if refused:
        raise TemplateProblem("; ".join(refused))
    spec = JudgeSpec(model="check", template=template, rubric_version="check")
    tasks = [*SAMPLES, *({"modality": m, "disease": d, "direction": r, "instruction": text}
                         for m, d, r in dict.fromkeys(kinds) for text in (SHORT, LONG))]
    for sample in tasks:
        text = render(spec, **sample).text
        if render(spec, **sample).text != text:
            raise TemplateProblem(
                "the prompt template renders a different prompt each time for the same edit "
                f"({sample['modality']}, {sample['disease']}, {sample['direction']}): a judge "
                "whose prompt changes between two asks is not one judge")
        missing = [name for name in ANSWER_FIELDS if name not in text]
        if missing:
            raise TemplateProblem("the rendered prompt never names " + ", ".join(missing) +
                                  ": the verdict parser reads these fields from the judge's "
                                  "answer")
        if sample["instruction"].strip() not in text:
            raise TemplateProblem("the rendered prompt does not contain the edit's instruction "
                                  "({{ instruction }}): the judge cannot rate compliance "
                                  "without it")
