"""Bulk inserts as plain tuples straight to the driver's executemany.

SQLAlchemy's per-row parameter processing costs more than SQLite's own insert for
hundreds of thousands of rows. Only the values that need a type conversion are
converted, once, by the caller (see ``db_value``).
"""

from collections.abc import Sequence
from typing import Any

from sqlalchemy import Table
from sqlalchemy.engine import Connection


def db_value(conn: Connection, table: Table, column: str, value: Any) -> Any:
    """``value`` as the driver wants it, via the column type's own bind processor."""
    processor = table.c[column].type.bind_processor(conn.dialect)
    return processor(value) if processor else value


def insert_rows(conn: Connection, table: Table, columns: Sequence[str],
                rows: Sequence[Sequence[Any]]) -> None:
    if not rows:
        return
    marker = "?" if conn.dialect.paramstyle == "qmark" else "%s"
    sql = (f"INSERT INTO {table.name} ({', '.join(columns)}) "
           f"VALUES ({', '.join([marker] * len(columns))})")
    conn.exec_driver_sql(sql, list(rows))
