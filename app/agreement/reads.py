"""A study's cases and reads, as plain values for the statistics: no ORM objects leave here.

Each read is the answer in force (the newest version, unless it was withdrawn; in a study that
reveals the judge, the newest given before the reveal). A case's judge
answers come from the verdict frozen on its study item when the study was made, and from
nothing else, so a later re-judgement never moves a study's figures. Every other readable
verdict of the same attempts is grouped by the judge that gave it (model and prompt version)
and offered as a separate comparison ("judge B"). "overall" is the judge's qualified
verdict and the reader's accept / reject.
"""

import json
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from sqlalchemy import func, select
from sqlmodel import Session, col

from app.agreement.case_weights import weights_of_cases
from app.agreement.stats import Vote
from app.errors import Conflict
from app.models import IMPORTED_PROMPT_VERSION, Attempt, JudgeVerdict, Task, User
from app.studies.adjudication import latest_decisions
from app.studies.models import Answer, Assignment, Design, Study, StudyItem, in_figures
from pipeline.vocabulary import DIMENSIONS, QUESTIONS

CANNOT_ASSESS = "cannot_assess"


def vote(answer: str | None) -> Vote:
    """yes / accept pass, no / reject fail; "cannot assess" and nothing are no vote at all."""
    if answer in ("yes", "accept"):
        return True
    if answer in ("no", "reject"):
        return False
    return None


# A verdict's columns as the figures read them: thousands of rows, so columns, not ORM
# objects (building those was most of a 1,000-case study's load). The queries below run on
# the session's connection, not through the ORM, whose per-row handling of plain columns
# was a third of what was left.
VERDICT_VOTES = (col(JudgeVerdict.id), col(JudgeVerdict.error),
                 *(col(getattr(JudgeVerdict, d)) for d in DIMENSIONS), col(JudgeVerdict.qualified))


def judge_votes(columns: tuple[Any, ...]) -> dict[str, Vote]:
    """A verdict's answer to each question, from its VERDICT_VOTES columns; empty when there
    is none (an outer join's NULL id) or it could not be read."""
    verdict_id, error, *answers = columns
    if verdict_id is None or error is not None:
        return {}
    return dict(zip((*DIMENSIONS, "overall"), answers, strict=True))


def judge_label(model: str | None, prompt_version: str | None) -> str:
    """Who gave a verdict. Imported verdicts are the run's own judge, whose model the run's
    files do not record."""
    if prompt_version == IMPORTED_PROMPT_VERSION or (model is None and prompt_version is None):
        return "imported: the run's own judge (model not recorded)"
    return f"{model or 'unknown model'} · prompt {prompt_version or 'unknown'}"


@dataclass(frozen=True)
class Case:
    item_id: int
    uid: str
    task_id: int
    task_key: str
    source_image_id: int | None
    modality: str
    disease: str
    direction: str
    round: int
    stratum: str = ""
    judge: dict[str, Vote] = field(default_factory=dict)  # empty: no readable frozen verdict
    judge_verdict_id: int | None = None
    assigned: tuple[str, ...] = ()  # readers with a first read of this case in their list
    # What the case weighs in figures that estimate the pool (1: every case alike): its
    # stratum's weight, or the inverse probabilities of the draws that brought it.
    weight: float = 1.0

    @property
    def cluster(self) -> object:
        return self.source_image_id if self.source_image_id is not None else f"task-{self.task_id}"


@dataclass(frozen=True)
class Read:
    item_id: int
    reader: str
    answers: dict[str, str]  # as given: yes / no / cannot_assess, accept / reject
    repeat: bool  # the hidden second read of a case, for intra-reader agreement
    time_on_case_ms: int | None
    version: int
    confidence: int = 0
    tags: tuple[str, ...] = ()
    comment: str = ""
    answered_at: datetime | None = None
    # The image tools used on the read: tool -> {"uses": n, "ms": t} (app/studies/viewer_tools.py).
    tool_use: dict[str, dict[str, int]] = field(default_factory=dict)


@dataclass(frozen=True)
class JudgeIdentity:
    model: str | None
    prompt_version: str | None

    @property
    def label(self) -> str:
        return judge_label(self.model, self.prompt_version)


@dataclass(frozen=True)
class StudyReads:
    cases: list[Case]
    reads: list[Read]
    readers: list[str]
    # The adjudicator's newest decision per case, as given: settles only reader ties.
    decisions: dict[int, dict[str, str]] = field(default_factory=dict)
    # The frozen verdicts' judges (normally one), and every other judge's first readable
    # verdict per case: judge label -> item id -> answers.
    judges: dict[str, int] = field(default_factory=dict)
    judge_b: dict[str, dict[int, dict[str, Vote]]] = field(default_factory=dict)


def require_rubric(study: Study) -> None:
    """Conflict, naming the design's own page, for a study whose readers do not answer the
    rubric (no judge to compare): checked before any byte of a download is sent."""
    design = Design(study.design)
    if not design.rubric:
        raise Conflict(f"study {study.name!r} is a {design.label} study: its readers answer no "
                       "rubric, so it has no judge agreement; its figures are at "
                       f"/studies/{study.id}/{design.figures_path}, and every answer in "
                       f"/studies/{study.id}/answers.csv")


