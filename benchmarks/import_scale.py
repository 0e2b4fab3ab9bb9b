"""Benchmark: import a scripts-format run of 88,457 tasks. Goals: <= 30 s and <= 1 GiB on
SQLite; on PostgreSQL, <= 1.5x the SQLite import of the same run, measured in the same run.

    .venv/bin/python benchmarks/import_scale.py [--work var/bench] [--postgres]

The tree is generated once under --work and reused; each database is made anew each run
(SQLite at var/bench/bench.db, PostgreSQL as the benchmark server's ``bench`` database,
see benchmarks/postgres.py). Each import runs in a fresh process, so its peak RSS is the
importer's alone. The other benchmarks read the databases this one leaves behind.
"""

import argparse
import json
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from benchmarks import postgres
from benchmarks.scale_tree import write_scale_tree

GOAL_SECONDS, GOAL_RSS_MIB, GOAL_POSTGRES_RATIO = 30.0, 1024.0, 1.5


def run_import(url: str, tree: Path) -> dict:
    child = Path(__file__).with_name("_import_child.py")
    out = subprocess.run([sys.executable, str(child), url, str(tree / "run"), str(tree / "source")],
                         check=True, capture_output=True, text=True, cwd=child.parent.parent)
    return json.loads(out.stdout.strip().splitlines()[-1])


def first_and_again(name: str, url: str, tree: Path) -> dict:
    first = run_import(url, tree)
    print(f"{name} first import: {first}")
    second = run_import(url, tree)
    print(f"{name} re-import:    {second}")
    if second["tasks_added"] != 0 or second["seconds"] >= first["seconds"]:
        print(f"{name}: the re-import added tasks or was not faster")
    return first


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--work", type=Path, default=Path("var/bench"))
    parser.add_argument("--postgres", action="store_true",
                        help="also import into the benchmark PostgreSQL server and compare")
    args = parser.parse_args()
    tree = args.work / "tree"
    start = time.perf_counter()
    tasks = write_scale_tree(tree)
    size = sum(p.stat().st_size for p in (tree / "run").glob("*/*.json"))
    prepared = time.perf_counter() - start
    print(f"tree: {tasks} tasks, {size / 1e6:.0f} MB of JSON ({prepared:.0f} s to prepare)")
    db = args.work / "bench.db"
    for suffix in ("", "-wal", "-shm"):
        Path(f"{db}{suffix}").unlink(missing_ok=True)
    sqlite = first_and_again("SQLite", f"sqlite:///{db.resolve()}", tree)
    ok = sqlite["seconds"] <= GOAL_SECONDS and sqlite["peak_rss_mib"] <= GOAL_RSS_MIB
    print(f"SQLite goal (<= {GOAL_SECONDS:.0f} s, <= {GOAL_RSS_MIB:.0f} MiB): {'met' if ok else 'NOT met'}")
    print(f"database: {db} ({db.stat().st_size / 1e6:.0f} MB)")
    if args.postgres:
        pg = first_and_again("PostgreSQL", postgres.database_url(fresh=True), tree)
        ratio = pg["seconds"] / sqlite["seconds"]
        print(f"PostgreSQL / SQLite: {ratio:.2f}x (goal <= {GOAL_POSTGRES_RATIO}x: "
              f"{'met' if ratio <= GOAL_POSTGRES_RATIO else 'NOT met'})")


if __name__ == "__main__":
    main()
