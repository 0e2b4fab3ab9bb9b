"""Bulk inserts as plain tuples straight to the driver: COPY on PostgreSQL, executemany on
SQLite; and the primary keys handed out before them, so that children can reference their
parents without one RETURNING round trip per row.

SQLAlchemy's per-row parameter processing costs more than SQLite's own insert for
hundreds of thousands of rows. Only the values that need a type conversion are
converted, once, by the caller (see ``db_value``). On PostgreSQL even a pipelined
executemany sends one statement per row; COPY streams them all as one.
"""

from collections.abc import Sequence
from datetime import datetime
from typing import Any

from sqlalchemy import Table, text
from sqlalchemy.engine import Connection


def db_value(conn: Connection, table: Table, column: str, value: Any) -> Any:
    """``value`` as the driver wants it, via the column type's own bind processor. On SQLite
    a datetime becomes the text sqlite3's default adapter makes of it, once, instead of once
    per row of an executemany (and that adapter is deprecated from Python 3.12)."""
    processor = table.c[column].type.bind_processor(conn.dialect)
    found = processor(value) if processor else value
    if conn.dialect.name == "sqlite" and isinstance(found, datetime):
        return found.isoformat(" ")
    return found


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
        types = _column_types(conn, name, columns)
        # Binary: the server takes each value as it is, instead of parsing its text (the
        # import's 400 MB of instructions and reasons).
        with driver.cursor() as cursor, cursor.copy(
                f"COPY {name} ({', '.join(columns)}) FROM STDIN (FORMAT BINARY)") as copy:
            copy.set_types(types)
            for row in rows:
                copy.write_row(row)
        return
    marker = "?" if conn.dialect.paramstyle == "qmark" else "%s"
    sql = (f"INSERT INTO {name} ({', '.join(columns)}) "
           f"VALUES ({', '.join([marker] * len(columns))})")
    conn.exec_driver_sql(sql, list(rows))


def _column_types(conn: Connection, table: str, columns: Sequence[str]) -> list[str]:
    """The PostgreSQL type of each column, as binary COPY needs them named."""
    rows = conn.execute(text(
        "SELECT attname, format_type(atttypid, NULL) FROM pg_attribute "
        "WHERE attrelid = CAST(:table AS regclass) AND attnum > 0 AND NOT attisdropped"),
        {"table": table})
    found = {name: kind for name, kind in rows}
    return [found[c] for c in columns]


# PostgreSQL hands ids out from the table's sequence in blocks of at least this many: one
# round trip per new task would cost more than the task's insert. Ids a block leaves unused
# are gaps, which a sequence has anyway after any rollback.
BLOCK = 4096


class IdAllocator:
    """Valid for one transaction that has already written (so it holds SQLite's write lock).
    ``block``: the fewest ids taken from a PostgreSQL sequence at once (1 for a one-off)."""

    def __init__(self, conn: Connection, block: int = BLOCK) -> None:
        self.conn, self.block = conn, block
        self._next: dict[str, int] = {}
        self._reserved: dict[str, list[int]] = {}

    def take(self, table: str, count: int) -> list[int]:
        if count == 0:
            return []
        if self.conn.dialect.name == "postgresql":
            return self._take_from_sequence(table, count)
        if table not in self._next:
            # Safe: the caller's transaction already wrote, so no other writer can interleave.
            start = self.conn.execute(text(f"SELECT coalesce(max(id), 0) + 1 FROM {table}"))
            self._next[table] = int(start.scalar_one())
        first = self._next[table]
        self._next[table] = first + count
        return list(range(first, first + count))

    def _take_from_sequence(self, table: str, count: int) -> list[int]:
        reserved = self._reserved.setdefault(table, [])
        if len(reserved) < count:
            rows = self.conn.execute(
                text("SELECT nextval(pg_get_serial_sequence(:t, 'id')) FROM generate_series(1, :n)"),
                {"t": table, "n": max(count - len(reserved), self.block)},
            )
            # Kept largest first, so that taking from the end hands ids out in order.
            reserved[:0] = sorted((row[0] for row in rows), reverse=True)
        taken = reserved[-count:]
        del reserved[-count:]
        return taken[::-1]
