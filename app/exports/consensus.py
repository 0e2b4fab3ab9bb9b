"""The readers' consensus on every edit any study read: attempt id -> question -> pass (True),
fail (False) or unsettled (None). The first study (by id) that settled an edit gives it, as
the quality estimate does; a tie waits for the adjudicator."""

from sqlalchemy import select
from sqlmodel import Session, col

from app.agreement.reads import load
from app.agreement.report import first_reads, question_data
from app.studies.models import Study, StudyItem
from pipeline.vocabulary import QUESTIONS

Consensus = dict[str, bool | None]


def consensus_by_attempt(session: Session) -> dict[int, Consensus]:
    found: dict[int, Consensus] = {}
    for study in list(session.scalars(select(Study).order_by(col(Study.id)))):
        attempt_of = {item_id: attempt_id for item_id, attempt_id in session.execute(
            select(col(StudyItem.id), col(StudyItem.attempt_id))
            .where(col(StudyItem.study_id) == study.id))}
        data = load(session, study)
        if not data.reads:
            continue
        reads = first_reads(data.reads)
        for question in QUESTIONS:
            table = question_data(data.cases, data.readers, reads, data.decisions, question)
            for case, (value, decided) in zip(data.cases, table.reference(), strict=True):
                attempt_id = attempt_of.get(case.item_id)
                if attempt_id is None or not decided.resolved or value is None:
                    continue
                answers = found.setdefault(attempt_id, {})
                answers.setdefault(question, bool(value))
    return found
