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
    """A reader against a requirement. The decision is made once, on the reader's first
    ``min_cases`` practice cases (the case is the unit: a case agrees when every settled
    answer of it is matched), so the lower-bound rule's error at the bar is the exact
    interval's: at most 2.5 %. Judged after every answer with the first pass kept, it was
    9-10 % for a reader exactly at the bar."""

    requirement: Requirement
    cases: int  # practice cases answered so far
    right: int  # of the cases decided on (the first min_cases, or all so far), those agreeing
    asked: int  # the cases decided on
    low: float | None
    high: float | None
    qualified: bool
    recorded: Qualification | None

    @property
    def decided(self) -> bool:
        return self.qualified or self.cases >= self.requirement.min_cases

    @property
    def failed(self) -> bool:
        """Decided against: more practice here changes nothing (another practice may)."""
        return self.decided and not self.qualified


def practice_cases(session: Session, practice_id: int, user_id: int) -> list[bool]:
    """Whether each practice case the reader answered agrees with its settled answers (every
    question settled, matched), in the order they were answered: the first answer of each
    case, given before the settled answer was shown."""
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
        .join(KnownAnswer, col(KnownAnswer.id) == StudyItem.known_answer_id)
        .order_by(col(Answer.id))).all()
    return [all(getattr(answer, q) == value for q, value in json.loads(settled).items())
            for answer, settled in rows]


@dataclass(frozen=True)
class Decision:
    right: int
    asked: int
    low: float | None
    high: float | None
    qualified: bool


def decide(cases: list[bool], requirement: Requirement) -> Decision:
    """The requirement on the cases answered so far: qualified only once ``min_cases`` are
    in, on those first cases alone (later ones never reopen it)."""
    decided_on = cases[:requirement.min_cases]
    right, asked = sum(decided_on), len(decided_on)
    interval = exact(right, asked)  # Clopper-Pearson on cases, as every reader's rate
    value = (right / asked if requirement.on == "estimate" else interval.low) if asked else None
    qualified = (len(cases) >= requirement.min_cases and value is not None
                 and value >= requirement.threshold)
    return Decision(right, asked, interval.low, interval.high, qualified)


def standing(session: Session, requirement: Requirement, user_id: int) -> Standing:
    cases = practice_cases(session, requirement.practice_id, user_id)
    decision = decide(cases, requirement)
    right, asked, low, high, qualified = (decision.right, decision.asked, decision.low,
                                          decision.high, decision.qualified)
    recorded = session.scalars(select(Qualification).where(
        col(Qualification.user_id) == user_id,
        col(Qualification.practice_id) == requirement.practice_id,
        col(Qualification.threshold) == requirement.threshold,
        col(Qualification.min_cases) == requirement.min_cases,
        col(Qualification.on) == requirement.on)).first()
    return Standing(requirement, len(cases), right, asked, low, high,
                    qualified or recorded is not None, recorded)


def standings_of(session: Session, studies: list[Study], user_id: int) -> dict[int, Standing]:
    """For each study that asks for practice first, where this reader stands against it."""
    found = {}
    for study in studies:
        requirement = requirement_of(study)
        if requirement is not None and study.id is not None:
            found[study.id] = standing(session, requirement, user_id)
    return found


def record_if_qualified(session: Session, practice: Study, user_id: int) -> list[Qualification]:
    """After a practice answer: the reader's qualification for every study requiring this
    practice, recorded when its decision (at its fixed number of cases) clears the bar."""
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
