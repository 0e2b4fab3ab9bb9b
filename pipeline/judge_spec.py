"""A candidate judge as the pipeline runs it: which model, which prompt, how it thinks, and in
which order it sees the two images.

The default judge is prompts/judge.j2 with the paper's model. A candidate carries the full
text of its own prompt template, so a verdict always names exactly what produced it: the
spec's version hashes the template text with every setting that changes an answer.

A candidate's template is written in the browser, so it is rendered in Jinja's sandbox
(no attribute of a Python object beyond the plain data it is given), strictly (an unknown
variable is an error, never an empty string), and checked before it is kept: it must render
for a sample task and name every field the verdict parser reads.

A template is a program, and a short one can loop for hours or build a string of gigabytes.
Every render has a budget of elements its ranges and repetitions may make, and a longest
prompt; the check that keeps a template runs it in a child process of its own, with a CPU
time and a memory limit, so a template that escapes the budget (a filter's width, say)
costs the server a refusal, never a stuck request.
"""

import hashlib
import json
import os
import subprocess
import sys
from contextvars import ContextVar
from dataclasses import asdict, dataclass
from typing import Any

from jinja2 import StrictUndefined, TemplateError
from jinja2.runtime import Context
from jinja2.sandbox import MAX_RANGE, ImmutableSandboxedEnvironment, SecurityError

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
# Elements one render's ranges and repetitions ("x" * n, list * n) may make in all: a real
# prompt makes a few hundred.
WORK_BUDGET = 1_000_000
MAX_PROMPT = 200_000  # characters
# The check's child process: what it may spend before the template is refused.
CHECK_SECONDS = 2
CHECK_BYTES = 768 * 1024 * 1024

_spent: ContextVar[list[int] | None] = ContextVar("judge_template_work", default=None)


def _spend(elements: int) -> None:
    spent = _spent.get()
    if spent is None:
        return
    spent[0] += max(elements, 0)
    if spent[0] > WORK_BUDGET:
        raise SecurityError(f"the template makes more than {WORK_BUDGET:,} elements in its "
                            "ranges and repetitions")


def _range(*args: int) -> range:
    made = range(*args)
    if len(made) > MAX_RANGE:
        raise SecurityError(f"a range of more than {MAX_RANGE:,} items")
    _spend(len(made))
    return made


class _Bounded(ImmutableSandboxedEnvironment):
    """The sandbox, with repetition and powers counted against the render's budget."""

    intercepted_binops = frozenset({"*", "**"})

    def call_binop(self, context: Context, operator: str, left: Any, right: Any) -> Any:
        if operator == "**" and isinstance(right, int | float) and abs(right) > 64:
            raise SecurityError("a power above 64")
        if operator == "*":
            for sequence, times in ((left, right), (right, left)):
                if isinstance(sequence, str | list | tuple) and isinstance(times, int):
                    _spend(len(sequence) * times)
        return super().call_binop(context, operator, left, right)


_sandbox = _Bounded(undefined=StrictUndefined, trim_blocks=True, lstrip_blocks=True,
                    keep_trailing_newline=False, autoescape=False)
_sandbox.globals["range"] = _range


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
    budget = _spent.set([0])
    try:
        text = _sandbox.from_string(spec.template).render(context).strip()
    except TemplateError as error:
        raise TemplateProblem(_described(error)) from None
    except MemoryError:
        raise TemplateProblem("the prompt template does not render: it needs more memory than "
                              "any prompt should") from None
    except Exception as error:
        raise TemplateProblem(f"the prompt template does not render: {error}") from None
    finally:
        _spent.reset(budget)
    if len(text) > MAX_PROMPT:
        raise TemplateProblem(f"the rendered prompt is {len(text):,} characters; at most "
                              f"{MAX_PROMPT:,}")
    return Prompt("candidate", spec.version, text)


def check_template(template: str) -> None:
    """TemplateProblem unless ``template`` renders for a sample task and names every answer
    field and the instruction; rendered in a child process with a time and memory limit."""
    if not template.strip():
        raise TemplateProblem("the prompt template is empty")
    if len(template) > MAX_TEMPLATE:
        raise TemplateProblem(f"the prompt template is {len(template):,} characters; "
                              f"at most {MAX_TEMPLATE:,}")
    try:
        done = subprocess.run([sys.executable, "-m", "pipeline.judge_spec"], input=template,
                              capture_output=True, text=True, timeout=CHECK_SECONDS + 5,
                              env=os.environ | {"PYTHONPATH": _root()})
    except subprocess.TimeoutExpired:
        raise TemplateProblem(f"the prompt template did not render within {CHECK_SECONDS} s: "
                              "a loop too long?") from None
    problem = done.stdout.strip()
    if done.returncode == 0 and problem:
        raise TemplateProblem(problem)
    if done.returncode != 0:
        # Killed by its CPU limit (SIGXCPU), or out of its memory.
        raise TemplateProblem(f"the prompt template did not render within {CHECK_SECONDS} s of "
                              f"CPU and {CHECK_BYTES // 2**20} MB: a loop or a string too long?")


def _root() -> str:
    """The folder holding the pipeline package, for the child process to import it from."""
    here = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    return os.pathsep.join(p for p in (here, os.environ.get("PYTHONPATH", "")) if p)


def _check(template: str) -> None:
    """check_template's work, in this process."""
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


def _child() -> None:
    """The check's child process: the template from stdin; the problem, if any, on stdout."""
    import resource

    resource.setrlimit(resource.RLIMIT_CPU, (CHECK_SECONDS, CHECK_SECONDS + 1))
    resource.setrlimit(resource.RLIMIT_AS, (CHECK_BYTES, CHECK_BYTES))
    try:
        _check(sys.stdin.read())
    except TemplateProblem as problem:
        sys.stdout.write(str(problem))
    except MemoryError:
        sys.stdout.write(f"the prompt template needs more than {CHECK_BYTES // 2**20} MB to render")


if __name__ == "__main__":
    _child()
