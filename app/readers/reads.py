"""Every reader's reads of one study as plain values, known-answer cases included, each at its
place in the reader's order: what the checks on the readers are computed from.

A read is the answer in force, as the figures take it (the newest version not withdrawn, given
before any reveal of the judge).
"""

import json
from dataclasses import dataclass
from datetime import datetime

from sqlalchemy import func, select
from sqlmodel import Session, col

from app.models import User
from app.studies.models import Answer, Assignment, Study, StudyItem
from app.studies.reader_models import KnownAnswer
from pipeline.vocabulary import QUESTIONS


@dataclass(frozen=True)
class ReaderRead:
    reader: str
    user_id: int
    item_id: int
    sequence: int
    answers: dict[str, str]
    confidence: int
    time_ms: int | None
    answered_at: datetime
    repeat: bool
    settled: dict[str, str] | None  # a known-answer case's settled answers; None otherwise

    @property
    def known(self) -> bool:
        return self.settled is not None


def study_reads(session: Session, study: Study) -> list[ReaderRead]:
    """Every reader's reads in force, in each reader's order."""
    newest = (select(col(Answer.assignment_id), func.max(Answer.version).label("version"))
              .join(Assignment, col(Assignment.id) == Answer.assignment_id)
              .where(col(Assignment.study_id) == study.id, col(Answer.after_reveal).is_(False))
              .group_by(col(Answer.assignment_id)).subquery())
    query = (select(col(User.name), col(User.id), col(Assignment.item_id), col(Assignment.sequence),
                    col(Assignment.repeat_of), col(Answer.confidence), col(Answer.time_on_case_ms),
                    col(Answer.created_at), col(KnownAnswer.answers),
                    *(col(getattr(Answer, q)) for q in QUESTIONS))
             .join(newest, (newest.c.assignment_id == Answer.assignment_id)
                   & (newest.c.version == Answer.version))
             .join(Assignment, col(Assignment.id) == Answer.assignment_id)
             .join(StudyItem, col(StudyItem.id) == Assignment.item_id)
             .outerjoin(KnownAnswer, col(KnownAnswer.id) == StudyItem.known_answer_id)
             .join(User, col(User.id) == Assignment.user_id)
             .where(col(Answer.retracted).is_(False))
             .order_by(col(User.name), col(Assignment.sequence)))
    return [ReaderRead(reader=name, user_id=user_id, item_id=item_id, sequence=sequence,
                       answers=dict(zip(QUESTIONS, answers, strict=True)), confidence=confidence,
                       time_ms=time_ms, answered_at=answered_at, repeat=repeat_of is not None,
                       settled=json.loads(settled) if settled else None)
            for (name, user_id, item_id, sequence, repeat_of, confidence, time_ms, answered_at,
                 settled, *answers) in session.connection().execute(query)]


def assigned_readers(session: Session, study: Study) -> dict[int, set[int]]:
    """Item id -> the readers with a first read of it in their list."""
    found: dict[int, set[int]] = {}
    for item_id, user_id in session.execute(select(col(Assignment.item_id), col(Assignment.user_id))
                                            .where(col(Assignment.study_id) == study.id,
                                                   col(Assignment.repeat_of).is_(None))):
        found.setdefault(item_id, set()).add(user_id)
    return found


def listed_reads(session: Session, study: Study) -> dict[int, int]:
    """User id -> the reads in their list."""
    return {user_id: int(count) for user_id, count in session.execute(
        select(col(Assignment.user_id), func.count()).where(col(Assignment.study_id) == study.id)
        .group_by(col(Assignment.user_id)))}
