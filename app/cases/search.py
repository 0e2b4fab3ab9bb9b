"""Full-text search over instructions and judge reasons, one document per task.

SQLite uses an FTS5 table (rowid = task id); PostgreSQL a tsvector column with a GIN
index. Both are created by migration 0001; this module hides the difference.
"""

import re
from dataclasses import dataclass

from sqlalchemy import (
    ColumnElement,
    Integer,
    TableClause,
    bindparam,
    column,
    func,
    literal_column,
    select,
    table,
    text,
)
from sqlalchemy.engine import Connection
from sqlmodel import col

from app.models import Task

TOKEN = re.compile(r"\w+", re.UNICODE)
# Longer queries add little precision and cost index lookups per token.
MAX_TOKENS = 12


def add_documents(conn: Connection, new: list[tuple[int, str]], appended: list[tuple[int, str]]) -> None:
    """Index new tasks' text, and append a new run's text to existing tasks' documents."""
    sqlite = conn.dialect.name == "sqlite"
    key = "rowid" if sqlite else "task_id"
    sep = "char(10)" if sqlite else "E'\\n'"
    if new:
        conn.execute(
            text(f"INSERT INTO task_search ({key}, body) VALUES (:id, :body)"),
            [{"id": task_id, "body": body} for task_id, body in new],
        )
    if appended:
        conn.execute(
            text(f"UPDATE task_search SET body = body || {sep} || :body WHERE {key} = :id"),
            [{"id": task_id, "body": body} for task_id, body in appended],
        )


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
    fts = table("task_search", column("task_id", Integer), column("tsv"))
    condition = fts.c.tsv.op("@@")(func.to_tsquery("english", bindparam("search_text", match)))
    return TextMatch(fts, fts.c.task_id, condition)


def matching_tasks(dialect: str, query: str) -> ColumnElement[bool] | None:
    """The same restriction as a WHERE clause on Task, for aggregate queries."""
    found = text_match(dialect, query)
    if found is None:
        return None
    return col(Task.id).in_(select(found.key).select_from(found.table).where(found.condition))
