"""Benchmark: the server's memory over repeated first views (issue 43). Goal: RSS after 20
rounds <= 1.3x RSS after the first, on each engine. Not part of the tests.

    .venv/bin/python benchmarks/memory.py [--db var/bench/bench.db] [--url postgres] [--rounds 20]

Each engine is measured in a process of its own (RSS is a process's), serving in-process
on one event loop (benchmarks/serving.py) the 1,000-case x 3-reader study of
benchmarks/ratios.py and a locked copy of it (the leaderboard scores judges against a locked
study). A round is what a busy day does to a long-running server: a new read, every cache
forgotten (as a start leaves them), and the first view of the agreement page, /quality, the
study form, the pairwise form and the leaderboard. RSS is read after each round.
"""

import argparse
import gc
import statistics
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from sqlmodel import Session

from app.db import make_engine
from app.memo import forget_all
from app.studies.models import Study, StudyStatus
from app.studies.versions import lock_study
from benchmarks import postgres
from benchmarks.ratios import rss_mib, served, study_of

GOAL_RATIO = 1.3
LOCKED = "bench memory locked 1000x3"


def locked_study(engine: object) -> int:
    sid, _ = study_of(engine, name=LOCKED)  # type: ignore[arg-type]
    with Session(engine) as session:  # type: ignore[arg-type]
        study = session.get(Study, sid)
        assert study is not None
        if study.status != StudyStatus.locked:
            lock_study(session, study)
    return sid


def measure(label: str, url: str, rounds: int) -> None:
    engine = make_engine(url)
    s, context = served(label, engine)
    locked = locked_study(engine)
    pages = (f"/studies/{s.study}/agreement", f"/quality?study={s.study}", "/studies/new",
             "/studies/new/pairwise", f"/judges/leaderboard?study={locked}")
    rss, seconds = [], []
    for n in range(rounds):
        s.new_read()
        forget_all()
        took = 0.0
        for url_ in pages:
            page, _, _ = s.timed(url_)
            took += page
        gc.collect()  # what is left is held, not garbage waiting for a collection
        rss.append(rss_mib())
        seconds.append(took / 1000)
        print(f"{label} round {n + 1} of {rounds}: RSS {rss[-1]:.0f} MiB ({took / 1000:.1f} s of views)",
              flush=True)
    ratio = rss[-1] / rss[0]
    print(f"{label}: RSS after the first round {rss[0]:.0f} MiB, after round {rounds} {rss[-1]:.0f} MiB "
          f"(max {max(rss):.0f}): {ratio:.2f}x; goal <= {GOAL_RATIO}x: "
          f"{'met' if ratio <= GOAL_RATIO else 'NOT met'}; a round's views took a median "
          f"{statistics.median(seconds):.1f} s")
    context.__exit__(None, None, None)  # type: ignore[attr-defined]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--db", type=Path, default=Path("var/bench/bench.db"))
    parser.add_argument("--url", help="'postgres' (the benchmark server) or a URL: a second engine")
    parser.add_argument("--rounds", type=int, default=20)
    parser.add_argument("--engine", help=argparse.SUPPRESS)  # a child's one engine
    args = parser.parse_args()
    if not args.db.is_file():
        sys.exit(f"{args.db} not found: run benchmarks/import_scale.py first")
    if args.engine:
        measure(args.engine, postgres.resolve(args.url if args.engine == "PostgreSQL" else None, args.db),
                args.rounds)
        return
    for engine in ("SQLite", "PostgreSQL") if args.url else ("SQLite",):
        subprocess.run([sys.executable, __file__, "--db", str(args.db), "--rounds", str(args.rounds),
                        "--engine", engine, *(["--url", args.url] if args.url else [])], check=True)


if __name__ == "__main__":
    main()
