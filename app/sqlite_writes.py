"""One writer at a time on a SQLite file, taken in turn within the process.

SQLite lets one connection write at a time; another that tries gets SQLITE_BUSY, and its busy
handler sleeps 1, 2, 5, 10, 15, 20, 25 ... ms between tries, however soon the writer is done.
Two readers' answers a millisecond apart then cost the second one 20 ms or more of sleep, and
at fifty readers those sleeps were most of the next case's time at the 95th percentile. Here
the writers of one process wait on a lock instead, which wakes the next one as soon as the
first commits. Writers in other processes (a second worker, the pipeline worker) still meet
the busy handler, as before.

A connection takes its turn where the sqlite3 module opens a transaction (before an INSERT,
UPDATE, DELETE or REPLACE) and gives it back when the transaction ends: commit, rollback
(SQLAlchemy's pool rolls back every connection it takes back) or close.
"""

import re
import sqlite3
import threading
import weakref
from pathlib import Path
from typing import Any

# The busy timeout's length: a writer that waits longer gets SQLite's own error.
WAIT = 30.0
# The statements the sqlite3 module opens a transaction for (after comments and spaces).
_OPENS = re.compile(r"(?:\s|--[^\n]*(?:\n|$)|/\*.*?\*/)*(?:insert|update|delete|replace)\b",
                    re.IGNORECASE | re.DOTALL)


class _Turn:
    """The write turn of one database file: a lock any thread may give back (a session can
    write in a route's thread and be closed in another), with who holds it."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.holder: weakref.ref[TurnConnection] | None = None

    def take(self, connection: "TurnConnection") -> None:
        if not self.lock.acquire(timeout=WAIT):
            holder = self.holder() if self.holder is not None else None
            if holder is not None:
                raise sqlite3.OperationalError("database is locked")
            # Its holder was dropped without a close: nobody will give the turn back.
            self.holder = None
        self.holder = weakref.ref(connection)

    def give_back(self) -> None:
        self.holder = None
        self.lock.release()


_turns: dict[str, _Turn] = {}
_turns_lock = threading.Lock()


def _turn_of(database: Any) -> _Turn | None:
    name = str(database)
    if name in ("", ":memory:") or name.startswith("file:"):
        return None  # a private database per connection: nobody to take turns with
    key = str(Path(name).resolve())
    with _turns_lock:
        return _turns.setdefault(key, _Turn())


class TurnCursor(sqlite3.Cursor):
    def execute(self, sql: str, parameters: Any = (), /) -> "TurnCursor":
        self.connection.take_turn(sql)  # type: ignore[attr-defined]
        return super().execute(sql, parameters)

    def executemany(self, sql: str, parameters: Any, /) -> "TurnCursor":
        self.connection.take_turn(sql)  # type: ignore[attr-defined]
        return super().executemany(sql, parameters)


class TurnConnection(sqlite3.Connection):
    """sqlite3.connect(..., factory=TurnConnection): the connection class of make_engine."""

    def __init__(self, database: Any, *args: Any, **kwargs: Any) -> None:
        super().__init__(database, *args, **kwargs)
        self._turn = _turn_of(database)
        self._holding = False

    def take_turn(self, sql: str) -> None:
        if self._turn is None or self._holding or self.isolation_level is None:
            return
        if _OPENS.match(sql):
            self._turn.take(self)
            self._holding = True

    def _give_back(self) -> None:
        if self._holding and self._turn is not None:
            self._holding = False
            self._turn.give_back()

    def cursor(self, factory: Any = TurnCursor) -> Any:
        return super().cursor(factory)

    # The C implementation of these makes a plain cursor, not through cursor() above.
    def execute(self, sql: str, parameters: Any = (), /) -> Any:
        return self.cursor().execute(sql, parameters)

    def executemany(self, sql: str, parameters: Any, /) -> Any:
        return self.cursor().executemany(sql, parameters)

    def commit(self) -> None:
        try:
            super().commit()
        finally:
            # A commit that failed (SQLITE_BUSY from another process) leaves the
            # transaction open: the turn is kept until its rollback.
            if not self.in_transaction:
                self._give_back()

    def rollback(self) -> None:
        try:
            super().rollback()
        finally:
            self._give_back()

    def close(self) -> None:
        try:
            super().close()
        finally:
            self._give_back()
