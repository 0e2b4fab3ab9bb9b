"""Practice kept apart: what a practice showed never comes back to its readers, and an edit
whose verdict a practice showed never enters a study's ordinary sample (issue 53, blinding)."""

import json

import pytest
from bs4 import BeautifulSoup
from sqlalchemy.engine import Engine
from sqlmodel import Session, col, select

from app.cases.filters import CaseFilter
from app.designs import design_of
from app.models import Role, Task, User
from app.settings import Settings
from app.studies.design import StudyError, StudyPlan, create_study
from app.studies.models import Design, Study, StudyItem
from app.studies.practice import Requirement, create_practice
from tests.accounts import add_user, token_client
from tests.readers.test_figures_without_known import mark_edits

CHEST = CaseFilter(modality=("chest_xray",))


def _readers(engine: Engine, n: int) -> tuple[User, list[User]]:
    return (add_user(engine, "boss", Role.admin),
            [add_user(engine, f"r{i}", Role.reader) for i in range(n)])


def _items(session: Session, study_id: int) -> list[tuple[int, int, bool]]:
    """(attempt, source image, known-answer case) of each of a study's items."""
    return [(int(a), int(i), k is not None) for a, i, k in session.execute(
        select(col(StudyItem.attempt_id), col(Task.source_image_id), col(StudyItem.known_answer_id))
        .join(Task, col(Task.id) == StudyItem.task_id).where(col(StudyItem.study_id) == study_id))]


def _everything(session: Session, readers: list[User], **options: object) -> StudyPlan:
    """A plan drawing every chest edit the pool leaves it, with known-answer cases."""
    plan = StudyPlan(name=str(options.pop("name", "the real thing")), case_filter=CHEST,
                     design=Design.validation, reader_ids=[r.id or 0 for r in readers], seed=1,
                     strata_facets=("verdict",), per_stratum={"pass": 1, "fail": 1}, **options)  # type: ignore[arg-type]
    return design_of(Design.validation).up_to(session, plan, 10_000)


def _small(readers: list[User], **options: object) -> StudyPlan:
    """Four chest edits and as many known-answer cases."""
    return StudyPlan(name=str(options.pop("name", "small")), case_filter=CHEST,
                     design=Design.validation, reader_ids=[r.id or 0 for r in readers], seed=1,
                     strata_facets=("verdict",), per_stratum={"pass": 2, "fail": 2},
                     known_share=0.5, **options)  # type: ignore[arg-type]


def _practised(engine: Engine, marked: int) -> tuple[User, list[User], Study]:
    """``marked`` settled edits, two readers, and a practice of 8 of them for the first."""
    mark_edits(engine, marked)
    admin, readers = _readers(engine, 2)
    with Session(engine) as session:
        practice = create_practice(session, name="warm-up", cases=8,
                                   reader_ids=[readers[0].id or 0], created_by=admin)
        session.expunge(practice)
    return admin, readers, practice


def test_a_practices_edits_and_their_images_never_reach_its_reader_again(demo_engine: Engine) -> None:
    admin, readers, practice = _practised(demo_engine, marked=16)
    with Session(demo_engine) as session:
        shown_images = {image for _, image, _ in _items(session, practice.id or 0)}
        every = create_study(session=session, created_by=admin, plan=_everything(session, readers))
        known = create_study(session=session, created_by=admin, plan=_small(readers))
        found = _items(session, every.id or 0) + _items(session, known.id or 0)
        selection = json.loads(every.selection)
    assert sum(k for *_, k in found) == 4 and len(found) > 40
    # Neither as an ordinary case nor as a known-answer case, and no edit of the same image.
    assert not shown_images & {image for _, image, _ in found}
    assert selection["practice_left_out"] >= 8


