"""The importer's search indexer: on SQLite a batch's documents go in from a second thread,
inside the caller's transaction, and are the documents the plain insert writes. (On
PostgreSQL it inserts them in the caller's thread: tests/test_postgres.py imports and searches.)"""

import sqlite3
import threading

import pytest
from sqlalchemy import text
from sqlalchemy.engine import Engine

from app.cases.search import Indexer, add_documents

DOCUMENTS = [(1, "pleural effusion, left"), (2, "a \"quoted\" reason\nover two lines"),
             (3, "naïve ünïcödé — and a tab\there")]


def rows(engine: Engine) -> list[tuple[int, str]]:
    with engine.connect() as conn:
        return [tuple(r) for r in conn.execute(text("SELECT rowid, body FROM task_search ORDER BY rowid"))]


def test_the_indexer_writes_what_the_plain_insert_writes_and_search_finds_it(engine: Engine) -> None:
    with engine.begin() as conn:
        add_documents(conn, DOCUMENTS, [])
    plain = rows(engine)
    with engine.begin() as conn:
        conn.execute(text("DELETE FROM task_search"))
    threads = []
    with engine.begin() as conn:
        indexer = Indexer(conn)
        indexer.add(DOCUMENTS[:2], [])
        indexer.add(DOCUMENTS[2:], [(1, "appended text")])
        threads = [t.name for t in threading.enumerate()]
        indexer.close()
    assert any(name.startswith("search-index") for name in threads)
    assert rows(engine)[1:] == plain[1:]
    assert rows(engine)[0] == (1, "pleural effusion, left\nappended text")
    with engine.connect() as conn:
        found = conn.execute(text("SELECT rowid FROM task_search WHERE task_search MATCH 'quoted'")).all()
    assert [r[0] for r in found] == [2]


def test_an_error_in_the_thread_is_raised_in_the_caller_and_the_transaction_rolls_back(
        engine: Engine) -> None:
    with pytest.raises(sqlite3.IntegrityError), engine.begin() as conn:
        indexer = Indexer(conn)
        try:
            indexer.add(DOCUMENTS, [])
            indexer.add(DOCUMENTS[:1], [])  # the same rowid again
        finally:
            indexer.close()
    assert rows(engine) == []

