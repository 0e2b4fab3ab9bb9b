"""The rubric in words: what each question asks, what "yes" means, and typical failures per
modality, read from prompts/rubric.toml.

One definition serves the judge prompt (judge.j2 renders it) and every screen and report that
asks a person the same questions, so the model and the readers are never asked two different
things. The names and order of the questions stay in `pipeline.vocabulary`.
"""

import tomllib
from dataclasses import dataclass
from functools import cache
from importlib.resources import files

from pipeline.vocabulary import LABELS, QUESTIONS, WEIGHTS, Dimension

RUBRIC_FILE = "rubric.toml"  # beside the prompt templates, shipped with them
# The rubric's entries: the five questions, then the reader's confidence.
ENTRIES = (*QUESTIONS, "confidence")
MODALITIES = ("chest_xray", "brain_mri", "fundus")


@dataclass(frozen=True)
class Question:
    name: str
    label: str
    definition: str
    yes_means: str
    weight: float | None  # the dimension's share of the judge's weighted score
    failures: dict[str, tuple[str, ...]]  # modality -> typical failures

    def failures_for(self, modality: str) -> tuple[str, ...]:
        return self.failures.get(modality, ())


@cache
def rubric() -> dict[str, Question]:
    """Every entry of the rubric, by name, in the vocabulary's order. A missing entry or an
    unknown modality is an error in the shipped file, raised when first read."""
    raw = tomllib.loads((files("pipeline.prompt_templates") / RUBRIC_FILE).read_text(encoding="utf-8"))
    unknown = set(raw) - set(ENTRIES)
    missing = set(ENTRIES) - set(raw)
    if unknown or missing:
        raise ValueError(f"{RUBRIC_FILE}: unknown {sorted(unknown)}, missing {sorted(missing)}")
    questions = {}
    for name in ENTRIES:
        entry = raw[name]
        failures = entry.get("failures", {})
        if set(failures) - set(MODALITIES):
            raise ValueError(f"{RUBRIC_FILE}: [{name}.failures] names an unknown modality")
        weight = WEIGHTS.get(Dimension(name)) if name in Dimension.__members__ else None
        questions[name] = Question(
            name=name, label=LABELS.get(name, name.capitalize()), definition=entry["definition"],
            yes_means=entry["yes_means"], weight=weight,
            failures={m: tuple(f) for m, f in failures.items()})
    return questions
