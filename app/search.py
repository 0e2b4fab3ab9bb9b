"""Full-text search over instructions and judge reasons, one document per task.

SQLite uses an FTS5 table (rowid = task id); PostgreSQL a tsvector column with a GIN
index. Both are created by migration 0001; this module hides the difference.
"""

import re

from sqlalchemy import ColumnElement, Integer, column, text
from sqlalchemy.engine import Connection

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


def matching_tasks(dialect: str, query: str) -> ColumnElement[bool] | None:
    """A WHERE clause on Task for the tasks whose text has every word of ``query``.

    The last word matches as a prefix, so results appear while the user is still typing.
    Returns None when the query has no words at all.
    """
    words = tokens(query)
    if not words:
        return None
    if dialect == "sqlite":
        # Each word is quoted, so FTS5 operators typed by the user are plain words.
        match = " AND ".join([f'"{w}"' for w in words[:-1]] + [f'"{words[-1]}"*'])
        sql = "SELECT rowid FROM task_search WHERE task_search MATCH :search_text"
    else:
        match = " & ".join([*words[:-1], f"{words[-1]}:*"])
        sql = "SELECT task_id FROM task_search WHERE tsv @@ to_tsquery('english', :search_text)"
    subquery = text(sql).bindparams(search_text=match).columns(column("id", Integer))
    return Task.id.in_(subquery)  # type: ignore[union-attr]
