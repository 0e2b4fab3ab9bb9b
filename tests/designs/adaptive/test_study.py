"""An adaptive study in the database: made with its first batch, refused over a pool it cannot
draw from, each draw recorded with its probability and replayable, later batches mixed into
the readers' lists behind the case each has open."""

import itertools
import json

import numpy as np
import pytest
from sqlalchemy.engine import Engine
from sqlmodel import Session, col, select

from app.agreement.reads import load
from app.agreement.resample import ClusterBootstrap
from app.cases.filters import CaseFilter
from app.designs import design_of
from app.designs.adaptive.batches import place_batch
from app.designs.adaptive.draws import Read, draw_edit_batch, frozen_edits, replay
from app.models import Role
from app.studies.design import StudyError, StudyPlan, create_study
from app.studies.draw_plan import scope_of
from app.studies.models import Assignment, Design, Study, StudyBatch, StudyDraw, StudyItem
from tests.accounts import add_user


def make_adaptive(engine: Engine, *, readers: int = 3, batch: int = 5, total: int = 40,
                  case_filter: CaseFilter = CaseFilter(), name: str = "adaptive") -> Study:
    admin = add_user(engine, f"{name}-admin", Role.admin)
    people = [add_user(engine, f"{name}-reader-{i}", Role.reader) for i in range(readers)]
    plan = StudyPlan(name=name, case_filter=case_filter, design=Design.adaptive,
                     reader_ids=[p.id or 0 for p in people], seed=11, strata_facets=("modality",),
                     total=total, batch_images=batch)
    with Session(engine) as session:
        return design_of(Design.adaptive).create(session, plan, admin)


def test_the_first_batch_is_drawn_with_recorded_probabilities(demo_engine: Engine) -> None:
    """Edits are the unit: each draw names its edit and its image, with its probability, and
    the batch's recorded state draws it again."""
    study = make_adaptive(demo_engine)
    with Session(demo_engine) as session:
        draws = sorted(session.scalars(select(StudyDraw).where(col(StudyDraw.study_id) == study.id)),
                       key=lambda d: d.position)
        assert len(draws) == 5 and all(0 < d.probability < 1 for d in draws)
        edits = frozen_edits(session, study)
        assert all(d.pool_images == len(edits) and d.attempt_id is not None for d in draws)
        batch = session.scalars(select(StudyBatch).where(col(StudyBatch.study_id) == study.id)).one()
        assert batch.ready and batch.batch == 0
        positions, q = replay(edits, json.loads(batch.state))
        assert [int(edits.attempt[i]) for i in positions] == [d.attempt_id for d in draws]
        assert [int(edits.image[i]) for i in positions] == [d.source_image_id for d in draws]
        assert np.allclose(q[positions], [d.probability for d in draws])
        assert batch.bound == pytest.approx(((1 / len(q)) / q).max())
        items = session.scalars(select(StudyItem).where(col(StudyItem.study_id) == study.id)).all()
        assert {i.attempt_id for i in items} == {d.attempt_id for d in draws}
        per_reader = {}
        for a in session.scalars(select(Assignment).where(col(Assignment.study_id) == study.id)):
            per_reader.setdefault(a.user_id, []).append(a.sequence)
        assert len(per_reader) == 3
        assert all(sorted(s) == list(range(1, len(items) + 1)) for s in per_reader.values())


def test_a_later_batch_goes_behind_the_case_each_reader_has_open(demo_engine: Engine) -> None:
    from app.models import User
    from app.studies.answers import AnswerIn, submit_answer
    from app.studies.worklist import get_assignment

    study = make_adaptive(demo_engine)
    with Session(demo_engine) as session:
        reader = session.scalars(select(User).where(col(User.name) == "adaptive-reader-0")).one()
        first = get_assignment(session, study, reader, 1)
        submit_answer(session, study, first, AnswerIn(
            compliance="yes", structure="yes", realism="yes", fidelity="yes", overall="accept",
            confidence=3, submission_id="adaptive-first-0001"))
        open_case = get_assignment(session, study, reader, 2)
        before = {a.sequence: a.item_id for a in session.scalars(select(Assignment).where(
            col(Assignment.study_id) == study.id, col(Assignment.user_id) == reader.id))}
        edits = frozen_edits(session, study)
        batch, items = draw_edit_batch(session, study, edits, {int(edits.attempt[0]): Read(False)}, 1, 5)
        assert place_batch(session, study, batch)
        session.commit()
        after = {a.sequence: a.item_id for a in session.scalars(select(Assignment).where(
            col(Assignment.study_id) == study.id, col(Assignment.user_id) == reader.id))}
        assert after[1] == before[1] and after[2] == open_case.item_id  # kept their place
        assert sorted(after) == list(range(1, len(before) + len(items) + 1))
        assert set(after.values()) == set(before.values()) | {i.id for i in items}


