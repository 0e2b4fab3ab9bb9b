"""Benchmark: the training exports on the 88K-task database (not part of the test suite).

    .venv/bin/python benchmarks/exports.py [--db var/bench/bench.db]

Run benchmarks/import_scale.py first; it leaves the database and its image tree behind. Each
export runs in a fresh process, with the images hard-linked (the folder is made beside the
image tree, on the same file system), and reports its wall time, rows, images and peak
memory. The curated subset keeps every accepted edit the readers did not fail (the benchmark
database has no preservation metrics to filter on). Goal: under 1 GiB of memory on 88K tasks.
"""

import argparse
import json
import shutil
import subprocess
import sys
from pathlib import Path

GOAL_MIB = 1024
CHILD = r'''
import json, sys, time
from pathlib import Path
sys.path.insert(0, sys.argv[1])
from app.db import make_engine
from app.exports import CuratedFilter, write_curated, write_pairs
from app.provenance.marker import Marker
from app.provenance.signing import own_identity

engine = make_engine(sys.argv[2])
target, kind = Path(sys.argv[3]), sys.argv[4]
marker = Marker(own_identity(target.parent / "c2pa"))
start = time.perf_counter()
if kind == "pairs":
    summary = write_pairs(engine, target, marker, link=True)
else:
    summary = write_curated(engine, target, CuratedFilter(), marker, link=True)
seconds = time.perf_counter() - start
peak = next(int(line.split()[1]) / 1024 for line in Path("/proc/self/status").read_text().splitlines()
            if line.startswith("VmHWM:"))
print(json.dumps({"seconds": round(seconds, 1), "rows": summary.rows, "images": summary.images,
                  "peak_mib": round(peak), "counts": summary.counts}))
'''


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--db", type=Path, default=Path("var/bench/bench.db"))
    args = parser.parse_args()
    if not args.db.is_file():
        sys.exit(f"{args.db} not found: run benchmarks/import_scale.py first")
    out = args.db.resolve().parent / "exports-benchmark"
    shutil.rmtree(out, ignore_errors=True)
    out.mkdir()
    repo = str(Path(__file__).resolve().parent.parent)
    worst = 0
    try:
        for kind in ("pairs", "curated"):
            result = subprocess.run(
                [sys.executable, "-c", CHILD, repo, f"sqlite:///{args.db.resolve()}",
                 str(out / kind), kind], capture_output=True, text=True, check=True)
            found = json.loads(result.stdout.strip().splitlines()[-1])
            worst = max(worst, found["peak_mib"])
            print(f"{kind:8s} {found['rows']:>7,} rows  {found['images']:>7,} images  "
                  f"{found['seconds']:>6.1f} s  peak {found['peak_mib']:>5} MiB   {found['counts']}")
    finally:
        shutil.rmtree(out, ignore_errors=True)
    print("PASS" if worst <= GOAL_MIB else f"FAIL: peak {worst} MiB is over {GOAL_MIB} MiB")


if __name__ == "__main__":
    main()
