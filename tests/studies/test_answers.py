"""Answers are validated, versioned, idempotent, undoable, and frozen by a lock."""

import pytest
from pydantic import ValidationError
from sqlalchemy.engine import Engine
from sqlmodel import Session, col, select

from app.errors import NotFound
from app.studies.answers import (
    AnswerIn,
    DraftIn,
    latest_answer,
    load_draft,
    save_draft,
    submit_answer,
    undo_last,
)
from app.studies.models import Answer, Reveal
from app.studies.versions import StudyLocked, SubmissionIdReused, lock_study
from app.studies.worklist import NotAssigned, get_assignment, next_open, read_view, reader_progress
from tests.studies.conftest import StudySetup, make_study

GOOD = dict(compliance="yes", structure="yes", realism="no", fidelity="cannot_assess",
            overall="reject", confidence=4, tags=["unnatural_edge"], comment="hard edge",
            time_on_case_ms=12_000)


def answer(submission: str = "sub-00000001", **changes: object) -> AnswerIn:
    return AnswerIn(**{**GOOD, "submission_id": submission, **changes})


def test_submit_is_idempotent_and_edits_are_new_versions(demo_engine: Engine, setup: StudySetup) -> None:
    reader = setup.readers[0]
    with Session(demo_engine) as s:
        first = get_assignment(s, setup.study, reader, 1)
        a = submit_answer(s, setup.study, first, answer())
        again = submit_answer(s, setup.study, first, answer())  # a double click
        edited = submit_answer(s, setup.study, first, answer("sub-00000002", overall="accept"))
        assert edited.version == 2
        versions = s.scalars(select(Answer).where(col(Answer.assignment_id) == first.id)).all()
        assert a.id == again.id
        assert [v.version for v in versions] == [1, 2]
        assert latest_answer(s, first.id or 0).overall == "accept"  # type: ignore[union-attr]
        assert reader_progress(s, setup.study, reader.id or 0).done == 1


def test_going_back_and_pressing_enter_stores_no_new_version(demo_engine: Engine,
                                                              setup: StudySetup) -> None:
    """p, then Enter on an unchanged answer, stored a new version of it."""
    reader = setup.readers[0]
    with Session(demo_engine) as s:
        first = get_assignment(s, setup.study, reader, 1)
        stored = submit_answer(s, setup.study, first, answer())
        # back again later: another submission, another time on case, nothing else changed
        again = submit_answer(s, setup.study, first, answer("sub-00000009", time_on_case_ms=300))
        assert again.id == stored.id
        versions = s.scalars(select(Answer).where(col(Answer.assignment_id) == first.id)).all()
        assert [v.version for v in versions] == [1]
        changed = submit_answer(s, setup.study, first, answer("sub-00000010", comment="halo"))
        assert changed.version == 2


def test_a_submission_id_from_another_case_is_refused(demo_engine: Engine, setup: StudySetup) -> None:
    """Once, the other case's answer came back as if stored, and this one was dropped."""
    reader = setup.readers[0]
    with Session(demo_engine) as s:
        first, second = (get_assignment(s, setup.study, reader, n) for n in (1, 2))
        submit_answer(s, setup.study, first, answer("sub-shared-01"))
        with pytest.raises(SubmissionIdReused):
            submit_answer(s, setup.study, second, answer("sub-shared-01", overall="accept"))
        assert latest_answer(s, second.id or 0) is None


def test_undo_retracts_and_brings_the_answer_back_as_draft(demo_engine: Engine, setup: StudySetup) -> None:
    reader = setup.readers[0]
    with Session(demo_engine) as s:
        first = get_assignment(s, setup.study, reader, 1)
        submit_answer(s, setup.study, first, answer())
        assert next_open(s, setup.study, reader).sequence == 2  # type: ignore[union-attr]
        undone = undo_last(s, setup.study, reader.id or 0)
        assert undone is not None and undone.id == first.id
        assert latest_answer(s, first.id or 0) is None
        assert next_open(s, setup.study, reader).sequence == 1  # type: ignore[union-attr]
        assert load_draft(s, first.id or 0)["comment"] == "hard edge"  # type: ignore[index]
        assert len(s.scalars(select(Answer)).all()) == 2  # nothing was erased


