"""The rows the log vouches for: each answer version and adjudication decision is recorded
with the SHA-256 of its content, so a row changed, removed or slipped in afterwards is found
(app/audit/verify.py). Tables by name, so that the log needs none of the features that own
them (they call it, app/studies/answers.py)."""

import hashlib
import json
from collections.abc import Mapping
from datetime import UTC, datetime
from typing import Any

from sqlalchemy import MetaData, Table, column, table
from sqlalchemy.engine import Connection
from sqlmodel import SQLModel

# The append-only tables whose every row the log records.
VOUCHED = ("answer", "real_or_edited_answer", "pair_answer", "adjudication")


def canonical(value: Any) -> str:
    """One text for one value: sorted keys, no spaces, times in ISO 8601 in UTC."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False,
                      default=_plain)


def _plain(value: Any) -> str:
    if isinstance(value, datetime):  # in UTC, as every database here gives it back
        if value.tzinfo is not None:
            value = value.astimezone(UTC).replace(tzinfo=None)
        return value.isoformat(timespec="microseconds")
    raise TypeError(f"{type(value).__name__} is not recorded")


def vouched_table(name: str, connection: Connection | None = None) -> Table:
    """The table as the model declares it; read from the database when no model of it was
    imported in this process (a command that never touches the studies)."""
    found = SQLModel.metadata.tables.get(name)
    if found is not None:
        return found
    if connection is None:
        return table(name, column("id"))  # type: ignore[return-value]
    return Table(name, MetaData(), autoload_with=connection)


def row_digest(table: Table, values: Mapping[str, Any]) -> str:
    """The SHA-256 of every column of the row, as stored."""
    return hashlib.sha256(canonical({c.name: values[c.name] for c in table.columns}).encode()
                          ).hexdigest()


def model_digest(row: SQLModel) -> tuple[str, str]:
    """(table name, digest) of a model instance, once flushed."""
    table = vouched_table(row.__tablename__)  # type: ignore[arg-type]
    return table.name, row_digest(table, {c.name: getattr(row, c.name) for c in table.columns})
