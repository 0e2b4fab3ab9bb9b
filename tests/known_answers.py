"""A reader's known-answer cases in a study, as the tests answer them."""

import json

from sqlalchemy.engine import Engine
from sqlmodel import Session, col, select

from app.studies.models import Assignment, StudyItem
from app.studies.reader_models import KnownAnswer


def settled_by_sequence(engine: Engine, study_id: int, user_id: int) -> dict[int, dict[str, str]]:
    """The reader's known-answer reads: place in their list -> the settled answers."""
    with Session(engine) as session:
        rows = session.execute(select(col(Assignment.sequence), col(KnownAnswer.answers))
                               .join(StudyItem, col(StudyItem.id) == Assignment.item_id)
                               .join(KnownAnswer, col(KnownAnswer.id) == StudyItem.known_answer_id)
                               .where(col(Assignment.study_id) == study_id,
                                      col(Assignment.user_id) == user_id)).all()
    return {sequence: json.loads(answers) for sequence, answers in rows}