def test_a_locked_study_changes_nothing(demo_engine: Engine, setup: StudySetup) -> None:
    reader = setup.readers[0]
    with Session(demo_engine) as s:
        first = get_assignment(s, setup.study, reader, 1)
        submit_answer(s, setup.study, first, answer())
        lock_study(s, setup.study)
        for action in (lambda: submit_answer(s, setup.study, first, answer("sub-00000009")),
                       lambda: undo_last(s, setup.study, reader.id or 0),
                       lambda: save_draft(s, setup.study, first, DraftIn(comment="x"))):
            with pytest.raises(StudyLocked):
                action()
        assert len(s.scalars(select(Answer)).all()) == 1


def test_a_lock_committed_after_the_reader_loaded_the_study_still_holds(
        demo_engine: Engine, setup: StudySetup) -> None:
    """The reader's request read the study while open; the admin locked it before the write."""
    reader = setup.readers[0]
    with Session(demo_engine) as s:
        stale = s.get(type(setup.study), setup.study.id)
        assert stale is not None and stale.status == "open"
        first = get_assignment(s, stale, reader, 1)
        assignment_id = first.id or 0
        with Session(demo_engine) as admin_session:
            lock_study(admin_session, admin_session.get(type(setup.study), setup.study.id))  # type: ignore[arg-type]
        for action in (lambda: submit_answer(s, stale, first, answer("sub-00000010")),
                       lambda: save_draft(s, stale, first, DraftIn(comment="late"))):
            with pytest.raises(StudyLocked):
                action()
    with Session(demo_engine) as s:
        assert s.scalars(select(Answer)).all() == [] and load_draft(s, assignment_id) is None


@pytest.mark.parametrize("changes, field", [
    ({"confidence": 9}, "confidence"), ({"tags": ["looks_odd"]}, "tags"),
    ({"compliance": "maybe"}, "compliance"), ({"overall": "fine"}, "overall"),
    ({"submission_id": "x"}, "submission_id"), ({"time_on_case_ms": -5}, "time_on_case_ms"),
])
def test_out_of_range_answers_are_refused(changes: dict, field: str) -> None:
    with pytest.raises(ValidationError) as error:
        answer(**changes)
    assert field in str(error.value)


def test_assignments_belong_to_their_reader(demo_engine: Engine, setup: StudySetup) -> None:
    with Session(demo_engine) as s:
        with pytest.raises(NotAssigned):
            get_assignment(s, setup.study, setup.outsider, 1)
        with pytest.raises(NotFound):
            get_assignment(s, setup.study, setup.readers[0], 99)


def test_the_blinded_view_holds_no_judge_data(demo_engine: Engine, setup: StudySetup) -> None:
    with Session(demo_engine) as s:
        first = get_assignment(s, setup.study, setup.readers[0], 1)
        view = read_view(s, setup.study, setup.readers[0], first)
        assert view.reveal is None and view.answer is None
        assert view.instruction and len(view.uid) == 24
        submit_answer(s, setup.study, first, answer())
        assert read_view(s, setup.study, setup.readers[0], first).reveal is None


def test_reveal_after_submit_says_agree_or_disagree(demo_engine: Engine) -> None:
    setup = make_study(demo_engine, reveal=Reveal.after_submit)
    with Session(demo_engine) as s:
        first = get_assignment(s, setup.study, setup.readers[0], 1)
        assert read_view(s, setup.study, setup.readers[0], first).reveal is None
        submit_answer(s, setup.study, first, answer(overall="accept"))
        reveal = read_view(s, setup.study, setup.readers[0], first).reveal
    # Every item is an accepted edit, so the judge qualified it: accepting agrees.
    assert reveal is not None and reveal["judge_accepts"] is True and reveal["agree"] is True


def test_the_answer_forms_ask_the_rubric_s_questions_in_order() -> None:
    from app.studies.adjudication import DecisionIn
    from app.studies.answers import RubricAnswers
    from pipeline.vocabulary import QUESTIONS

    assert tuple(RubricAnswers.model_fields) == QUESTIONS
    assert tuple(DecisionIn.model_fields)[:len(QUESTIONS)] == QUESTIONS
    assert tuple(DraftIn.model_fields)[:len(QUESTIONS)] == QUESTIONS
