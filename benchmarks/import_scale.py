"""Benchmark: import a scripts-format run of 88,457 tasks. Goal: <= 30 s and <= 1 GiB.

    .venv/bin/python benchmarks/import_scale.py [--work var/bench]

The tree is generated once under --work and reused; the database is made anew each run.
Each import runs in a fresh process, so its peak RSS is the importer's alone.
"""

import argparse
import json
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from benchmarks.scale_tree import write_scale_tree

GOAL_SECONDS, GOAL_RSS_MIB = 30.0, 1024.0


def run_import(url: str, tree: Path) -> dict:
    child = Path(__file__).with_name("_import_child.py")
    out = subprocess.run([sys.executable, str(child), url, str(tree / "run"), str(tree / "source")],
                         check=True, capture_output=True, text=True, cwd=child.parent.parent)
    return json.loads(out.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--work", type=Path, default=Path("var/bench"))
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
    url = f"sqlite:///{db.resolve()}"
    first = run_import(url, tree)
    print(f"first import: {first}")
    second = run_import(url, tree)
    print(f"re-import:    {second}")
    ok = (first["seconds"] <= GOAL_SECONDS and first["peak_rss_mib"] <= GOAL_RSS_MIB
          and second["seconds"] < first["seconds"] and second["tasks_added"] == 0)
    print(f"goal (<= {GOAL_SECONDS:.0f} s, <= {GOAL_RSS_MIB:.0f} MiB, re-import faster): "
          f"{'met' if ok else 'NOT met'}")
    print(f"database: {db} ({db.stat().st_size / 1e6:.0f} MB)")


if __name__ == "__main__":
    main()
