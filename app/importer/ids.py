"""Primary keys handed out before a bulk insert, so children can reference their parents
without one RETURNING round trip per row."""

from sqlalchemy import text
from sqlalchemy.engine import Connection

# PostgreSQL hands ids out from the table's sequence in blocks of at least this many: one
# round trip per new task would cost more than the task's insert. Ids a block leaves unused
# are gaps, which a sequence has anyway after any rollback.
BLOCK = 4096


class IdAllocator:
    """Valid for one transaction that has already written (so it holds SQLite's write lock)."""

    def __init__(self, conn: Connection) -> None:
        self.conn = conn
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
                {"t": table, "n": max(count - len(reserved), BLOCK)},
            )
            # Kept largest first, so that taking from the end hands ids out in order.
            reserved[:0] = sorted((row[0] for row in rows), reverse=True)
        taken = reserved[-count:]
        del reserved[-count:]
        return taken[::-1]
