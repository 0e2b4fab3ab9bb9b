"""The pause on a study's reads: only known answers pause a reader, a few reads after the test
fires; a reader who disagrees with the others while right on the known answers is flagged,
never paused; nobody is paused in practice, and a burst of checks pauses a reader once."""

import threading

from sqlalchemy.engine import Engine
from sqlmodel import Session, col, select

from app.readers.checks import reader_checks
from app.readers.pause import active_pause, check_reader, open_pause, watch_reader
from app.studies.answers import AnswerIn, submit_answer
from app.studies.models import Assignment, Design
from app.studies.reader_models import ReaderPause
from app.studies.worklist import get_assignment
from tests.known_answers import settled_by_sequence
from tests.readers.test_figures_without_known import mark_edits
from tests.studies.conftest import StudySetup, make_study

YES = {"compliance": "yes", "structure": "yes", "realism": "yes", "fidelity": "yes", "overall": "accept"}
NO = {"compliance": "no", "structure": "no", "realism": "no", "fidelity": "no", "overall": "reject"}
FLIP = {"yes": "no", "no": "yes", "accept": "reject", "reject": "accept"}


def _settled(engine: Engine, setup: StudySetup, index: int) -> dict[int, dict[str, str]]:
    return settled_by_sequence(engine, setup.study.id or 0, setup.readers[index].id or 0)


def _read(engine: Engine, setup: StudySetup, index: int, ordinary: dict[str, str],
          wrong_from: int | None = None, upto: int | None = None) -> None:
    """The reader answers in their order: ordinary cases with ``ordinary``, known-answer cases
    right, or wrong from their ``wrong_from``-th known-answer case on."""
    reader = setup.readers[index]
    settled = _settled(engine, setup, index)
    known_order = sorted(settled)
    with Session(engine) as session:
        total = session.scalars(select(col(Assignment.sequence)).where(
            col(Assignment.study_id) == setup.study.id, col(Assignment.user_id) == reader.id)).all()
        for sequence in range(1, (upto or len(total)) + 1):
            read = get_assignment(session, setup.study, reader, sequence)
            if sequence in settled:
                wrong = wrong_from is not None and known_order.index(sequence) >= wrong_from
                given = YES | {q: FLIP[a] if wrong else a for q, a in settled[sequence].items()}
            else:
                given = ordinary
            submit_answer(session, setup.study, read, AnswerIn(
                **given, confidence=3, time_on_case_ms=30_000 + 97 * sequence,
                submission_id=f"p{index}-{sequence:04d}-xx"))


def test_a_reader_right_on_the_known_answers_is_never_paused_for_disagreeing(demo_engine: Engine) -> None:
    """Reader 0 disagrees with reader 1 on every ordinary case, and is right on every
    known-answer case: flagged for the organiser, never paused (the others may be wrong).
    The old agreement test paused them."""
    mark_edits(demo_engine, 40)
    setup = make_study(demo_engine, design=Design.validation, known_share=0.5)
    _read(demo_engine, setup, 1, YES)
    with Session(demo_engine) as session:
        total = len(session.scalars(select(Assignment).where(
            col(Assignment.study_id) == setup.study.id,
            col(Assignment.user_id) == setup.readers[0].id)).all())
    settled = _settled(demo_engine, setup, 0)
    # Half the ordinary cases agree, then reader 0 rejects every ordinary case reader 1
    # accepted: the split is where the run's secret puts the middle ordinary case (a fixed
    # read number left as few as five before it on some secrets, too few to flag).
    ordinary = [n for n in range(1, total + 1) if n not in settled]
    upto = ordinary[len(ordinary) // 2 - 1]
    _read(demo_engine, setup, 0, YES, upto=upto)
    with Session(demo_engine) as session:
        for sequence in range(upto + 1, total + 1):
            read = get_assignment(session, setup.study, setup.readers[0], sequence)
            given = YES | settled[sequence] if sequence in settled else NO
            submit_answer(session, setup.study, read, AnswerIn(
                **given, confidence=3, time_on_case_ms=30_000, submission_id=f"q0-{sequence:04d}-xx"))
    assert watch_reader(demo_engine, setup.study.id or 0, setup.readers[0].id or 0) is None
    with Session(demo_engine) as session:
        assert not session.scalars(select(ReaderPause)).all()
        checks = reader_checks(session, setup.study)
        assert checks is not None
        flags = checks.flags[setup.readers[0].id or 0]
        assert flags.agreement is not None
        assert "Agreement with the other readers fell" in flags.agreement.reason


def test_a_reader_whose_known_answers_go_wrong_is_paused_a_few_reads_later(demo_engine: Engine) -> None:
    mark_edits(demo_engine, 40)
    setup = make_study(demo_engine, design=Design.validation, known_share=0.5)
    _read(demo_engine, setup, 1, YES)
    # Up to the 14th known-answer case, the last 6 of them wrong: wherever the reader's own
    # order puts them (the study's secret differs each run), the test fires there.
    upto = sorted(_settled(demo_engine, setup, 0))[13]
    _read(demo_engine, setup, 0, YES, wrong_from=8, upto=upto)
    study_id, user_id = setup.study.id or 0, setup.readers[0].id or 0
    paused = watch_reader(demo_engine, study_id, user_id)
    assert paused is not None and paused.cause == "accuracy"
    assert "Known-answer accuracy fell" in paused.reason
    assert paused.effective_after is not None
    assert upto + 1 <= paused.effective_after <= min(upto + 8, 32)
    with Session(demo_engine) as session:
        # Pending: the reader reads on until the drawn number of further reads is done.
        assert open_pause(session, study_id, user_id) is not None
        assert active_pause(session, study_id, user_id) is None
    # Once paused, watching again adds no second pause.
    assert watch_reader(demo_engine, study_id, user_id) is None
    with Session(demo_engine) as session:
        for sequence in range(upto + 1, paused.effective_after + 1):
            read = get_assignment(session, setup.study, setup.readers[0], sequence)
            submit_answer(session, setup.study, read, AnswerIn(
                **YES, confidence=3, time_on_case_ms=30_000, submission_id=f"r0-{sequence:04d}-xx"))
        assert active_pause(session, study_id, user_id) is not None
        assert len(session.scalars(select(ReaderPause)).all()) == 1


def test_readers_right_throughout_are_not_paused(demo_engine: Engine) -> None:
    mark_edits(demo_engine, 40)
    setup = make_study(demo_engine, design=Design.validation, known_share=0.5)
    _read(demo_engine, setup, 1, YES)
    _read(demo_engine, setup, 0, YES)
    with Session(demo_engine) as session:
        for reader in setup.readers:
            assert check_reader(session, setup.study, reader.id or 0) is None


def test_nobody_is_paused_in_practice(demo_engine: Engine) -> None:
    """A practice study is for learning: every answer wrong pauses nobody there."""
    from app.studies.practice import create_practice

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
    mark_edits(demo_engine, 40)
    setup = make_study(demo_engine, design=Design.validation, known_share=0.5)
    _read(demo_engine, setup, 0, YES, wrong_from=8)
    study_id, user_id = setup.study.id or 0, setup.readers[0].id or 0
    threads = [threading.Thread(target=watch_reader, args=(demo_engine, study_id, user_id))
               for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    with Session(demo_engine) as session:
        assert len(session.scalars(select(ReaderPause)).all()) == 1
