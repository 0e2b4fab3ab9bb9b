"""A validation study on the demo data, read by two readers whose answers follow a rule."""

from collections.abc import Callable

from sqlalchemy.engine import Engine
from sqlmodel import Session

from app.agreement.reads import Case, load
from app.cases.filters import CaseFilter
from app.models import Role
from app.studies.answers import AnswerIn, submit_answer
from app.studies.design import StudyPlan, create_study
from app.studies.models import Design, Study
from app.studies.worklist import get_assignment
from tests.accounts import add_user

# Verdict x modality strata of the demo's 321 judged edits (pool sizes 10 to 163).
STRATA = {"pass/chest_xray": 40, "fail/chest_xray": 40, "pass/brain_mri": 8,
          "fail/brain_mri": 8, "pass/fundus": 8, "fail/fundus": 8}

Rule = Callable[[str, Case], bool]  # reader name, case -> passes


def judge_rule(reader: str, case: Case) -> bool:
    """Readers who side with the judge, except on every third removal, which they fail."""
    verdict = bool(case.judge.get("overall"))
    return False if case.direction == "remove" and case.item_id % 3 == 0 else verdict


def validation_study(engine: Engine, strata: dict[str, int] | None = None, name: str = "quality",
                     readers: int = 2) -> Study:
    admin = add_user(engine, f"{name}-admin", Role.admin)
    people = [add_user(engine, f"{name}-reader-{i}", Role.reader) for i in range(readers)]
    plan = StudyPlan(name=name, case_filter=CaseFilter(), design=Design.validation,
                     reader_ids=[p.id or 0 for p in people], seed=7,
                     strata_facets=("verdict", "modality"), per_stratum=strata or STRATA)
    with Session(engine) as session:
        return create_study(session=session, plan=plan, created_by=admin)


def read_study(engine: Engine, study: Study, rule: Rule = judge_rule) -> None:
    """Every reader answers every case: overall and every dimension by the rule."""
    with Session(engine) as session:
        data = load(session, study)
        cases = {c.item_id: c for c in data.cases}
        for reader in data.readers:
            user = next(u for u in _users(session, study) if u.name == reader)
            n = 1
            while True:
                try:
                    assignment = get_assignment(session, study, user, n)
                except LookupError:
                    break
                passes = rule(reader, cases[assignment.item_id])
                word = "yes" if passes else "no"
                submit_answer(session, study, assignment, AnswerIn(
                    compliance=word, structure=word, realism=word, fidelity=word,
                    overall="accept" if passes else "reject", confidence=3,
                    submission_id=f"{study.id}-{reader}-{n:04d}"))
                n += 1


def _users(session: Session, study: Study) -> list:  # type: ignore[type-arg]
    from sqlmodel import select

    from app.models import User
    from app.studies.models import Assignment
    return list(session.exec(select(User).join(Assignment, Assignment.user_id == User.id)
                             .where(Assignment.study_id == study.id).distinct()))
