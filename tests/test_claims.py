"""Background work claimed once across server processes: another process's claim is seen."""

import subprocess
import sys
import threading
from pathlib import Path

import pytest
from sqlalchemy.engine import Engine

from app.claims import claimed
from app.db import make_engine
from tests.pg_server import PostgresServer

HOLD = """
import sys
from app.claims import claimed
from app.db import make_engine
with claimed(make_engine(sys.argv[1]), ("prepare", 7)) as mine:
    print("held" if mine else "not held", flush=True)
    sys.stdin.read()
"""


def _other_process_holds(url: str) -> subprocess.Popen[str]:
    holder = subprocess.Popen([sys.executable, "-c", HOLD, url], stdin=subprocess.PIPE,
                              stdout=subprocess.PIPE, text=True, cwd=Path(__file__).parents[1])
    assert holder.stdout is not None and holder.stdout.readline().strip() == "held"
    return holder


def _check_across_processes(engine: Engine, url: str) -> None:
    holder = _other_process_holds(url)
    try:
        with claimed(engine, ("prepare", 7)) as mine:
            assert not mine
        with claimed(engine, ("prepare", 8)) as mine:  # another key is free
            assert mine
    finally:
        assert holder.stdin is not None
        holder.stdin.close()
        holder.wait(30)
    with claimed(engine, ("prepare", 7)) as mine:  # freed when the other process ended
        assert mine


def test_sqlite_a_claim_held_in_another_process_is_not_taken(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'c.db'}"
    _check_across_processes(make_engine(url), url)


def test_postgres_a_claim_held_in_another_process_is_not_taken(pg_server: PostgresServer) -> None:
    url = pg_server.create_database("claims")
    engine = make_engine(url)
    _check_across_processes(engine, url)
    engine.dispose()


def test_a_waiting_claim_is_had_once_the_holder_lets_go(tmp_path: Path) -> None:
    engine = make_engine(f"sqlite:///{tmp_path / 'c.db'}")
    order: list[str] = []
    held = threading.Event()

    def first() -> None:
        with claimed(engine, "k") as mine:
            assert mine
            held.set()
            threading.Event().wait(0.3)
            order.append("first done")

    thread = threading.Thread(target=first)
    thread.start()
    held.wait(10)
    with claimed(engine, "k") as mine:
        assert not mine
    with claimed(engine, "k", wait=30) as mine:
        assert mine
        order.append("second")
    thread.join()
    assert order == ["first done", "second"]


@pytest.mark.parametrize("database", ["", ":memory:"])
def test_a_private_database_needs_no_claim(database: str) -> None:
    with claimed(make_engine(f"sqlite:///{database}"), "k") as mine:
        assert mine
