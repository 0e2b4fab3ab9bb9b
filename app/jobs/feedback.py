"""The readers' word on a task's earlier edits, for refinement prompts that learn from them.

Only the answer in force of each read counts (withdrawn answers do not); readers are named
by number, never by account, since the text goes to a model.
"""

import json
from typing import Any

from sqlalchemy import func, select
from sqlalchemy.engine import Engine
from sqlmodel import Session, col

from app.studies.models import Answer, Assignment, StudyItem


def reader_feedback(engine: Engine, task_id: int) -> list[dict[str, Any]]:
    newest = (select(col(Answer.assignment_id), func.max(Answer.version).label("version"))
              .group_by(col(Answer.assignment_id)).subquery())
    query = (select(Answer, col(Assignment.user_id))
             .join(newest, (newest.c.assignment_id == Answer.assignment_id)
                   & (newest.c.version == Answer.version))
             .join(Assignment, col(Assignment.id) == Answer.assignment_id)
             .join(StudyItem, col(StudyItem.id) == Assignment.item_id)
             .where(col(StudyItem.task_id) == task_id, col(Answer.retracted).is_(False))
             .order_by(col(Answer.id)))
    numbers: dict[int, int] = {}
    found = []
    with Session(engine) as session:
        for answer, user_id in session.execute(query):
            number = numbers.setdefault(user_id, len(numbers) + 1)
            found.append({"reader_role": f"radiologist {number}", "overall": answer.overall,
                          "comment": answer.comment, "tags": json.loads(answer.tags)})
    return found
