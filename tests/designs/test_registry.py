"""Every design is registered, asked by its kind, names a reading screen that exists, and
draws its own sample."""

from dataclasses import replace
from pathlib import Path

import pytest
from pydantic import BaseModel
from sqlalchemy.engine import Engine
from sqlmodel import Session, select

from app.cases.filters import CaseFilter
from app.designs import StudyDesign, design_of
from app.models import Role
from app.studies.design import StudyError, StudyPlan, create_study
from app.studies.models import Design, Study, StudyItem
from tests.accounts import add_user

TEMPLATES = Path(__file__).resolve().parents[2] / "templates"


@pytest.mark.parametrize("kind", list(Design))
def test_every_design_is_registered_with_a_screen_and_an_answer(kind: Design) -> None:
    design = design_of(kind)
    assert isinstance(design, StudyDesign) and design.kind is kind
    assert (TEMPLATES / design.reading_template).is_file()
    assert issubclass(design.answer_model, BaseModel)
    # The rubric designs share the agreement page; a design without the rubric has its own.
    assert (design.figures_page == "agreement") == kind.rubric
    assert design.keeps_drafts == kind.rubric
    # Each has a figures page and lists the sample among its downloads.
    assert design.figures and design.figures[0].path.split("/")[0] == design.figures_page
    assert "design.csv" in {link.path for link in design.exports}
    # A real-or-edited image has an address of its own; the others show theirs by name.
    assert bool(design.images) == (not kind.single_image)


def test_a_design_is_asked_by_study_kind_or_name() -> None:
    study = Study(name="s", design=Design.real_or_edited.value, seed=1)
    assert design_of(study) is design_of(Design.real_or_edited) is design_of("real_or_edited")
    with pytest.raises(ValueError):
        design_of("pairwise-someday")


# One plan per design, drawn through the interface; each stratum a few units of the demo data.
PLANS = {
    Design.validation: dict(strata_facets=("verdict", "direction"),
                            per_stratum={f"{v}/{d}": 2 for v in ("pass", "fail")
                                         for d in ("add", "remove")}),
    Design.accepted: dict(strata_facets=("direction",), per_stratum={"add": 3, "remove": 3}),
    Design.runs: dict(total=4),
    Design.real_or_edited: dict(strata_facets=("modality",), per_stratum={"chest_xray": 4}),
    # An adaptive study allocates between modalities: it needs more than one.
    Design.adaptive: dict(strata_facets=("modality",), total=6, batch_images=3,
                          case_filter=CaseFilter()),
    Design.pairwise: dict(strata_facets=("verdicts",), per_stratum={"one passed": 3},
                          pair_kind="accepted"),
}


def _plan(kind: Design, name: str, reader_ids: list[int]) -> StudyPlan:
    options = {"case_filter": CaseFilter(modality=("chest_xray",))} | PLANS[kind]
    return StudyPlan(name=name, reader_ids=reader_ids, design=kind, seed=11, **options)  # type: ignore[arg-type]


@pytest.mark.parametrize("kind", list(Design))
def test_every_design_draws_its_own_sample_through_the_interface(demo_engine: Engine,
                                                                  kind: Design) -> None:
    """``create`` draws what the design samples, reproducibly from the seed: the same plan
    drawn twice gives the same units; ``strata`` offers the pools the draw is made from."""
    admin = add_user(demo_engine, "chief", Role.admin)
    reader = add_user(demo_engine, "dr-a", Role.reader)
    design = design_of(kind)
    with Session(demo_engine) as session:
        rows, per_image = design.strata(session, _plan(kind, "", []))
        assert rows and all(row.pool > 0 for row in rows) and sum(per_image) > 0
        drawn = [design.create(session, _plan(kind, name, [reader.id or 0]), admin)
                 for name in ("first", "second")]
        units = [session.exec(select(StudyItem.task_id, StudyItem.attempt_id)
                              .where(StudyItem.study_id == study.id)
                              .order_by(StudyItem.task_id, StudyItem.attempt_id)).all()
                 for study in drawn]
    assert all(Design(study.design) is kind for study in drawn)
    assert units[0] and units[0] == units[1]
    if kind.pairs:
        assert len(units[0]) == 3
    elif not kind.draws_in_batches:  # an adaptive study draws its first batch of images only
        wanted = PLANS[kind]
        count = wanted.get("total") or sum(wanted["per_stratum"].values())  # type: ignore[union-attr, attr-defined]
        assert len({task for task, _ in units[0]}) == count


def test_the_rubric_designs_draw_as_they_did_before_the_interface(demo_engine: Engine) -> None:
    """No change in behaviour: the interface draws the sample that create_study draws."""
    admin = add_user(demo_engine, "chief", Role.admin)
    reader = add_user(demo_engine, "dr-a", Role.reader)
    for kind in (Design.validation, Design.accepted, Design.runs, Design.real_or_edited):
        with Session(demo_engine) as session:
            direct = create_study(session=session, plan=_plan(kind, f"{kind}-direct", [reader.id or 0]),
                                  created_by=admin)
            asked = design_of(kind).create(session, _plan(kind, f"{kind}-asked", [reader.id or 0]), admin)
            items = [session.exec(select(StudyItem.task_id, StudyItem.attempt_id, StudyItem.shows)
                                  .where(StudyItem.study_id == s.id)
                                  .order_by(StudyItem.task_id, StudyItem.attempt_id)).all()
                     for s in (direct, asked)]
        assert items[0] == items[1], kind


def test_up_to_takes_all_of_a_small_stratum(demo_engine: Engine) -> None:
    design = design_of(Design.accepted)
    with Session(demo_engine) as session:
        plan = _plan(Design.accepted, "", [])
        pools = {row.key: row.pool for row in design.strata(session, plan)[0]}
        capped = design.up_to(session, plan, 5)
        whole = design.up_to(session, replace(plan, strata_facets=()), 10**6)
    assert capped.per_stratum == {key: min(5, n) for key, n in pools.items()}
    assert whole.total == sum(pools.values())


def test_a_pairwise_plan_without_its_kind_of_pairs_is_refused(demo_engine: Engine) -> None:
    admin = add_user(demo_engine, "chief", Role.admin)
    reader = add_user(demo_engine, "dr-a", Role.reader)
    design = design_of(Design.pairwise)
    plan = replace(_plan(Design.pairwise, "pairs", [reader.id or 0]), pair_kind=None)
    with Session(demo_engine) as session:
        assert design.strata(session, plan) == ([], [])
        with pytest.raises(StudyError) as refused:
            design.create(session, plan, admin)
        assert refused.value.field == "kind"
        assert session.exec(select(Study)).all() == []
