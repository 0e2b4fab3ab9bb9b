"""Adjudication: a third reader decides the cases the study's readers left unresolved.

The adjudicator sees the earlier reads (each decision records that it did) but never the
judge, so the reference stays a human one. Decisions are append-only versions, idempotent by
submission id, and closed by the study lock, exactly like answers.
"""

from pydantic import BaseModel, Field
from sqlalchemy import func, select
from sqlalchemy.exc import IntegrityError
from sqlmodel import Session, col

from app.errors import NotFound
from app.models import Role, User
from app.studies.answers import DimensionAnswer, Overall, SubmissionIdReused, commit_if_open, ensure_open
from app.studies.design import StudyError
from app.studies.models import Adjudication, Study, StudyAdjudicator, StudyItem, StudyReader
from app.studies.worklist import NotAssigned

VERSION_RETRIES = 5


class DecisionIn(BaseModel):
    compliance: DimensionAnswer
    structure: DimensionAnswer
    realism: DimensionAnswer
    fidelity: DimensionAnswer
    overall: Overall
    comment: str = Field(default="", max_length=5000)
    submission_id: str = Field(pattern=r"^[A-Za-z0-9_-]{8,64}$")


def assign_adjudicator(session: Session, study: Study, user: User) -> None:
    ensure_open(study)
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
    ensure_open(study)
    for _ in range(VERSION_RETRIES):
        existing = session.scalars(select(Adjudication).where(
            col(Adjudication.submission_id) == decision.submission_id)).first()
        if existing is not None:
            if existing.item_id != item.id:
                raise SubmissionIdReused(f"submission id {decision.submission_id!r} was already "
                                         "used for another case; send a new one")
            return existing
        version = int(session.scalar(select(func.coalesce(func.max(Adjudication.version), 0))
                                     .where(col(Adjudication.item_id) == item.id)) or 0) + 1
        row = Adjudication(study_id=study.id or 0, item_id=item.id or 0, user_id=user.id or 0,
                           version=version, **decision.model_dump())
        session.add(row)
        try:
            commit_if_open(session, study)
        except IntegrityError:
            session.rollback()
            continue
        session.refresh(row)
        return row
    raise RuntimeError("could not store the decision after repeated version conflicts")

