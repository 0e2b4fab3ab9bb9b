"""The query plans of a benchmark's heaviest statements, printed after its timings.

    heavy = watch_queries(engine)
    ...  # the timed work
    heavy.print_plans(engine)

Every statement the engine runs is timed from before to after the cursor's execute (SQLite
computes most rows as they are fetched, so there it ranks by the time to the first row,
PostgreSQL by the whole query); the slowest few distinct statements are explained with the
engine's own EXPLAIN (SQLite's EXPLAIN QUERY PLAN, PostgreSQL's EXPLAIN), with the
parameters they ran with.
"""

import threading
import time
from dataclasses import dataclass, field
from typing import Any

from sqlalchemy import event
from sqlalchemy.engine import Engine


@dataclass
class Heaviest:
    top: int = 4
    seen: dict[str, tuple[float, Any, int]] = field(default_factory=dict)

    def note(self, statement: str, parameters: Any, seconds: float) -> None:
        if not statement.lstrip().upper().startswith(("SELECT", "WITH")):
            return
        worst, _, count = self.seen.get(statement, (0.0, None, 0))
        if seconds >= worst:
            self.seen[statement] = (seconds, parameters, count + 1)
        else:
            self.seen[statement] = (worst, self.seen[statement][1], count + 1)

    def print_plans(self, engine: Engine) -> None:
        sqlite = engine.dialect.name == "sqlite"
        ranked = sorted(self.seen.items(), key=lambda item: -item[1][0])[:self.top]
        print(f"\nplans of the {len(ranked)} slowest statements ({engine.dialect.name}):")
        for statement, (seconds, parameters, count) in ranked:
            print(f"\n-- {seconds * 1000:.0f} ms at worst, run {count}x:")
            print("   " + " ".join(statement.split())[:400])
            explain = "EXPLAIN QUERY PLAN " if sqlite else "EXPLAIN "
            with engine.connect() as conn:
                rows = conn.exec_driver_sql(explain + statement, parameters).all()
            for row in rows:
                print("   | " + (row[-1] if sqlite else row[0]))


def watch_queries(engine: Engine, top: int = 4) -> Heaviest:
    """Time every statement ``engine`` runs from now on (for the rest of the process)."""
    heavy = Heaviest(top)

    def before(conn: Any, cursor: Any, statement: str, parameters: Any, context: Any,
               executemany: bool) -> None:
        conn.info.setdefault("bench_started", []).append(time.perf_counter())

    def after(conn: Any, cursor: Any, statement: str, parameters: Any, context: Any,
              executemany: bool) -> None:
        started = conn.info.get("bench_started")
        if not started:  # began before the watch did
            return
        seconds = time.perf_counter() - started.pop()
        if not executemany:
            heavy.note(statement, parameters, seconds)

    event.listen(engine, "before_cursor_execute", before)
    event.listen(engine, "after_cursor_execute", after)
    return heavy


# The app's own background threads (app/web/main.py): their statements are not a page's.
BACKGROUND = frozenset({"prepare-studies", "judged-pool", "warm-figures", "compile-templates",
                        "settle-heap"})


@dataclass
class Recorded:
    """Every statement ``engine`` ran inside ``capture()``, with its parameters, to replay on
    a raw connection: a page's own SQL, the floor its server time is measured against."""

    engine: Engine
    statements: list[tuple[str, Any]] = field(default_factory=list)
    threads: list[str] = field(default_factory=list)
    on: bool = False

    def __post_init__(self) -> None:
        def before(conn: Any, cursor: Any, statement: str, parameters: Any, context: Any,
                   executemany: bool) -> None:
            name = threading.current_thread().name
            if self.on and not executemany and name not in BACKGROUND:
                self.threads.append(name)
                self.statements.append((statement, parameters))

        event.listen(self.engine, "before_cursor_execute", before)

    def capture(self) -> "Recorded":
        self.statements, self.threads = [], []
        return self

    def __enter__(self) -> "Recorded":
        self.on = True
        return self

    def __exit__(self, *exc: object) -> None:
        self.on = False

    def replay(self) -> float:
        """Seconds to run every captured read again on one raw DBAPI connection, every row
        fetched: what the database itself costs the page. Writes are not replayed."""
        reads = [(s, p) for s, p in self.statements
                 if s.lstrip().upper().startswith(("SELECT", "WITH", "PRAGMA"))]
        raw = self.engine.raw_connection()
        try:
            cursor = raw.cursor()
            start = time.perf_counter()
            for statement, parameters in reads:
                cursor.execute(statement, parameters)
                cursor.fetchall()
            seconds = time.perf_counter() - start
            cursor.close()
            raw.rollback()
        finally:
            raw.close()
        return seconds

    @property
    def count(self) -> int:
        return len(self.statements)


def record_queries(engine: Engine) -> Recorded:
    return Recorded(engine)
