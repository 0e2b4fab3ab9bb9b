"""A small open study on the demo data: two readers, eight chest X-ray cases, fully crossed."""

import tempfile
from dataclasses import dataclass
from pathlib import Path

import pytest
from sqlalchemy.engine import Engine
from sqlmodel import Session

from app.cases.filters import CaseFilter
from app.models import Role, User
from app.studies.design import StudyPlan, create_study
from app.studies.models import Design, Reveal, Study
from app.studies.previews import warm_previews
from tests.accounts import add_user


@dataclass
class StudySetup:
    study: Study
    admin: User
    readers: list[User]
    outsider: User


def opened(engine: Engine, study: Study | int) -> Study:
    """The study as its readers find it once its images are drawn: every study is made
    preparing (app/studies/previews.py), and the app draws it in the background."""
    study_id = study if isinstance(study, int) else study.id or 0
    with tempfile.TemporaryDirectory() as cache:
        warm_previews(engine, study_id, Path(cache))
    with Session(engine) as session:
        found = session.get(Study, study_id)
        assert found is not None and found.images_ready
        session.expunge(found)
        return found


def make_study(engine: Engine, reveal: Reveal = Reveal.never, repeat_fraction: float = 0.0,
               readers: int = 2, design: Design = Design.accepted,
               known_share: float = 0.0) -> StudySetup:
    """Accepted design: eight accepted chest X-ray edits, 4 add and 4 remove. Validation
    design: 4 judged attempts of each verdict x direction, 16 in all."""
    admin = add_user(engine, "study-admin", Role.admin)
    people = [add_user(engine, f"reader-{i}", Role.reader) for i in range(readers)]
    outsider = add_user(engine, "outsider", Role.reader)
    if design is Design.validation:
        facets: tuple[str, ...] = ("verdict", "direction")
        strata = {f"{v}/{d}": 4 for v in ("pass", "fail") for d in ("add", "remove")}
        case_filter = CaseFilter(modality=("chest_xray",))
    else:
        facets, strata = ("direction",), {"add": 4, "remove": 4}
        case_filter = CaseFilter(modality=("chest_xray",), outcome=("success",))
    plan = StudyPlan(name="pilot", case_filter=case_filter, design=design,
                     reader_ids=[p.id or 0 for p in people], seed=42, strata_facets=facets,
                     per_stratum=strata, reveal=reveal, repeat_fraction=repeat_fraction,
                     known_share=known_share)
    with Session(engine) as session:
        study = create_study(session=session, plan=plan, created_by=admin)
    return StudySetup(opened(engine, study), admin, people, outsider)


@pytest.fixture
def setup(demo_engine: Engine) -> StudySetup:
    return make_study(demo_engine)


def make_real_or_edited(engine: Engine, readers: int = 2, per_modality: int = 6,
                        original_share: float = 0.5, repeat_fraction: float = 0.0) -> StudySetup:
    """A real-or-edited study: ``per_modality`` source images of each modality, about half
    shown as their original."""
    admin = add_user(engine, "roe-admin", Role.admin)
    people = [add_user(engine, f"roe-reader-{i}", Role.reader) for i in range(readers)]
    outsider = add_user(engine, "roe-outsider", Role.reader)
    plan = StudyPlan(name="turing", case_filter=CaseFilter(), design=Design.real_or_edited,
                     reader_ids=[p.id or 0 for p in people], seed=7, strata_facets=("modality",),
                     per_stratum={m: per_modality for m in ("chest_xray", "brain_mri", "fundus")},
                     original_share=original_share, repeat_fraction=repeat_fraction)
    with Session(engine) as session:
        study = create_study(session=session, plan=plan, created_by=admin)
    return StudySetup(opened(engine, study), admin, people, outsider)
