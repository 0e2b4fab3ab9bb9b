"""Full-text search over instructions and judge reasons, one document per task.

SQLite uses an FTS5 table (rowid = task id); PostgreSQL a tsvector column with a GIN
index, filled after the import's commit (migration 0027, app/importer/vectors.py). Both
are created by migration 0001; this module hides the difference.
"""

import re
import sqlite3
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass

import orjson
from sqlalchemy import (
    CTE,
    ColumnElement,
    Integer,
    TableClause,
    and_,
    bindparam,
    column,
    func,
    literal_column,
    or_,
    select,
    table,
    text,
)
from sqlalchemy.engine import Connection
from sqlmodel import col

from app import bulk
from app.models import Task

TOKEN = re.compile(r"\w+", re.UNICODE)
# Longer queries add little precision and cost index lookups per token.
MAX_TOKENS = 12


def add_documents(conn: Connection, new: list[tuple[int, str]], appended: list[tuple[int, str]]) -> None:
    """Index new tasks' text, and append a new run's text to existing tasks' documents.

    On PostgreSQL the documents' vectors are left empty (NULL) for ``fill_vectors``, which
    the importer runs from a second connection after the commit; until then a search
    reads those documents' bodies (see ``text_match``).
    """
    sqlite = conn.dialect.name == "sqlite"
    key = "rowid" if sqlite else "task_id"
    bulk.insert_rows(conn, "task_search", (key, "body"), new)
    if appended:
        if sqlite:
            change = "body = body || char(10) || :body"
        else:
            change = "body = body || E'\\n' || :body, tsv = NULL"
        conn.execute(
            text(f"UPDATE task_search SET {change} WHERE {key} = :id"),
            [{"id": task_id, "body": body} for task_id, body in appended],
        )


# FTS5 parses the documents' rows out of one JSON array, so that one statement inserts a
# batch: ->> needs SQLite 3.38.
_SQLITE_BATCH = ("INSERT INTO task_search (rowid, body) "
                 "SELECT value ->> 0, value ->> 1 FROM json_each(?)")


class Indexer:
    """``add_documents`` for one transaction, new documents indexed in a second thread on
    SQLite while the caller goes on with its next batch.

    FTS5's tokenising is a fifth of an import's time at 88K tasks, and it runs inside
    SQLite, outside the GIL, when one statement inserts a whole batch (one row per
    statement step would take the GIL back for every row, and wait for it). The statement
    runs on the caller's own connection, inside its transaction: SQLite's connection mutex
    orders it with the caller's statements. ``wait`` before anything that must follow it
    (a commit, a rollback, the next batch's documents)."""

    def __init__(self, conn: Connection) -> None:
        self.conn = conn
        # Only where the library is built serialized (threadsafety 3), so that one connection
        # may be used from two threads at once.
        threaded = (conn.dialect.name == "sqlite" and sqlite3.sqlite_version_info >= (3, 38)
                    and sqlite3.threadsafety == 3)
        self._thread = ThreadPoolExecutor(1, thread_name_prefix="search-index") if threaded else None
        self._pending: Future[None] | None = None

    def add(self, new: list[tuple[int, str]], appended: list[tuple[int, str]]) -> None:
        self.wait()
        if self._thread is None or not new:
            add_documents(self.conn, new, appended)
            return
        driver = self.conn.connection.driver_connection
        assert isinstance(driver, sqlite3.Connection)
        # Text, not bytes: SQLite 3.45 reads a blob as its binary JSON.
        self._pending = self._thread.submit(_insert_batch, driver, orjson.dumps(new).decode())
        add_documents(self.conn, [], appended)

    def wait(self) -> None:
        """Until the documents handed over are in; their error, if any, is raised here."""
        pending, self._pending = self._pending, None
        if pending is not None:
            pending.result()

    def close(self) -> None:
        try:
            self.wait()
        finally:
            if self._thread is not None:
                self._thread.shutdown()


def _insert_batch(driver: sqlite3.Connection, documents: str) -> None:
    driver.execute(_SQLITE_BATCH, (documents,)).close()


def fill_vectors(conn: Connection, task_ids: list[int] | None = None) -> None:
    """On PostgreSQL, compute the missing text-search vectors (of ``task_ids``, or of every
    document). SQLite's FTS5 indexes as it inserts."""
    if conn.dialect.name != "postgresql":
        return
    only = "" if task_ids is None else " AND task_id = ANY(:ids)"
    conn.execute(
        text(f"UPDATE task_search SET tsv = to_tsvector('english', body) WHERE tsv IS NULL{only}"),
        {} if task_ids is None else {"ids": task_ids})


def tokens(query: str) -> list[str]:
    return TOKEN.findall(query.lower())[:MAX_TOKENS]


@dataclass(frozen=True)
class TextMatch:
    """A join onto the search index: ``key`` equals Task.id and is what pages sort on,
    because FTS5 hands rowids out in order and can stop after one page."""

    table: TableClause
    key: ColumnElement[int]
    condition: ColumnElement[bool]


def text_match(dialect: str, query: str) -> TextMatch | None:
    """How to restrict tasks to those whose text has every word of ``query``.

    The last word matches as a prefix, so results appear while the user is still typing.
    Returns None when the query has no words at all.
    """
    words = tokens(query)
    if not words:
        return None
    if dialect == "sqlite":
        # Each word is quoted, so FTS5 operators typed by the user are plain words.
        match = " AND ".join([f'"{w}"' for w in words[:-1]] + [f'"{words[-1]}"*'])
        fts = table("task_search", column("rowid", Integer))
        condition = literal_column("task_search").op("MATCH")(bindparam("search_text", match))
        return TextMatch(fts, fts.c.rowid, condition)
    match = " & ".join([*words[:-1], f"{words[-1]}:*"])
    fts = table("task_search", column("task_id", Integer), column("tsv"), column("body"))
    wanted = func.to_tsquery("english", bindparam("search_text", match))
    # A document whose vector is not filled yet (an import still running, or one cut
    # short) is matched on its body; the partial index on "tsv IS NULL" finds those few.
    unfilled = and_(fts.c.tsv.is_(None), func.to_tsvector("english", fts.c.body).op("@@")(wanted))
    return TextMatch(fts, fts.c.task_id, or_(fts.c.tsv.op("@@")(wanted), unfilled))


# PostgreSQL walks the documents in task order and stops after a page: quick for a word most
# documents hold, but a word that few hold is looked for in all 88K (65 ms), since the
# planner cannot tell a rare prefix from a common one (it takes 2 % for any prefix). Below
# this many matches, the matches are found first through the text index (under 1 ms), and
# walking costs more than that from about 1,600 matches on (benchmarks/pages.py --url postgres).
FEW_MATCHES = 1000


def few_matches(count: int) -> bool:
    return count <= FEW_MATCHES


def matches_first(match: TextMatch) -> CTE:
    """The matching documents' ids found on their own, before the page's order is applied:
    on PostgreSQL a materialised CTE, which the text index answers as a bitmap."""
    found = select(match.key.label("task_id")).select_from(match.table).where(match.condition)
    return found.cte("text_hits").prefix_with("MATERIALIZED")


def matching_tasks(dialect: str, query: str) -> ColumnElement[bool] | None:
    """The same restriction as a WHERE clause on Task, for aggregate queries."""
    found = text_match(dialect, query)
    if found is None:
        return None
    return col(Task.id).in_(select(found.key).select_from(found.table).where(found.condition))
