"""One reader's reads of a study's known-answer cases, scored against the settled answers: what
the pause test reads after each answer. One reader's known-answer reads alone, never the
whole study: the check after an answer costs what that reader has read of them.

A read is the answer in force, as the figures take it (the newest version not withdrawn,
given before any reveal of the judge); "cannot assess" is not right.
"""

import json
from dataclasses import dataclass
from datetime import datetime

from sqlalchemy import func, select
from sqlmodel import Session, col

from app.studies.models import Answer, Assignment, Study, StudyItem
from app.studies.reader_models import KnownAnswer
from pipeline.vocabulary import QUESTIONS


@dataclass(frozen=True)
class KnownRead:
    item_id: int
    known_answer_id: int
    sequence: int
    answered_at: datetime
    right: int  # settled answers the reader gave
    asked: int  # settled answers the case has

    @property
    def share(self) -> float:
        return self.right / self.asked if self.asked else 0.0


def known_reads(session: Session, study: Study, user_id: int) -> list[KnownRead]:
    """The reader's known-answer reads in force, in their order."""
    newest = (select(col(Answer.assignment_id), func.max(Answer.version).label("version"))
              .join(Assignment, col(Assignment.id) == Answer.assignment_id)
              .join(StudyItem, col(StudyItem.id) == Assignment.item_id)
              .where(col(Assignment.study_id) == study.id, col(Assignment.user_id) == user_id,
                     col(StudyItem.known_answer_id).is_not(None),
                     col(Answer.after_reveal).is_(False))
              .group_by(col(Answer.assignment_id)).subquery())
    query = (select(col(Assignment.item_id), col(StudyItem.known_answer_id),
                    col(Assignment.sequence), col(Answer.created_at), col(KnownAnswer.answers),
                    *(col(getattr(Answer, q)) for q in QUESTIONS))
             .join(newest, (newest.c.assignment_id == Answer.assignment_id)
                   & (newest.c.version == Answer.version))
             .join(Assignment, col(Assignment.id) == Answer.assignment_id)
             .join(StudyItem, col(StudyItem.id) == Assignment.item_id)
             .join(KnownAnswer, col(KnownAnswer.id) == StudyItem.known_answer_id)
             .where(col(Answer.retracted).is_(False))
             .order_by(col(Assignment.sequence)))
    found = []
    for item_id, known_id, sequence, answered_at, settled_text, *given in session.execute(query):
        settled = json.loads(settled_text)
        answers = dict(zip(QUESTIONS, given, strict=True))
        found.append(KnownRead(item_id, known_id, sequence, answered_at,
                               sum(answers[q] == a for q, a in settled.items()), len(settled)))
    return found
