"""A real-or-edited study: one image per source image, the chosen share of originals in each
stratum, the paired tools withheld, and answers versioned and undoable like rubric answers."""

from collections import Counter

import pytest
from pydantic import ValidationError
from sqlalchemy.engine import Engine
from sqlmodel import Session, col, select

from app.cases.filters import CaseFilter
from app.designs.real_or_edited import answers as roe
from app.models import Attempt, SourceImage, Task
from app.studies.design import StudyError, StudyPlan, create_study
from app.studies.models import Design, RealOrEditedAnswer, StudyItem
from app.studies.pool import Candidate, candidates
from app.studies.reading_setup import change_reading_setup, started
from app.studies.viewer_tools import tools_of
from app.studies.worklist import get_assignment, next_open, reader_progress
from tests.studies.conftest import make_real_or_edited


def answer(submission: str = "roe-00000001", **changes: object) -> roe.RealOrEditedIn:
    return roe.RealOrEditedIn.model_validate(
        {"call": "edited", "confidence": 4, "submission_id": submission, **changes})


def test_the_draw_takes_one_task_per_source_image_and_the_share_of_originals(demo_engine: Engine) -> None:
    setup = make_real_or_edited(demo_engine, per_modality=6)
    with Session(demo_engine) as s:
        rows = s.execute(select(StudyItem, Task).join(Task, col(Task.id) == StudyItem.task_id)
                         .where(col(StudyItem.study_id) == setup.study.id)).all()
        sources = [task.source_image_id for _, task in rows]
        assert len(rows) == 18 and len(set(sources)) == 18  # an original never meets its edit
        shown = Counter((item.stratum, item.shows) for item, _ in rows)
        for modality in ("chest_xray", "brain_mri", "fundus"):
            assert shown[(modality, "original")] == shown[(modality, "edit")] == 3
        assert all(item.attempt_id == task.accepted_attempt_id for item, task in rows)
        assert tools_of(setup.study) == {"window"}  # flicker, swipe, difference need the pair


def test_the_pool_holds_each_source_image_once(demo_engine: Engine) -> None:
    with Session(demo_engine) as s:
        accepted = candidates(s, CaseFilter(), Design.accepted, ())
        pool = candidates(s, CaseFilter(), Design.real_or_edited, ())

        def shown(c: Candidate) -> bool:  # both images on disk: either may be the one shown
            attempt, source = s.get(Attempt, c.attempt_id), s.get(SourceImage, c.source_image_id)
            return bool(attempt and attempt.image_present and source and source.present)

        showable = [c for c in accepted if shown(c)]
        assert len(showable) < len(accepted)  # the demo leaves some images out
        assert len({c.source_image_id for c in pool}) == len(pool) < len(showable)
        assert {c.source_image_id for c in pool} == {c.source_image_id for c in showable}
        assert candidates(s, CaseFilter(), Design.real_or_edited, ()) == pool  # stable


def test_a_share_of_originals_outside_its_range_is_refused(demo_engine: Engine) -> None:
    from app.models import Role
    from tests.accounts import add_user

    admin = add_user(demo_engine, "a", Role.admin)
    reader = add_user(demo_engine, "r", Role.reader)
    plan = StudyPlan(name="bad", case_filter=CaseFilter(), design=Design.real_or_edited,
                     reader_ids=[reader.id or 0], total=4, original_share=0.95)
    with Session(demo_engine) as s, pytest.raises(StudyError) as refused:
        create_study(session=s, plan=plan, created_by=admin)
    assert refused.value.field == "original_share"


def test_answers_are_versioned_idempotent_undoable_and_count_as_progress(demo_engine: Engine) -> None:
    setup = make_real_or_edited(demo_engine, per_modality=2)
    reader = setup.readers[0]
    with Session(demo_engine) as s:
        first = get_assignment(s, setup.study, reader, 1)
        stored = roe.submit(s, setup.study, first, answer(click_x=0.4, click_y=0.6))
        again = roe.submit(s, setup.study, first, answer(click_x=0.4, click_y=0.6))
        assert stored.id == again.id and (stored.click_x, stored.click_y) == (0.4, 0.6)
        assert reader_progress(s, setup.study, reader.id or 0).done == 1
        assert started(s, setup.study)
        assert next_open(s, setup.study, reader).sequence == 2  # type: ignore[union-attr]
        real = roe.submit(s, setup.study, first, answer("roe-00000002", call="real",
                                                        click_x=0.1, click_y=0.1))
        assert real.version == 2 and real.click_x is None  # no change to point at on "real"
        assert roe.undo_last(s, setup.study, reader.id or 0) == first
        assert reader_progress(s, setup.study, reader.id or 0).done == 0
        view = roe.case_view(s, setup.study, first)
        assert view.answer is None and view.form_state()["call"] == "real"  # back to be corrected
        versions = s.scalars(select(RealOrEditedAnswer).where(
            col(RealOrEditedAnswer.assignment_id) == first.id)).all()
        assert [v.retracted for v in versions] == [False, False, True]


def test_setup_after_the_first_answer_is_frozen_and_never_gives_paired_tools(demo_engine: Engine) -> None:
    setup = make_real_or_edited(demo_engine, per_modality=2)
    with Session(demo_engine) as s:
        changed = change_reading_setup(s, setup.study, "Look closely.", ["window", "flicker", "difference"])
        assert tools_of(changed) == {"window"}


@pytest.mark.parametrize("fields", [
    {"call": "maybe", "confidence": 3},
    {"call": "edited", "confidence": 6},
    {"call": "edited", "confidence": 3, "click_x": 0.5},
    {"call": "edited", "confidence": 3, "click_x": 1.5, "click_y": 0.2},
])
def test_bad_answers_are_refused(fields: dict[str, object]) -> None:
    with pytest.raises(ValidationError):
        roe.RealOrEditedIn.model_validate({**fields, "submission_id": "roe-00000009"})


@pytest.mark.parametrize("per_modality, share, originals", [(3, 0.5, {4, 5}), (4, 0.5, {6}),
                                                           (3, 0.3, {3}), (4, 0.25, {3})])
def test_the_share_of_originals_holds_over_the_whole_sample(demo_engine: Engine, per_modality: int,
                                                            share: float, originals: set[int]) -> None:
    """Rounding each stratum alone once showed 6 originals of 9 cases asked at a half."""
    setup = make_real_or_edited(demo_engine, per_modality=per_modality, original_share=share)
    with Session(demo_engine) as s:
        shows = Counter(i.shows for i in s.scalars(select(StudyItem).where(
            col(StudyItem.study_id) == setup.study.id)))
    assert shows["original"] in originals
    assert shows["original"] + shows["edit"] == 3 * per_modality
