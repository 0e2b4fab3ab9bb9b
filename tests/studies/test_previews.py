"""Drawing a new study's images before its readers see it."""

import shutil
import threading
from pathlib import Path

import pytest
from sqlalchemy.engine import Engine
from sqlmodel import Session

from app.db import make_engine
from app.studies import previews
from app.studies.models import Study
from tests.studies.conftest import make_study


def test_a_study_of_another_database_with_the_same_number_does_not_hold_this_one_back(
        demo_engine: Engine, demo_db: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Studies are numbered per database: while one database's study 1 was being drawn, a
    second database's study 1 was taken for it and left preparing (a flaky test found it)."""
    setup = make_study(demo_engine)
    study_id = setup.study.id or 0
    shutil.copy(demo_db, tmp_path / "other.db")
    other = make_engine(f"sqlite:///{tmp_path / 'other.db'}")
    with Session(demo_engine) as session:
        found = session.get(Study, study_id)
        assert found is not None
        found.images_ready = False
        session.add(found)
        session.commit()
    release, entered = threading.Event(), threading.Event()
    real = previews._warm

    def held(engine: Engine, sid: int, cache: Path) -> int:
        if engine is other:  # the other database's study of the same number, still drawing
            entered.set()
            release.wait(10)
            return 0
        return real(engine, sid, cache)

    monkeypatch.setattr(previews, "_warm", held)
    drawing = threading.Thread(target=previews.warm_previews, args=(other, study_id, tmp_path / "c"))
    drawing.start()
    try:
        assert entered.wait(5)
        assert previews.warm_previews(demo_engine, study_id, tmp_path / "cache") > 0
        with Session(demo_engine) as session:
            ready = session.get(Study, study_id)
            assert ready is not None and ready.images_ready
    finally:
        release.set()
        drawing.join()
        other.dispose()


def test_drawing_holds_no_transaction_between_items(demo_engine: Engine, tmp_path: Path,
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    """Each item's reads end their own transaction: the drawing never holds one open across
    a study's items while readers write."""
    setup = make_study(demo_engine)
    open_at_start: list[bool] = []
    real = previews._draw_item

    def watched(session: Session, *args: object) -> int:
        open_at_start.append(session.in_transaction())
        return real(session, *args)  # type: ignore[arg-type]

    monkeypatch.setattr(previews, "_draw_item", watched)
    drawn = previews._warm(demo_engine, setup.study.id or 0, tmp_path / "cache")
    assert drawn == len(open_at_start) == 8
    assert not any(open_at_start)