@pytest.mark.parametrize(("case_filter", "words"), [
    (CaseFilter(modality=("chest_xray",)), "at least 2 strata"),
])
def test_a_pool_it_cannot_draw_from_is_refused_and_nothing_is_made(
        demo_engine: Engine, case_filter: CaseFilter, words: str) -> None:
    with pytest.raises(StudyError, match=words) as refused:
        make_adaptive(demo_engine, case_filter=case_filter)
    assert refused.value.field == "design"
    with Session(demo_engine) as session:
        assert session.scalars(select(Study)).first() is None


def test_no_reader_meets_two_edits_of_one_image_in_a_row(demo_engine: Engine) -> None:
    """Edits are drawn one by one, so a batch may hold several of one image: each reader's
    list keeps them apart (the demo's 90 images hold 321 edits, so 60 draws repeat images)."""
    from app.models import Task

    study = make_adaptive(demo_engine, batch=60, total=80)
    with Session(demo_engine) as session:
        image = {i.id: session.get(Task, i.task_id).source_image_id  # type: ignore[union-attr]
                 for i in session.scalars(select(StudyItem).where(col(StudyItem.study_id) == study.id))}
        assert len(set(image.values())) < len(image)  # some image was drawn twice
        lists: dict[int, list[int]] = {}
        for a in session.scalars(select(Assignment).where(col(Assignment.study_id) == study.id)
                                 .order_by(col(Assignment.sequence))):
            lists.setdefault(a.user_id, []).append(image[a.item_id])
    for seen in lists.values():
        assert all(x != y for x, y in itertools.pairwise(seen)), seen


def test_the_shared_draw_refuses_an_adaptive_plan(demo_engine: Engine) -> None:
    # Its cases arrive as it goes: only its design draws it, so nothing is made here.
    admin = add_user(demo_engine, "direct-admin", Role.admin)
    reader = add_user(demo_engine, "direct-reader", Role.reader)
    plan = StudyPlan(name="direct", case_filter=CaseFilter(), design=Design.adaptive,
                     reader_ids=[reader.id or 0], total=10, batch_images=5,
                     strata_facets=("modality",))
    with Session(demo_engine) as session, pytest.raises(StudyError) as refused:
        create_study(session=session, plan=plan, created_by=admin)
    assert refused.value.field == "design"
    with Session(demo_engine) as session:
        assert session.scalars(select(Study)).all() == []


def test_every_figure_of_its_report_is_weighted_by_its_draws(demo_engine: Engine) -> None:
    """A case's weight is the sum of its draws' inverse probabilities (an edit drawn twice
    counts twice), so the report's shares are the Hansen-Hurwitz estimate its watch gives,
    not the unweighted share of the cases read; the page says the figures are the pool's."""
    study = make_adaptive(demo_engine, batch=20, total=40)
    with Session(demo_engine) as session:
        draws = list(session.scalars(select(StudyDraw).where(col(StudyDraw.study_id) == study.id)))
        data = load(session, study)
        per_item: dict[int, float] = {}
        attempt_item = {c.item_id: c for c in data.cases}
        items = dict(session.execute(select(col(StudyItem.attempt_id), col(StudyItem.id)).where(
            col(StudyItem.study_id) == study.id)).all())
        for d in draws:
            per_item[items[d.attempt_id]] = per_item.get(items[d.attempt_id], 0.0) + (
                (1 / d.pool_images) / d.probability)
        mean = sum(per_item.values()) / len(draws)
        assert {i: pytest.approx(w / mean) for i, w in per_item.items()} == {
            i: c.weight for i, c in attempt_item.items()}
        assert scope_of(study) is not None and "each read is weighted" in (scope_of(study) or "")
    # The bootstrap takes the weights: a weighted share, not the cases' plain mean.
    weights = np.array([2.0, 1.0, 1.0, 0.5])
    hits = np.array([[1.0], [0.0], [1.0], [0.0]])
    boot = ClusterBootstrap(["a", "b", "c", "d"], weights=weights)
    figure = boot.figure(np.hstack([hits, np.ones((4, 1))]), lambda t: t[..., 0] / t[..., 1], n=4)
    assert figure.value == pytest.approx(3 / 4.5)
