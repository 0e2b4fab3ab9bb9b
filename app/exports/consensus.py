"""The readers' consensus on every edit any study read: attempt id -> question -> pass (True),
fail (False) or unsettled (None). The first study (by id) that settled an edit gives it, as
the quality estimate does; a tie waits for the adjudicator."""

from sqlalchemy import select
from sqlmodel import Session, col

from app.agreement.reads import load
from app.agreement.report import settled_consensus
from app.studies.design_traits import rubric_kinds
from app.studies.models import Study, StudyItem, StudyStatus

Consensus = dict[str, bool | None]


def consensus_by_attempt(session: Session, *, locked_only: bool = False) -> dict[int, Consensus]:
    """``locked_only``: only studies whose answers can no longer change (the DICOM report's)."""
    found: dict[int, Consensus] = {}
    if locked_only and session.scalar(select(col(Study.id)).where(
            col(Study.status) == StudyStatus.locked.value).limit(1)) is None:
        return found  # nothing to read, and the designs need not be loaded to learn it
    query = select(Study).where(col(Study.design).in_(rubric_kinds()))
    if locked_only:
        query = query.where(col(Study.status) == StudyStatus.locked.value)
    studies = session.scalars(query.order_by(col(Study.id)))
    for study in list(studies):
        attempt_of = {item_id: attempt_id for item_id, attempt_id in session.execute(
            select(col(StudyItem.id), col(StudyItem.attempt_id))
            .where(col(StudyItem.study_id) == study.id))}
        for item_id, answers in settled_consensus(load(session, study)).items():
            attempt_id = attempt_of.get(item_id)
            if attempt_id is not None:
                settled = found.setdefault(attempt_id, {})
                for question, value in answers.items():
                    settled.setdefault(question, value)
    return found
