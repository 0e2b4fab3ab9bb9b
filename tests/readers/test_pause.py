"""The pause tests on a study's reads: a reader who stops agreeing with the other readers is
paused by the agreement test; a reader who agrees throughout is not."""

from sqlalchemy.engine import Engine
from sqlmodel import Session, select

from app.readers.pause import check_reader, watch_reader
from app.studies.answers import AnswerIn, submit_answer
from app.studies.models import Design
from app.studies.reader_models import ReaderPause
from app.studies.worklist import get_assignment
from tests.studies.conftest import StudySetup, make_study

YES = {"compliance": "yes", "structure": "yes", "realism": "yes", "fidelity": "yes", "overall": "accept"}
NO = {"compliance": "no", "structure": "no", "realism": "no", "fidelity": "no", "overall": "reject"}


def _read_all(engine: Engine, setup: StudySetup, index: int, flip_after: int | None) -> None:
    reader = setup.readers[index]
    with Session(engine) as session:
        for sequence in range(1, 17):
            read = get_assignment(session, setup.study, reader, sequence)
            given = NO if flip_after is not None and sequence > flip_after else YES
            submit_answer(session, setup.study, read, AnswerIn(
                **given, confidence=3, time_on_case_ms=30_000 + 97 * sequence,
                submission_id=f"p{index}-{sequence:04d}-xx"))


def test_a_reader_who_stops_agreeing_with_the_others_is_paused(demo_engine: Engine) -> None:
    setup = make_study(demo_engine, design=Design.validation)
    _read_all(demo_engine, setup, 1, None)
    _read_all(demo_engine, setup, 0, flip_after=6)
    paused = watch_reader(demo_engine, setup.study.id or 0, setup.readers[0].id or 0)
    assert paused is not None and paused.cause == "agreement"
    assert "Agreement with the other readers fell" in paused.reason
    # Once paused, watching again adds no second pause.
    assert watch_reader(demo_engine, setup.study.id or 0, setup.readers[0].id or 0) is None
    with Session(demo_engine) as session:
        assert len(session.scalars(select(ReaderPause)).all()) == 1


def test_readers_who_agree_throughout_are_not_paused(demo_engine: Engine) -> None:
    setup = make_study(demo_engine, design=Design.validation)
    _read_all(demo_engine, setup, 1, None)
    _read_all(demo_engine, setup, 0, None)
    with Session(demo_engine) as session:
        for reader in setup.readers:
            assert check_reader(session, setup.study, reader.id or 0) is None


def test_nobody_is_paused_in_practice(demo_engine: Engine) -> None:
    """A practice study is for learning: every answer wrong pauses nobody there."""
    from app.studies.practice import create_practice
    from tests.readers.test_figures_without_known import mark_edits

    mark_edits(demo_engine, 12)
    setup = make_study(demo_engine, design=Design.validation)
    reader = setup.readers[0]
    with Session(demo_engine) as session:
        practice = create_practice(session, name="learn", cases=10, reader_ids=[reader.id or 0],
                                   created_by=setup.admin)
        for sequence in range(1, 11):
            read = get_assignment(session, practice, reader, sequence)
            submit_answer(session, practice, read, AnswerIn(
                **(NO if sequence % 2 else YES), confidence=3,
                submission_id=f"learn-{sequence:04d}-xx"))
        practice_id = practice.id or 0
    assert watch_reader(demo_engine, practice_id, reader.id or 0) is None


def test_answers_in_quick_succession_pause_a_reader_once(demo_engine: Engine) -> None:
    """Four checks of one reader at once (four answers sent together) make one pause."""
    import threading

    setup = make_study(demo_engine, design=Design.validation)
    _read_all(demo_engine, setup, 1, None)
    _read_all(demo_engine, setup, 0, flip_after=6)
    study_id, user_id = setup.study.id or 0, setup.readers[0].id or 0
    threads = [threading.Thread(target=watch_reader, args=(demo_engine, study_id, user_id))
               for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    with Session(demo_engine) as session:
        assert len(session.scalars(select(ReaderPause)).all()) == 1
