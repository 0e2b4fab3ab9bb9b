"""Primary keys handed out before a bulk insert, so children can reference their parents
without one RETURNING round trip per row."""

from sqlalchemy import text
from sqlalchemy.engine import Connection


class IdAllocator:
    """Valid for one transaction that has already written (so it holds SQLite's write lock)."""

    def __init__(self, conn: Connection) -> None:
        self.conn = conn
        self._next: dict[str, int] = {}

    def take(self, table: str, count: int) -> list[int]:
        if count == 0:
            return []
        if self.conn.dialect.name == "postgresql":
            rows = self.conn.execute(
                text("SELECT nextval(pg_get_serial_sequence(:t, 'id')) FROM generate_series(1, :n)"),
                {"t": table, "n": count},
            )
            return [row[0] for row in rows]
        if table not in self._next:
            # Safe: the caller's transaction already wrote, so no other writer can interleave.
            start = self.conn.execute(text(f"SELECT coalesce(max(id), 0) + 1 FROM {table}"))
            self._next[table] = int(start.scalar_one())
        first = self._next[table]
        self._next[table] = first + count
        return list(range(first, first + count))
