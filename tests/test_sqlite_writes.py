"""One writer at a time in the process, waking the next at once: with SQLite's busy handler
switched off, a second writer still never sees 'database is locked'."""

import gc
import sqlite3
import threading
from pathlib import Path

import pytest
from sqlalchemy import text

from app import sqlite_writes
from app.db import make_engine
from app.sqlite_writes import TurnConnection


def _connect(path: Path) -> sqlite3.Connection:
    connection = sqlite3.connect(path, factory=TurnConnection, check_same_thread=False)
    connection.execute("PRAGMA busy_timeout=0")  # SQLite alone would fail the second writer
    return connection


def _table(path: Path) -> None:
    with sqlite3.connect(path) as connection:
        connection.execute("PRAGMA journal_mode=WAL")
        connection.execute("CREATE TABLE t (x INTEGER)")


def test_a_second_writer_waits_for_the_first_to_commit(tmp_path: Path) -> None:
    path = tmp_path / "w.db"
    _table(path)
    first, second = _connect(path), _connect(path)
    first.execute("INSERT INTO t VALUES (1)")
    done = threading.Event()
    failed: list[BaseException] = []

    def write() -> None:
        try:
            second.execute("/* a comment */ UPDATE t SET x = x + 1")
            second.commit()
        except BaseException as error:
            failed.append(error)
        done.set()

    thread = threading.Thread(target=write)
    thread.start()
    assert not done.wait(0.3)  # it waits for its turn, not for SQLite's error
    first.commit()
    thread.join(10)
    assert failed == []
    assert first.execute("SELECT x FROM t").fetchall() == [(2,)]


@pytest.mark.parametrize("end", ["rollback", "close"])
def test_a_rollback_or_close_gives_the_turn_back(tmp_path: Path, end: str) -> None:
    path = tmp_path / "w.db"
    _table(path)
    first, second = _connect(path), _connect(path)
    first.execute("INSERT INTO t VALUES (1)")
    getattr(first, end)()
    second.execute("INSERT INTO t VALUES (2)")
    second.commit()
    assert second.execute("SELECT x FROM t").fetchall() == [(2,)]


def test_reads_and_a_private_database_take_no_turn(tmp_path: Path) -> None:
    path = tmp_path / "w.db"
    _table(path)
    first, second = _connect(path), _connect(path)
    first.execute("INSERT INTO t VALUES (1)")
    assert second.execute("SELECT count(*) FROM t").fetchall() == [(0,)]
    memory = sqlite3.connect(":memory:", factory=TurnConnection)
    memory.execute("CREATE TABLE u (x)")
    memory.execute("INSERT INTO u VALUES (1)")
    first.commit()


def test_a_holder_dropped_without_closing_does_not_stop_writes_for_ever(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sqlite_writes, "WAIT", 0.2)
    path = tmp_path / "w.db"
    _table(path)
    lost = _connect(path)
    lost.execute("INSERT INTO t VALUES (1)")
    del lost
    gc.collect()
    second = _connect(path)
    second.execute("PRAGMA busy_timeout=5000")
    second.execute("INSERT INTO t VALUES (2)")
    second.commit()
    assert second.execute("SELECT x FROM t").fetchall() == [(2,)]


def test_the_engine_s_sessions_take_turns(tmp_path: Path) -> None:
    engine = make_engine(f"sqlite:///{tmp_path / 'e.db'}", request_threads=4)
    with engine.begin() as connection:
        connection.execute(text("CREATE TABLE t (x INTEGER)"))
    failed: list[BaseException] = []

    def write(n: int) -> None:
        try:
            for _ in range(20):
                with engine.begin() as connection:
                    connection.execute(text("PRAGMA busy_timeout=0"))
                    connection.execute(text("INSERT INTO t VALUES (:n)"), {"n": n})
        except BaseException as error:
            failed.append(error)

    threads = [threading.Thread(target=write, args=(n,)) for n in range(6)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(30)
    assert failed == []
    with engine.connect() as connection:
        assert connection.execute(text("SELECT count(*) FROM t")).scalar() == 120
    engine.dispose()
