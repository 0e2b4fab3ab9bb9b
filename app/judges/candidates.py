"""Making and reading candidate judges: every value checked, the template rendered once in the
sandbox before it is kept, and the spec the pipeline runs built from the stored row."""

import difflib
import hashlib
import json
import re
from collections.abc import Sequence
from dataclasses import dataclass

from sqlalchemy import select
from sqlmodel import Session, col

from app.errors import Invalid, NotFound
from app.judges.models import JudgeCandidate
from app.models import Task
from pipeline.judge_spec import (
    OFFLINE_BIASES,
    JudgeSpec,
    TemplateProblem,
    check_template,
    default_template,
)
from pipeline.prompts import PROMPTS_DIR
from pipeline.rubric import RUBRIC_FILE

BACKENDS = ("offline", "gemini")
MAX_REPEATS = 5
# Gemini 2.5's thinking budgets: -1 lets the model choose; Pro thinks at least 128 tokens.
THINKING = (-1, 32_768)
TEMPERATURE = (0.0, 2.0)
NAME = re.compile(r"^[\w .,:()+/-]{1,100}$")


def rubric_version() -> str:
    """12 hex digits of the rubric file every judge prompt renders."""
    return hashlib.sha256((PROMPTS_DIR / RUBRIC_FILE).read_bytes()).hexdigest()[:12]


@dataclass(frozen=True)
class CandidatePlan:
    """A candidate as a form or the CLI gives it, before any check."""

    name: str
    backend: str
    model: str
    template: str
    repeats: int = 1
    thinking_budget: int | None = None
    temperature: float | None = None
    bias: str | None = None
    note: str = ""


def spec_of(candidate: JudgeCandidate, *, original_first: bool = False) -> JudgeSpec:
    return JudgeSpec(model=candidate.model, template=candidate.template,
                     rubric_version=candidate.rubric_version,
                     thinking_budget=candidate.thinking_budget, temperature=candidate.temperature,
                     original_first=original_first, bias=candidate.bias)


def data_kinds(session: Session) -> list[tuple[str, str, str]]:
    """Every (modality, disease, direction) of the data's tasks: what a template is checked on."""
    return [(m, d, r) for m, d, r in session.execute(
        select(col(Task.modality), col(Task.disease), col(Task.direction)).distinct()
        .order_by(col(Task.modality), col(Task.disease), col(Task.direction)))]


def checked(plan: CandidatePlan, kinds: Sequence[tuple[str, str, str]] = ()) -> CandidatePlan:
    """The plan, or Invalid naming the field at fault and why; its template is checked on
    every sample task and every one of ``kinds`` (data_kinds)."""
    name = plan.name.strip()
    if not NAME.match(name):
        raise Invalid("name the candidate in 1 to 100 letters, digits, spaces or . , : ( ) + / -",
                      "name")
    if plan.backend not in BACKENDS:
        raise Invalid(f"the backend is one of {', '.join(BACKENDS)}", "backend")
    model = plan.model.strip()
    if not model or len(model) > 100 or not re.match(r"^[\w.\-/:]+$", model):
        raise Invalid("give the model's name, as the API names it (e.g. gemini-2.5-pro)", "model")
    if not 1 <= plan.repeats <= MAX_REPEATS:
        raise Invalid(f"repeats are 1 to {MAX_REPEATS}", "repeats")
    if plan.thinking_budget is not None and not THINKING[0] <= plan.thinking_budget <= THINKING[1]:
        raise Invalid(f"the thinking budget is {THINKING[0]} (the model decides) to "
                      f"{THINKING[1]:,} tokens, or empty for the model's default", "thinking_budget")
    if plan.temperature is not None and not TEMPERATURE[0] <= plan.temperature <= TEMPERATURE[1]:
        raise Invalid(f"the temperature is {TEMPERATURE[0]:g} to {TEMPERATURE[1]:g}, or empty for "
                      "the model's default", "temperature")
    bias = plan.bias or None
    if bias is not None and (plan.backend != "offline" or bias not in OFFLINE_BIASES):
        raise Invalid("a built-in fault is for the offline backend only, one of "
                      f"{', '.join(OFFLINE_BIASES)}", "bias")
    if len(plan.note) > 2000:
        raise Invalid("the note is at most 2,000 characters", "note")
    try:
        check_template(plan.template, kinds)
    except TemplateProblem as problem:
        raise Invalid(str(problem), "template") from None
    return CandidatePlan(name, plan.backend, model, plan.template, plan.repeats,
                         plan.thinking_budget, plan.temperature, bias, plan.note.strip())


