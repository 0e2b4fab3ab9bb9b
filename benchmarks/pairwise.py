"""Benchmark: a pairwise study's strengths, and its pool on the 88K-task database (not part
of the test suite).

    .venv/bin/python benchmarks/pairwise.py [--reads 2000] [--images 500] [--rounds 5]
    .venv/bin/python benchmarks/pairwise.py --pool [--db var/bench/bench.db | --url postgres]

Reads of consecutive rounds drawn from Davidson's model (a tie propensity of 0.5, one read in
twenty both unacceptable), clustered by source image; times the strengths with their
cluster-bootstrap intervals (2,000 resamples, each refitted) and the two shares, as the
figures page computes them on its first view (it keeps them until an answer is added).

With ``--pool``: the new-study form's first view (every pair of each kind found and counted
by modality, direction and verdicts), through the ASGI app, and a draw of up to 20 pairs
per stratum (run benchmarks/import_scale.py first).
"""

import argparse
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from app.designs.pairwise.strengths import (
    EQUAL,
    FIRST,
    NEITHER,
    SECOND,
    PairRead,
    later_preferred,
    left_preferred,
    strength_figures,
)


def pool(db: Path, url: str | None) -> None:
    import secrets
    import tempfile

    from fastapi.testclient import TestClient
    from sqlmodel import Session

    from app.cases.filters import CaseFilter
    from app.db import make_engine, migrate
    from app.designs import PairKind, design_of
    from app.models import Role
    from app.settings import Settings
    from app.studies.design import StudyPlan
    from app.studies.design_traits import PAIR_FACETS, Design
    from app.web.main import create_app
    from app.web.templating import compile_templates
    from benchmarks import postgres
    from benchmarks.accounts import bench_admin_token, bench_user

    if not url and not db.is_file():
        sys.exit(f"{db} not found: run benchmarks/import_scale.py first")
    engine = make_engine(postgres.resolve(url, db))
    print(f"database: {engine.url.render_as_string()}")
    migrate(engine)
    compile_templates()
    client = TestClient(create_app(Settings(demo=True, var_dir=Path(tempfile.mkdtemp())), engine),
                        headers={"Authorization": f"Bearer {bench_admin_token(engine)}"})
    for kind in PairKind:
        start = time.perf_counter()
        page = client.get(f"/studies/new/pairwise?kind={kind}")
        first = time.perf_counter() - start
        start = time.perf_counter()
        client.get(f"/studies/new/pairwise?kind={kind}")
        again = time.perf_counter() - start
        print(f"GET /studies/new/pairwise?kind={kind:12s} first {first * 1000:6.0f} ms, "
              f"kept {again * 1000:5.0f} ms ({page.status_code})")
    # The first request above shares the machine with the server's start-up warming; a new
    # filter's first view now is the form's cold cost alone.
    start = time.perf_counter()
    page = client.get("/studies/new/pairwise?kind=consecutive&modality=chest_xray")
    print(f"GET /studies/new/pairwise?kind=consecutive&modality=chest_xray (a new filter) "
          f"{(time.perf_counter() - start) * 1000:6.0f} ms ({page.status_code})")
    admin = bench_user(engine, "bench-admin")
    reader = bench_user(engine, "bench-reader-00", Role.reader)
    design = design_of(Design.pairwise)
    with Session(engine) as session:
        plan = StudyPlan(name=f"bench pairs {secrets.token_hex(3)}", case_filter=CaseFilter(),
                         reader_ids=[reader.id or 0], design=Design.pairwise,
                         strata_facets=PAIR_FACETS, pair_kind=PairKind.consecutive.value)
        start = time.perf_counter()
        study = design.create(session, design.up_to(session, plan, 20), admin)
        made = time.perf_counter() - start
        print(f"draw up to 20 consecutive pairs per stratum and write the study: "
              f"{made * 1000:6.0f} ms ({study.name})")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--reads", type=int, default=2000)
    parser.add_argument("--images", type=int, default=500)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--pool", action="store_true", help="time the pair pool on the 88K tasks")
    parser.add_argument("--db", type=Path, default=Path("var/bench/bench.db"))
    parser.add_argument("--url", help="a database URL instead of --db; 'postgres' for the benchmark server")
    args = parser.parse_args()
    if args.pool:
        pool(args.db, args.url)
        return
    rng = np.random.default_rng(7)
    truth = np.linspace(0.0, 1.2, args.rounds)
    reads = []
    for n in range(args.reads):
        first = int(rng.integers(0, args.rounds - 1))
        a, b = np.exp(truth[first]), np.exp(truth[first + 1])
        both = 0.5 * np.sqrt(a * b)
        choice = str(rng.choice([FIRST, SECOND, EQUAL], p=np.array([a, b, both]) / (a + b + both)))
        if rng.random() < 0.05:
            choice = NEITHER
        reads.append(PairRead(first, first + 1, choice, bool(rng.random() < 0.5),
                              int(n % args.images)))
    start = time.perf_counter()
    found = strength_figures(args.rounds, reads)
    strengths = time.perf_counter() - start
    start = time.perf_counter()
    later, left = later_preferred(reads), left_preferred(reads)
    shares = time.perf_counter() - start
    print(f"{args.reads} reads of {args.rounds} rounds over {args.images} source images")
    print(f"strengths with intervals (2,000 resamples, each refitted): {strengths:6.2f} s")
    print(f"later round preferred and position bias:                {shares:6.2f} s")
    for k, figure in enumerate(found.log_strength):
        print(f"  round {k + 1}: {figure.value} [{figure.low}, {figure.high}] (truth {truth[k]:.2f})")
    print(f"  tie propensity: {found.tie}; later preferred {later.value:.3f}; left {left.value:.3f}")


if __name__ == "__main__":
    main()
