"""Bulk inserts as plain tuples straight to the driver: COPY on PostgreSQL, executemany on
SQLite.

SQLAlchemy's per-row parameter processing costs more than SQLite's own insert for
hundreds of thousands of rows. Only the values that need a type conversion are
converted, once, by the caller (see ``db_value``). On PostgreSQL even a pipelined
executemany sends one statement per row; COPY streams them all as one.
"""

from collections.abc import Sequence
from typing import Any

from sqlalchemy import Table
from sqlalchemy.engine import Connection


def db_value(conn: Connection, table: Table, column: str, value: Any) -> Any:
    """``value`` as the driver wants it, via the column type's own bind processor."""
    processor = table.c[column].type.bind_processor(conn.dialect)
    return processor(value) if processor else value


def insert_rows(conn: Connection, table: Table | str, columns: Sequence[str],
                rows: Sequence[Sequence[Any]]) -> None:
    """Insert ``rows`` (tuples in the order of ``columns``) inside ``conn``'s transaction."""
    if not rows:
        return
    name = table if isinstance(table, str) else table.name
    if conn.dialect.name == "postgresql":
        # The driver's own connection is the one holding the transaction, so the COPY
        # commits or rolls back with the rest of the file.
        driver = conn.connection.driver_connection
        assert driver is not None
        with driver.cursor() as cursor, cursor.copy(
                f"COPY {name} ({', '.join(columns)}) FROM STDIN") as copy:
            for row in rows:
                copy.write_row(row)
        return
    marker = "?" if conn.dialect.paramstyle == "qmark" else "%s"
    sql = (f"INSERT INTO {name} ({', '.join(columns)}) "
           f"VALUES ({', '.join([marker] * len(columns))})")
    conn.exec_driver_sql(sql, list(rows))