def create_candidate(session: Session, plan: CandidatePlan, created_by: int | None) -> JudgeCandidate:
    candidate = add_candidate(session, checked(plan, data_kinds(session)), created_by)
    session.commit()
    session.refresh(candidate)
    return candidate


def add_candidate(session: Session, good: CandidatePlan, created_by: int | None) -> JudgeCandidate:
    """A plan already ``checked``, written in the caller's transaction (flushed, not
    committed); Invalid when its name is taken."""
    if session.scalar(select(col(JudgeCandidate.id)).where(col(JudgeCandidate.name) == good.name)):
        raise Invalid(f"a candidate is already named {good.name!r}", "name")
    candidate = JudgeCandidate(name=good.name, backend=good.backend, model=good.model,
                               template=good.template, version="", rubric_version=rubric_version(),
                               thinking_budget=good.thinking_budget, temperature=good.temperature,
                               repeats=good.repeats, bias=good.bias, note=good.note,
                               created_by=created_by)
    candidate.version = spec_of(candidate).version
    session.add(candidate)
    session.flush()
    return candidate


PANEL_RULES = ("majority", "stacked")


def create_panel(session: Session, name: str, member_ids: list[int], rule: str,
                 created_by: int | None) -> JudgeCandidate:
    """A panel of scored candidates: a candidate itself, whose answers are its members'."""
    name = name.strip()
    if not NAME.match(name):
        raise Invalid("name the panel in 1 to 100 letters, digits, spaces or . , : ( ) + / -", "name")
    if rule not in PANEL_RULES:
        raise Invalid(f"the rule is one of {', '.join(PANEL_RULES)}", "rule")
    chosen = list(dict.fromkeys(member_ids))
    members = [session.get(JudgeCandidate, m) for m in chosen]
    if len(chosen) < 2 or any(m is None for m in members):
        raise Invalid("choose at least two candidates", "members")
    if any(m is not None and m.members for m in members):
        raise Invalid("a panel's members are candidates, not panels", "members")
    if session.scalar(select(col(JudgeCandidate.id)).where(col(JudgeCandidate.name) == name)):
        raise Invalid(f"a candidate is already named {name!r}", "name")
    names = ", ".join(m.name for m in members if m is not None)
    versions = "/".join(m.version for m in members if m is not None)
    panel = JudgeCandidate(
        name=name, backend="panel", model="panel", version=hashlib.sha256(
            f"{rule}:{versions}".encode()).hexdigest()[:12],
        template=f"A panel of {names}, combined by {rule} rule.", rubric_version=rubric_version(),
        members=json.dumps(chosen), rule=rule, created_by=created_by)
    session.add(panel)
    session.commit()
    session.refresh(panel)
    return panel


def get_candidate(session: Session, candidate_id: int) -> JudgeCandidate:
    found = session.get(JudgeCandidate, candidate_id)
    if found is None:
        raise NotFound(f"no candidate judge {candidate_id}")
    return found


def candidates(session: Session) -> list[JudgeCandidate]:
    return list(session.scalars(select(JudgeCandidate).order_by(col(JudgeCandidate.id))))


def candidate_names(session: Session, ids: list[int]) -> dict[int, str]:
    """Candidate id -> name, for the ids that exist."""
    if not ids:
        return {}
    return {i: n for i, n in session.execute(select(col(JudgeCandidate.id), col(JudgeCandidate.name))
                                             .where(col(JudgeCandidate.id).in_(ids))) if i is not None}


def template_hash(template: str) -> str:
    """12 hex digits of the template text alone, to tell two texts apart at a glance."""
    return hashlib.sha256(template.encode()).hexdigest()[:12]


def diff_from_default(template: str) -> list[tuple[str, str]]:
    """The template against the judge of record's (prompts/judge.j2), line by line: ("+",
    line) added, ("-", line) removed, ("@", hunk) where a hunk starts; empty when equal."""
    lines = difflib.unified_diff(default_template().splitlines(), template.splitlines(),
                                 "prompts/judge.j2", "this candidate", lineterm="", n=2)
    found = []
    for line in list(lines)[2:]:
        kind = line[:1] if line[:1] in "+-@" else " "
        found.append((kind, line[1:] if kind in "+- " else line))
    return found


__all__ = [
    "BACKENDS",
    "OFFLINE_BIASES",
    "PANEL_RULES",
    "CandidatePlan",
    "add_candidate",
    "candidate_names",
    "candidates",
    "checked",
    "create_candidate",
    "create_panel",
    "data_kinds",
    "default_template",
    "diff_from_default",
    "get_candidate",
    "rubric_version",
    "spec_of",
    "template_hash",
]
