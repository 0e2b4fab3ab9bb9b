"""The next batch of an adaptive study: drawn when a reader's list runs low, from what was
read, with its images drawn before its reads are placed; never past the budget or once the
targets are met; one batch when two ask at once."""

import json
from pathlib import Path

from sqlalchemy.engine import Engine
from sqlmodel import Session, col, select

from app.designs.adaptive.top_up import top_up
from app.models import User
from app.studies.answers import AnswerIn, submit_answer
from app.studies.models import Study, StudyBatch, StudyDraw
from app.studies.worklist import next_open, reader_progress
from tests.designs.adaptive.test_study import make_adaptive
from tests.web.routes.test_study_targets import set_targets


def read_all(engine: Engine, study_id: int) -> int:
    """Every reader answers every read in their list (accept all); how many answers."""
    given = 0
    with Session(engine) as session:
        study = session.get(Study, study_id)
        assert study is not None
        users = session.scalars(select(User).where(col(User.name).like("adaptive-reader-%"))).all()
        for user in users:
            while (open_read := next_open(session, study, user)) is not None:
                submit_answer(session, study, open_read, AnswerIn(
                    compliance="yes", structure="yes", realism="yes", fidelity="yes",
                    overall="accept", confidence=3,
                    submission_id=f"submit-{study_id}-{user.id}-{open_read.id}"))
                given += 1
    return given


def batch_rows(engine: Engine, study_id: int) -> list[StudyBatch]:
    with Session(engine) as session:
        return list(session.scalars(select(StudyBatch).where(col(StudyBatch.study_id) == study_id)
                                    .order_by(col(StudyBatch.batch))))


def test_a_reader_running_low_gets_the_next_batch_drawn_from_what_was_read(
        demo_engine: Engine, tmp_path: Path) -> None:
    study = make_adaptive(demo_engine, batch=4, total=20)
    assert study.id is not None
    assert top_up(demo_engine, study.id, tmp_path) is None  # a whole batch left to read
    read_all(demo_engine, study.id)
    placed = top_up(demo_engine, study.id, tmp_path)
    assert placed is not None and placed.batch == 1
    rows = batch_rows(demo_engine, study.id)
    assert [b.ready for b in rows] == [True, True]
    state = json.loads(rows[1].state)
    # Learned from every read edit: its attempt and whether the readers overturned the judge.
    assert state["unit"] == "edit" and state["observed"]
    assert all(isinstance(o["attempt"], int) and isinstance(o["overturned"], bool)
               for o in state["observed"])
    with Session(demo_engine) as session:
        found = session.get(Study, study.id)
        assert found is not None
        users = session.scalars(select(User).where(col(User.name).like("adaptive-reader-%"))).all()
        assert all(reader_progress(session, found, u.id or 0).done
                   < reader_progress(session, found, u.id or 0).total for u in users)
    assert list(tmp_path.rglob("*")), "the new cases' images were drawn before they were placed"


def test_no_batch_past_the_budget(demo_engine: Engine, tmp_path: Path) -> None:
    study = make_adaptive(demo_engine, batch=4, total=4)
    assert study.id is not None
    read_all(demo_engine, study.id)
    assert top_up(demo_engine, study.id, tmp_path) is None
    with Session(demo_engine) as session:
        assert len(session.scalars(select(StudyDraw).where(col(StudyDraw.study_id) == study.id)).all()) == 4


def test_no_batch_once_every_target_is_met(demo_engine: Engine, tmp_path: Path) -> None:
    study = make_adaptive(demo_engine, batch=4, total=40)
    assert study.id is not None
    set_targets(demo_engine, study.id, '{"agreement": 0.5}')
    read_all(demo_engine, study.id)
    assert top_up(demo_engine, study.id, tmp_path) is None
    assert len(batch_rows(demo_engine, study.id)) == 1


def test_a_batch_left_half_done_is_finished_by_the_next_top_up(demo_engine: Engine, tmp_path: Path) -> None:
    from app.designs.adaptive.batches import draw_batch, frozen_pool

    study = make_adaptive(demo_engine, batch=4, total=40)
    with Session(demo_engine) as session:
        found = session.get(Study, study.id)
        assert found is not None
        draw_batch(session, found, frozen_pool(session, found), [], 1, 4)
        session.commit()  # recorded, its items made, but nothing placed: a restart here
    finished = top_up(demo_engine, study.id or 0, tmp_path)
    assert finished is not None and finished.batch == 1 and finished.ready


def test_a_batch_is_placed_once_when_two_requests_finish_it(demo_engine: Engine) -> None:
    """Two top-ups can both find a batch unfinished; the second to place it must place
    nothing, or every reader would read its cases twice."""
    from app.designs.adaptive.batches import draw_batch, frozen_pool, place_batch
    from app.studies.models import Assignment

    study = make_adaptive(demo_engine, batch=4, total=40)
    with Session(demo_engine) as first, Session(demo_engine) as second:
        found = first.get(Study, study.id)
        assert found is not None
        batch, _ = draw_batch(first, found, frozen_pool(first, found), [], 1, 4)
        first.commit()
        before = len(first.scalars(select(Assignment)).all())
        other = second.get(StudyBatch, batch.id)
        other_study = second.get(Study, study.id)
        assert other is not None and other_study is not None
        assert place_batch(second, other_study, other)
        second.commit()
        assert not place_batch(first, found, batch)
        first.rollback()
        after = first.scalars(select(Assignment)).all()
        assert len(after) > before
        pairs = [(a.user_id, a.item_id) for a in after]
        assert len(pairs) == len(set(pairs))  # no reader has a case twice
