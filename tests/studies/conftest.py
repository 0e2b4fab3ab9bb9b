"""A small open study on the demo data: two readers, eight chest X-ray cases, fully crossed."""

from dataclasses import dataclass

import pytest
from sqlalchemy.engine import Engine
from sqlmodel import Session

from app.case_filter import CaseFilter
from app.models import Role, User
from app.study_design import StudyPlan, create_study
from app.study_models import Reveal, Study
from tests.accounts import add_user


@dataclass
class StudySetup:
    study: Study
    admin: User
    readers: list[User]
    outsider: User


def make_study(engine: Engine, reveal: Reveal = Reveal.never, repeat_fraction: float = 0.0,
               readers: int = 2) -> StudySetup:
    admin = add_user(engine, "study-admin", Role.admin)
    people = [add_user(engine, f"reader-{i}", Role.reader) for i in range(readers)]
    outsider = add_user(engine, "outsider", Role.reader)
    plan = StudyPlan(name="pilot", case_filter=CaseFilter(modality=("chest_xray",),
                                                          outcome=("success",)),
                     reader_ids=[p.id or 0 for p in people], seed=42, strata_facet="direction",
                     per_stratum={"add": 4, "remove": 4}, reveal=reveal,
                     repeat_fraction=repeat_fraction)
    with Session(engine) as session:
        study = create_study(session=session, plan=plan, created_by=admin)
    return StudySetup(study, admin, people, outsider)


@pytest.fixture
def setup(demo_engine: Engine) -> StudySetup:
    return make_study(demo_engine)
