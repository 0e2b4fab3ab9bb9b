"""Who has qualified for a study: each reader's standing in the practice the study asks for,
and the record of who cleared its bar, when, and on what (app/studies/practice.py makes
practice studies and keeps a study's requirement)."""

import json
from dataclasses import dataclass

from sqlalchemy import func, select
from sqlmodel import Session, col

from app.readers.accuracy import exact
from app.studies.models import Answer, Assignment, Study, StudyItem
from app.studies.practice import Requirement, requirement_of
from app.studies.reader_models import KnownAnswer, Qualification


@dataclass(frozen=True)
class Standing:
    """A reader against a requirement: their practice so far and whether it clears the bar."""

    requirement: Requirement
    cases: int
    right: int
    asked: int
    low: float | None
    high: float | None
    qualified: bool
    recorded: Qualification | None


def practice_scores(session: Session, practice_id: int, user_id: int) -> tuple[int, int, int]:
    """(cases answered, settled answers right, settled answers asked): the first answer of
    each case, given before the settled answer was shown."""
    first = (select(col(Answer.assignment_id), func.min(Answer.version).label("version"))
             .join(Assignment, col(Assignment.id) == Answer.assignment_id)
             .where(col(Assignment.study_id) == practice_id, col(Assignment.user_id) == user_id,
                    col(Answer.after_reveal).is_(False), col(Answer.retracted).is_(False))
             .group_by(col(Answer.assignment_id)).subquery())
    rows = session.execute(
        select(Answer, col(KnownAnswer.answers))
        .join(first, (first.c.assignment_id == Answer.assignment_id) & (first.c.version == Answer.version))
        .join(Assignment, col(Assignment.id) == Answer.assignment_id)
        .join(StudyItem, col(StudyItem.id) == Assignment.item_id)
        .join(KnownAnswer, col(KnownAnswer.id) == StudyItem.known_answer_id)).all()
    right = asked = 0
    for answer, settled in rows:
        for question, value in json.loads(settled).items():
            asked += 1
            right += getattr(answer, question) == value
    return len(rows), right, asked


def standing(session: Session, requirement: Requirement, user_id: int) -> Standing:
    cases, right, asked = practice_scores(session, requirement.practice_id, user_id)
    interval = exact(right, asked)  # Clopper-Pearson, as every reader's rate
    low, high = interval.low, interval.high
    value = (right / asked if requirement.on == "estimate" else low) if asked else None
    qualified = cases >= requirement.min_cases and value is not None and value >= requirement.threshold
    recorded = session.scalars(select(Qualification).where(
        col(Qualification.user_id) == user_id,
        col(Qualification.practice_id) == requirement.practice_id,
        col(Qualification.threshold) == requirement.threshold,
        col(Qualification.min_cases) == requirement.min_cases,
        col(Qualification.on) == requirement.on)).first()
    return Standing(requirement, cases, right, asked, low, high, qualified or recorded is not None,
                    recorded)


def record_if_qualified(session: Session, practice: Study, user_id: int) -> list[Qualification]:
    """After a practice answer: the reader's qualification for every study requiring this
    practice, recorded the first time they clear its bar (kept thereafter)."""
    found = []
    for study in session.scalars(select(Study).where(col(Study.qualification).is_not(None))):
        requirement = requirement_of(study)
        if requirement is None or requirement.practice_id != practice.id:
            continue
        now = standing(session, requirement, user_id)
        if now.qualified and now.recorded is None and now.low is not None and now.high is not None:
            row = Qualification(user_id=user_id, practice_id=requirement.practice_id,
                                cases=now.cases, right=now.right, asked=now.asked, low=now.low,
                                high=now.high, threshold=requirement.threshold,
                                min_cases=requirement.min_cases, on=requirement.on)
            session.add(row)
            session.commit()
            found.append(row)
    return found
