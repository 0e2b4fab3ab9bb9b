"""A study's cases and reads, as plain values for the statistics: no ORM objects leave here.

Each read is the answer in force (the newest version, unless it was withdrawn). A case's
judge answers come from the newest verdict of the attempt that was read; "overall" is the
judge's qualified verdict and the reader's accept / reject.
"""

import json
from dataclasses import dataclass, field

from sqlalchemy import func, select
from sqlmodel import Session, col

from app.adjudication import latest_decisions
from app.agreement.stats import Vote
from app.models import Attempt, JudgeVerdict, Task, User
from app.study_models import Answer, Assignment, Study, StudyItem

DIMENSIONS = ("compliance", "structure", "realism", "fidelity")
QUESTIONS = (*DIMENSIONS, "overall")
CANNOT_ASSESS = "cannot_assess"


def vote(answer: str | None) -> Vote:
    """yes / accept pass, no / reject fail; "cannot assess" and nothing are no vote at all."""
    if answer in ("yes", "accept"):
        return True
    if answer in ("no", "reject"):
        return False
    return None


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
    judge: dict[str, Vote] = field(default_factory=dict)  # empty: the judge gave no verdict


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


@dataclass(frozen=True)
class StudyReads:
    cases: list[Case]
    reads: list[Read]
    readers: list[str]
    # The adjudicator's newest decision per case, as given: settles only reader ties.
    decisions: dict[int, dict[str, str]] = field(default_factory=dict)


def load(session: Session, study: Study) -> StudyReads:
    cases = _cases(session, study)
    newest = (select(col(Answer.assignment_id), func.max(Answer.version).label("version"))
              .join(Assignment, col(Assignment.id) == Answer.assignment_id)
              .where(col(Assignment.study_id) == study.id)
              .group_by(col(Answer.assignment_id)).subquery())
    query = (select(Answer, Assignment, col(User.name))
             .join(newest, (newest.c.assignment_id == Answer.assignment_id)
                   & (newest.c.version == Answer.version))
             .join(Assignment, col(Assignment.id) == Answer.assignment_id)
             .join(User, col(User.id) == Assignment.user_id))
    reads = [Read(item_id=assignment.item_id, reader=name,
                  answers={q: getattr(answer, q) for q in QUESTIONS},
                  repeat=assignment.repeat_of is not None,
                  time_on_case_ms=answer.time_on_case_ms, version=answer.version,
                  confidence=answer.confidence, tags=tuple(json.loads(answer.tags)),
                  comment=answer.comment)
             for answer, assignment, name in session.execute(query) if not answer.retracted]
    readers = sorted(session.scalars(
        select(col(User.name)).join(Assignment, col(Assignment.user_id) == User.id)
        .where(col(Assignment.study_id) == study.id).distinct()))
    decisions = {item_id: {q: getattr(d, q) for q in QUESTIONS}
                 for item_id, d in latest_decisions(session, study).items()}
    return StudyReads(cases, reads, readers, decisions)


def _cases(session: Session, study: Study) -> list[Case]:
    read = select(col(StudyItem.attempt_id)).where(col(StudyItem.study_id) == study.id)
    newest = (select(col(JudgeVerdict.attempt_id), func.max(JudgeVerdict.id).label("id"))
              .where(col(JudgeVerdict.attempt_id).in_(read))
              .group_by(col(JudgeVerdict.attempt_id)).subquery())
    query = (select(StudyItem, Task, col(Attempt.round), JudgeVerdict)
             .join(Task, col(Task.id) == StudyItem.task_id)
             .join(Attempt, col(Attempt.id) == StudyItem.attempt_id)
             .outerjoin(newest, newest.c.attempt_id == StudyItem.attempt_id)
             .outerjoin(JudgeVerdict, col(JudgeVerdict.id) == newest.c.id)
             .where(col(StudyItem.study_id) == study.id).order_by(col(StudyItem.id)))
    found = []
    for item, task, round_, verdict in session.execute(query):
        judge: dict[str, Vote] = {}
        if verdict is not None and verdict.error is None:
            judge = {d: getattr(verdict, d) for d in DIMENSIONS} | {"overall": verdict.qualified}
        found.append(Case(item_id=item.id or 0, uid=item.uid, task_id=task.id or 0,
                          task_key=task.task_key, source_image_id=task.source_image_id,
                          modality=task.modality, disease=task.disease, direction=task.direction,
                          round=round_, judge=judge))
    return found