def test_an_edit_whose_verdict_a_practice_showed_is_in_no_ordinary_sample(demo_engine: Engine) -> None:
    """The study's reader never practised: the images may come back to them, the edits the
    practice judged in front of others may not, except as known-answer cases."""
    admin, readers, practice = _practised(demo_engine, marked=40)
    with Session(demo_engine) as session:
        shown = {attempt for attempt, _, _ in _items(session, practice.id or 0)}
        study = create_study(session=session, created_by=admin,
                             plan=_everything(session, readers[1:]))
        ordinary = {attempt for attempt, _, known in _items(session, study.id or 0) if not known}
    assert ordinary and not ordinary & shown


def test_a_study_requiring_a_practice_draws_nothing_of_it(demo_engine: Engine) -> None:
    """Its readers are enrolled in the practice as the study is made: the draw leaves the
    practice's images out, known-answer cases included."""
    admin, readers, practice = _practised(demo_engine, marked=16)
    with Session(demo_engine) as session:
        shown_images = {image for _, image, _ in _items(session, practice.id or 0)}
        study = create_study(session=session, created_by=admin, plan=_small(
            readers[1:], qualification=Requirement(practice.id or 0, 0.5, 4)))
        found = _items(session, study.id or 0)
    assert any(known for *_, known in found)
    assert not shown_images & {image for _, image, _ in found}


def test_a_reader_is_not_put_into_a_practice_of_images_they_have_still_to_read(
        demo_engine: Engine) -> None:
    mark_edits(demo_engine, 40)
    admin, readers = _readers(demo_engine, 2)
    with Session(demo_engine) as session:
        first = create_study(session=session, created_by=admin,
                             plan=_everything(session, readers[1:], name="first"))
        waiting = {image for _, image, _ in _items(session, first.id or 0)}
        # A practice made for them holds nothing they have still to read ...
        with pytest.raises(Exception) as nothing_left:
            create_practice(session, name="for r1", cases=8, reader_ids=[readers[1].id or 0],
                            created_by=admin)
        assert "usable here" in str(nothing_left.value)
        assert "kept apart from these readers" in str(nothing_left.value)  # and says why
        # ... and one made for someone else is not forced on them by a second study.
        practice = create_practice(session, name="for r0", cases=8,
                                   reader_ids=[readers[0].id or 0], created_by=admin)
        assert {image for _, image, _ in _items(session, practice.id or 0)} & waiting
        second = StudyPlan(name="second", case_filter=CaseFilter(modality=("brain_mri",)),
                           design=Design.validation, reader_ids=[readers[1].id or 0], seed=2,
                           strata_facets=("verdict",), per_stratum={"pass": 2, "fail": 2},
                           qualification=Requirement(practice.id or 0, 0.5, 4))
        with pytest.raises(StudyError) as refused:
            create_study(session=session, plan=second, created_by=admin)
        assert refused.value.field == "qualify_practice" and "still unread" in str(refused.value)
        assert session.scalars(select(Study).where(col(Study.name) == "second")).first() is None


def test_the_form_counts_what_practice_leaves_out(demo_engine: Engine, settings: Settings) -> None:
    from app.web.main import create_app

    mark_edits(demo_engine, 40)
    admin, readers = _readers(demo_engine, 1)
    client = token_client(create_app(settings, demo_engine), demo_engine)
    before = BeautifulSoup(client.get("/studies/new?modality=chest_xray").text, "html.parser")
    assert "No unit" in before.select_one("#practice-left-out").text
    pools = {tr["data-stratum"]: int(tr.select_one(".pool").text)
             for tr in before.select("#strata-table tr[data-stratum]")}
    with Session(demo_engine) as session:
        create_practice(session, name="warm-up", cases=8, reader_ids=[readers[0].id or 0],
                        created_by=admin)
    after = BeautifulSoup(client.get("/studies/new?modality=chest_xray").text, "html.parser")
    # The practice's edits the pool holds (a marked edit of an older run is in no pool).
    left = int(after.select_one("#practice-left-out strong").text)
    shrunk = {tr["data-stratum"]: int(tr.select_one(".pool").text)
              for tr in after.select("#strata-table tr[data-stratum]")}
    assert 0 < left <= 8 and sum(pools.values()) - sum(shrunk.values()) == left
