"""Benchmark: `medbanana import` of the 88K-task run against a floor writing the same rows.
Goal (issue 43): <= 1.5x, start-up and migrations included.

    .venv/bin/python benchmarks/import_floor.py [--work var/bench] [--rounds 3]

The app's side is the command a user runs, timed from its start to its exit: a fresh
process on a fresh SQLite database, so the interpreter's start-up, the imports, the
migrations, the reading, the checks and the writing are all in it.

The floor is the least any importer must do to end with the same database: parse every JSON
file of the run (orjson, the fastest parser installed) and insert exactly the rows the app
wrote, no more and no fewer, with sqlite3's executemany and the app's pragmas, into a
database whose schema the app's migrations made beforehand (outside the timing). The rows are
read, outside the timing, from a database the app imported, so the floor writes what the app
writes by construction; after each floor the two databases are compared table by table,
every column but the timestamps, and a difference stops the benchmark. The floor checks
nothing and computes nothing: no image is looked for, no field validated, no fingerprint
taken, so it is lower than any importer can be.

The sides run A B A B; each pair's ratio is reported with the min, median and max.
"""

import argparse
import os
import sqlite3
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import orjson

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from app.db import make_engine, migrate

GOAL_RATIO = 1.5
# Written by the clock, not by the data: left out of the comparison.
VOLATILE = frozenset({"created_at", "imported_at"})
# The FTS5 table's own shadow tables follow from its rows.
SKIPPED = ("alembic_version", "sqlite_", "task_search_")


def app_import(db: Path, tree: Path) -> float:
    """Wall seconds of `medbanana import` in a fresh process, on a fresh database."""
    drop(db)
    env = os.environ | {"MEDBANANA_DATABASE_URL": f"sqlite:///{db.resolve()}"}
    command = [str(Path(sys.executable).with_name("medbanana")), "import", str(tree / "run"),
               "--source", str(tree / "source")]
    start = time.perf_counter()
    subprocess.run(command, check=True, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    return time.perf_counter() - start


def tables(conn: sqlite3.Connection) -> list[str]:
    names = [n for (n,) in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name")]
    return [n for n in names if not n.startswith(SKIPPED)]


def columns(conn: sqlite3.Connection, table: str) -> list[str]:
    """Quoted: some columns are named with SQL words ("plan", "on")."""
    return [f'"{row[1]}"' for row in conn.execute(f'PRAGMA table_info("{table}")')]


def rows_of(db: Path) -> dict[str, tuple[list[str], list[tuple[Any, ...]]]]:
    """Every row the app wrote, table by table, in insertion order (rowid)."""
    conn = sqlite3.connect(db)
    found = {}
    for table in tables(conn):
        names = columns(conn, table)
        rows = conn.execute(f'SELECT {", ".join(names)} FROM "{table}" ORDER BY rowid').fetchall()
        if rows:
            found[table] = (names, rows)
    search = conn.execute("SELECT rowid, body FROM task_search ORDER BY rowid").fetchall()
    conn.close()
    found["task_search"] = (["rowid", "body"], search)
    return found


# Parents before children, as the foreign keys want them (every table the import writes).
ORDER = ("data_root", "import_file", "source_image", "task", "run", "attempt", "judge_verdict",
         "import_problem", "task_search")


def floor_import(db: Path, run_root: Path, rows: dict[str, tuple[list[str], list[tuple[Any, ...]]]],
                 files: int) -> float:
    """Seconds to parse every JSON file of the run and insert ``rows``, in as many
    transactions as the run has files (the app commits once per file)."""
    drop(db)
    engine = make_engine(f"sqlite:///{db.resolve()}")
    migrate(engine)  # the same tables, indexes, triggers and FTS5 table as the app's
    engine.dispose()
    paths = sorted(run_root.glob("*/*.json"))
    start = time.perf_counter()
    conn = sqlite3.connect(db, isolation_level=None)
    for pragma in ("journal_mode=WAL", "synchronous=FULL", "foreign_keys=ON"):
        conn.execute(f"PRAGMA {pragma}")
    for path in paths:
        orjson.loads(path.read_bytes())
    # Parents before children, cut into as many transactions as the run has files.
    every = [(table, row) for table in ORDER for row in rows.get(table, ([], []))[1]]
    for part in range(files):
        share = every[part * len(every) // files:(part + 1) * len(every) // files]
        conn.execute("BEGIN")
        for table in ORDER:
            found = [row for t, row in share if t == table]
            if found:
                names = rows[table][0]
                marks = ", ".join("?" * len(names))
                conn.executemany(f'INSERT INTO "{table}" ({", ".join(names)}) VALUES ({marks})', found)
        conn.execute("COMMIT")
    conn.close()
    return time.perf_counter() - start


def compare(floor_db: Path, app_db: Path) -> list[str]:
    """Every table whose rows differ between the two databases, timestamps aside."""
    a, b = sqlite3.connect(floor_db), sqlite3.connect(app_db)
    differences = []
    for table in sorted(set(tables(a)) | set(tables(b))):
        names = [c for c in columns(b, table) if c.strip('"') not in VOLATILE]
        query = f'SELECT {", ".join(names) or "1"} FROM "{table}" ORDER BY rowid'
        if a.execute(query).fetchall() != b.execute(query).fetchall():
            differences.append(table)
    search = "SELECT rowid, body FROM task_search ORDER BY rowid"
    if a.execute(search).fetchall() != b.execute(search).fetchall():
        differences.append("task_search")
    return differences


def drop(db: Path) -> None:
    for suffix in ("", "-wal", "-shm"):
        Path(f"{db}{suffix}").unlink(missing_ok=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--work", type=Path, default=Path("var/bench"))
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    tree = args.work / "tree"
    if not (tree / "run").is_dir():
        sys.exit(f"{tree / 'run'}: no benchmark tree; run benchmarks/import_scale.py first")
    floor_db, app_db = args.work / "floor.db", args.work / "floor-app.db"
    first = app_import(app_db, tree)  # the rows the floor writes, and a warm file cache
    rows = rows_of(app_db)
    files = len(rows["import_file"][1])
    print(f"the app's rows: {', '.join(f'{t} {len(r[1])}' for t, r in rows.items())} "
          f"(first import {first:.1f} s, not counted)")
    ratios, floors, apps = [], [], []
    for n in range(args.rounds):
        floor = floor_import(floor_db, tree / "run", rows, files)
        app = app_import(app_db, tree)
        differences = compare(floor_db, app_db)
        if differences:
            sys.exit(f"the floor's rows differ from the app's in: {', '.join(differences)}")
        floors.append(floor)
        apps.append(app)
        ratios.append(app / floor)
        print(f"round {n + 1}: floor {floor:.1f} s, medbanana import {app:.1f} s, "
              f"ratio {app / floor:.2f}x (rows identical)")
    median = statistics.median(ratios)
    verdict = "met" if median <= GOAL_RATIO else "NOT met"
    print(f"medbanana import / floor: min {min(ratios):.2f}x, median {median:.2f}x, max {max(ratios):.2f}x "
          f"(n={len(ratios)}; floor median {statistics.median(floors):.1f} s, import median "
          f"{statistics.median(apps):.1f} s); goal <= {GOAL_RATIO}x: {verdict}")
    drop(floor_db)
    drop(app_db)


if __name__ == "__main__":
    main()
