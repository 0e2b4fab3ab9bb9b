"""Adjudication: a third reader decides the cases the study's readers left unresolved.

The adjudicator sees the earlier reads (each decision records that it did) but never the
judge, so the reference stays a human one. Decisions are append-only versions, idempotent by
submission id, and closed by the study lock, exactly like answers.
"""

from pydantic import Field
from sqlalchemy import func, select
from sqlmodel import Session, col

from app.errors import NotFound
from app.models import Role, User
from app.studies.answers import SUBMISSION_ID, Comment, RubricAnswers
from app.studies.design import StudyError
from app.studies.models import Adjudication, Design, Study, StudyAdjudicator, StudyItem, StudyReader
from app.studies.versions import append_version, commit_if_open, ensure_open
from app.studies.worklist import NotAssigned


class DecisionIn(RubricAnswers):
    comment: Comment = ""
    submission_id: str = Field(pattern=SUBMISSION_ID)


def assign_adjudicator(session: Session, study: Study, user: User) -> None:
    ensure_open(study)
    if not Design(study.design).rubric:
        raise StudyError("a real-or-edited study has a truth for every case: nothing to adjudicate")
    if user.role != Role.reader:
        raise StudyError("the adjudicator must be a reader account")
    is_reader = session.scalars(select(StudyReader).where(
        col(StudyReader.study_id) == study.id, col(StudyReader.user_id) == user.id)).first()
    if is_reader is not None:
        raise StudyError(f"{user.name} reads this study; the adjudicator must be a third reader")
    current = session.get(StudyAdjudicator, study.id)
    if current is None:
        session.add(StudyAdjudicator(study_id=study.id or 0, user_id=user.id or 0))
    else:
        current.user_id = user.id or 0
        session.add(current)
    commit_if_open(session, study)


def adjudicator_of(session: Session, study: Study) -> User | None:
    row = session.get(StudyAdjudicator, study.id)
    return session.get(User, row.user_id) if row else None


def require_adjudicator(session: Session, study: Study, user: User) -> None:
    adjudicator = adjudicator_of(session, study)
    if adjudicator is None or adjudicator.id != user.id:
        raise NotAssigned(f"{user.name} is not the adjudicator of study {study.name!r}")


def studies_to_adjudicate(session: Session, user: User) -> list[Study]:
    return list(session.scalars(select(Study).join(
        StudyAdjudicator, col(StudyAdjudicator.study_id) == Study.id)
        .where(col(StudyAdjudicator.user_id) == user.id).order_by(col(Study.id))))


def item_by_uid(session: Session, study: Study, uid: str) -> StudyItem:
    item = session.scalars(select(StudyItem).where(col(StudyItem.study_id) == study.id,
                                                  col(StudyItem.uid) == uid)).first()
    if item is None:
        raise NotFound("no such case in this study")
    return item


def latest_decisions(session: Session, study: Study) -> dict[int, Adjudication]:
    newest = (select(col(Adjudication.item_id), func.max(Adjudication.version).label("version"))
              .where(col(Adjudication.study_id) == study.id)
              .group_by(col(Adjudication.item_id)).subquery())
    query = select(Adjudication).join(newest, (newest.c.item_id == Adjudication.item_id)
                                      & (newest.c.version == Adjudication.version))
    return {a.item_id: a for a in session.scalars(query)}


def submit_decision(session: Session, study: Study, item: StudyItem, user: User,
                    decision: DecisionIn) -> Adjudication:
    def make(version: int) -> Adjudication:
        return Adjudication(study_id=study.id or 0, item_id=item.id or 0, user_id=user.id or 0,
                            version=version, **decision.model_dump())

    return append_version(session, study, Adjudication, "item_id", item.id or 0,
                          decision.submission_id, make)