def load(session: Session, study: Study) -> StudyReads:
    require_rubric(study)
    cases = _cases(session, study)
    # A version given after the study revealed the judge is kept, and shown in the exports,
    # but never counted: the figures are of judgements made blind to the verdict.
    newest = (select(col(Answer.assignment_id), func.max(Answer.version).label("version"))
              .join(Assignment, col(Assignment.id) == Answer.assignment_id)
              .where(col(Assignment.study_id) == study.id, col(Answer.after_reveal).is_(False))
              .group_by(col(Answer.assignment_id)).subquery())
    query = (select(col(Assignment.item_id), col(User.name), col(Assignment.repeat_of),
                    col(Answer.time_on_case_ms), col(Answer.version), col(Answer.confidence),
                    col(Answer.tags), col(Answer.comment), col(Answer.created_at),
                    col(Answer.tool_use), *(col(getattr(Answer, q)) for q in QUESTIONS))
             .join(newest, (newest.c.assignment_id == Answer.assignment_id)
                   & (newest.c.version == Answer.version))
             .join(Assignment, col(Assignment.id) == Answer.assignment_id)
             .join(StudyItem, col(StudyItem.id) == Assignment.item_id)
             .join(User, col(User.id) == Assignment.user_id)
             .where(col(Answer.retracted).is_(False), in_figures()))
    reads = [Read(item_id=item_id, reader=name, answers=dict(zip(QUESTIONS, answers, strict=True)),
                  repeat=repeat_of is not None, time_on_case_ms=time_ms, version=version,
                  confidence=confidence, tags=tuple(json.loads(tags)), comment=comment,
                  answered_at=created_at, tool_use=json.loads(tool_use) if tool_use else {})
             for (item_id, name, repeat_of, time_ms, version, confidence, tags, comment, created_at,
                  tool_use, *answers) in session.connection().execute(query)]
    readers = sorted(session.scalars(
        select(col(User.name)).join(Assignment, col(Assignment.user_id) == User.id)
        .where(col(Assignment.study_id) == study.id).distinct()))
    decisions = {item_id: {q: getattr(d, q) for q in QUESTIONS}
                 for item_id, d in latest_decisions(session, study).items()}
    judges, others = _judges(session, study, cases)
    return StudyReads(cases, reads, readers, decisions, judges, others)


def _assigned(session: Session, study: Study) -> dict[int, tuple[str, ...]]:
    query = (select(col(Assignment.item_id), col(User.name))
             .join(User, col(User.id) == Assignment.user_id)
             .join(StudyItem, col(StudyItem.id) == Assignment.item_id)
             .where(col(Assignment.study_id) == study.id, col(Assignment.repeat_of).is_(None),
                    in_figures()))
    found: dict[int, list[str]] = {}
    for item_id, name in session.connection().execute(query):
        found.setdefault(item_id, []).append(name)
    return {item_id: tuple(sorted(names)) for item_id, names in found.items()}


def _cases(session: Session, study: Study) -> list[Case]:
    query = (select(col(StudyItem.id), col(StudyItem.uid), col(StudyItem.stratum),
                    col(StudyItem.judge_verdict_id), col(Task.id), col(Task.task_key),
                    col(Task.source_image_id), col(Task.modality), col(Task.disease),
                    col(Task.direction), col(Attempt.round), *VERDICT_VOTES)
             .join(Task, col(Task.id) == StudyItem.task_id)
             .join(Attempt, col(Attempt.id) == StudyItem.attempt_id)
             .outerjoin(JudgeVerdict, col(JudgeVerdict.id) == StudyItem.judge_verdict_id)
             .where(col(StudyItem.study_id) == study.id, in_figures()).order_by(col(StudyItem.id)))
    assigned = _assigned(session, study)
    weigh = weights_of_cases(session, study)
    # Typed loosely: the ids are the rows' own, never None, whatever the models' defaults say.
    rows: Any = session.connection().execute(query)
    return [Case(item_id=item_id, uid=uid, task_id=task_id, task_key=task_key,
                 source_image_id=source_id, modality=modality, disease=disease,
                 direction=direction, round=round_, stratum=stratum,
                 judge=judge_votes(tuple(verdict)), judge_verdict_id=verdict_of_item,
                 assigned=assigned.get(item_id, ()), weight=weigh(item_id, stratum))
            for (item_id, uid, stratum, verdict_of_item, task_id, task_key, source_id, modality,
                 disease, direction, round_, *verdict) in rows]


def _judges(session: Session, study: Study,
            cases: list[Case]) -> tuple[dict[str, int], dict[str, dict[int, dict[str, Vote]]]]:
    """How many items each frozen judge holds, and the other judges' verdicts per item."""
    query = (select(col(StudyItem.id), col(StudyItem.judge_verdict_id), col(JudgeVerdict.model),
                    col(JudgeVerdict.prompt_version), *VERDICT_VOTES)
             .join(JudgeVerdict, col(JudgeVerdict.attempt_id) == StudyItem.attempt_id)
             .where(col(StudyItem.study_id) == study.id, in_figures())
             .order_by(col(JudgeVerdict.id)))
    frozen: dict[str, int] = {}
    others: dict[str, dict[int, dict[str, Vote]]] = {}
    for item_id, frozen_id, model, prompt_version, *verdict in session.connection().execute(query):
        label = judge_label(model, prompt_version)
        if verdict[0] == frozen_id:
            frozen[label] = frozen.get(label, 0) + 1
            continue
        answers = judge_votes(tuple(verdict))
        if answers:  # a judge's first readable verdict on the item; later ones are re-runs
            others.setdefault(label, {}).setdefault(item_id, answers)
    return frozen, others
