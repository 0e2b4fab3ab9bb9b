"""Benchmark: the judges' leaderboard of 10 candidates on a 1,000-edit reference (not part of
the test suite).

    .venv/bin/python benchmarks/leaderboard.py [--db var/bench/bench.db | --postgres] [--cases 1000]
                                               [--sentinel]

Run benchmarks/import_scale.py first; this works on a copy of its database. It draws a
1,000-edit validation study, stores two readers' answers (each agreeing with the judge of
record 85 % of the time) and locks it, then stores the answers of ten offline candidates
directly (two repeats each and an order-bias run; each agrees with the readers' consensus at
its own rate), as a scoring job would. It times the page's first view through the ASGI app
(nothing of it is cached; the page computes the question it shows), another question, the
first again (kept until an answer is added), and all five questions at once. Goal: the first
view <= 1 s. With --sentinel the reference is a sentinel set instead: the same number of
edits, drawn whole from two locked studies of half the size each.
"""

import argparse
import os
import random
import secrets
import shutil
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from fastapi.testclient import TestClient
from sqlalchemy import insert
from sqlmodel import Session, col, select

from app.cases.filters import CaseFilter
from app.db import make_engine, migrate
from app.judges.candidates import CandidatePlan, create_candidate
from app.judges.models import CandidateVerdict
from app.judges.reference import Ref, SentinelPlan, create_sentinel
from app.judges.scoring import leaderboard
from app.models import Role, User
from app.settings import Settings
from app.studies.design import StudyPlan, create_study
from app.studies.models import Answer, Assignment, Design, Study, StudyItem
from app.studies.versions import lock_study
from app.web.main import create_app
from benchmarks import postgres
from benchmarks.accounts import bench_token, bench_user
from benchmarks.plans import watch_queries
from pipeline.judge_spec import default_template

GOAL_S = 1.0
CANDIDATES = 10
QUESTIONS = ("compliance", "structure", "realism", "fidelity")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--db", type=Path, default=Path("var/bench/bench.db"))
    parser.add_argument("--cases", type=int, default=1000)
    parser.add_argument("--postgres", action="store_true",
                        help="a copy of the benchmark PostgreSQL server's bench database instead")
    parser.add_argument("--sentinel", action="store_true",
                        help="a sentinel set drawn from two locked studies as the reference")
    args = parser.parse_args()
    if not args.postgres and not args.db.is_file():
        sys.exit(f"{args.db} not found: run benchmarks/import_scale.py first")
    work = Path(tempfile.mkdtemp())
    if args.postgres:
        engine = make_engine(postgres.copy_of_bench("bench_leaderboard"))
    else:
        print(f"copying {args.db} ...", flush=True)
        shutil.copyfile(args.db, work / "leaderboard.db")
        engine = make_engine(f"sqlite:///{work / 'leaderboard.db'}")
    migrate(engine)
    admin = bench_user(engine, "bench-admin")
    readers = [bench_user(engine, f"bench-reader-{i:02d}", Role.reader) for i in range(2)]
    parts = 2 if args.sentinel else 1
    rng = random.Random(5)
    truth: dict[int, bool] = {}
    study_of: dict[int, int] = {}
    with Session(engine) as session:
        for part in range(parts):
            study_id = _locked_study(session, admin, readers, args.cases // parts, 11 + part, rng,
                                     truth)
            study_of.update({item: study_id for item in truth if item not in study_of})
        reference = f"study={study_id}"
        if args.sentinel:
            drawn = create_sentinel(session, SentinelPlan(
                f"bench sentinels {secrets.token_hex(3)}", sorted(set(study_of.values()))),
                admin.id)
            reference = f"sentinel={drawn.id}"
        made = []
        for i in range(CANDIDATES):
            one = create_candidate(session, CandidatePlan(
                name=f"bench candidate {secrets.token_hex(3)} {i}", backend="offline",
                model="offline-heuristic-1", template=default_template(), repeats=2), admin.id)
            made.append((one.id, one.version, one.created_at))
    verdicts = []
    for i, (candidate_id, version, created_at) in enumerate(made):
        accuracy = 0.70 + 0.025 * i
        for item_id, right in truth.items():
            for repeat, first in ((0, False), (1, False), (0, True)):
                said = right if rng.random() < accuracy else not right
                verdicts.append({"candidate_id": candidate_id, "study_id": study_of[item_id],
                                 "item_id": item_id, "repeat": repeat, "original_first": first,
                                 **dict.fromkeys(QUESTIONS, said), "qualified": said,
                                 "has_disease": said, "weighted_score": round(rng.random(), 3),
                                 "spec_version": version, "created_at": created_at})
    with engine.begin() as conn:
        conn.execute(insert(CandidateVerdict), verdicts)
    print(f"database: a copy of the bench database ({engine.url.render_as_string()})")
    print(f"reference ({reference}): {len(truth)} edits x 2 readers, locked; {CANDIDATES} candidates, "
          f"{len(verdicts):,} stored answers")
    os.sync()
    heavy = watch_queries(engine)
    settings = Settings(demo=True, var_dir=work / "var")
    token = bench_token(engine, "bench-admin")
    client = TestClient(create_app(settings, engine), headers={"Authorization": f"Bearer {token}"})
    client.get("/accounts")  # the server is up and has served a page
    times = []
    for question in ("overall", "realism", "overall"):
        start = time.perf_counter()
        page = client.get(f"/judges/leaderboard?{reference}&question={question}")
        times.append(time.perf_counter() - start)
        assert page.status_code == 200, page.status_code
    with Session(engine) as session:
        start = time.perf_counter()
        kind, number = reference.split("=")
        boards = leaderboard(session, Ref("sentinel" if kind == "sentinel" else "study", int(number)))
        alone = time.perf_counter() - start
    top = boards["overall"].rows[0]
    print(f"GET /judges/leaderboard, first view:          {times[0]:6.2f} s   (goal <= {GOAL_S:.0f} s)")
    print(f"GET /judges/leaderboard, another question:    {times[1]:6.2f} s")
    print(f"GET /judges/leaderboard, again:               {times[2]:6.2f} s")
    print(f"all five questions at once (the CLI's JSON):  {alone:6.2f} s")
    print(f"best on overall: {top.name}, agreement {top.figures['agreement'].value:.3f}; "
          f"ranks: {' > '.join(' = '.join(t) for t in boards['overall'].tiers())}")
    print("PASS" if times[0] <= GOAL_S else "FAIL: the first view is over the goal")
    heavy.print_plans(engine)
    engine.dispose()
    shutil.rmtree(work, ignore_errors=True)
    if args.postgres:
        postgres.drop("bench_leaderboard")


def _locked_study(session: Session, admin: User, readers: list[User], cases: int, seed: int,
                  rng: random.Random, truth: dict[int, bool]) -> int:
    """A validation study of ``cases`` edits, both readers' answers stored (each agreeing with
    the judge of record 85 % of the time), locked; its items' consensus added to ``truth``."""
    strata = [f"{v}/{m}" for v in ("pass", "fail") for m in ("chest_xray", "brain_mri", "fundus")]
    per = {key: cases // len(strata) + (i < cases % len(strata)) for i, key in enumerate(strata)}
    study = create_study(session=session, created_by=admin, plan=StudyPlan(
        name=f"bench leaderboard {secrets.token_hex(3)}", case_filter=CaseFilter(),
        reader_ids=[r.id or 0 for r in readers], seed=seed, design=Design.validation,
        strata_facets=("verdict", "modality"), per_stratum=per))
    study_id = study.id or 0
    rows = session.exec(select(Assignment.id, StudyItem.id, StudyItem.stratum).join(
        StudyItem, col(StudyItem.id) == col(Assignment.item_id)).where(
        col(Assignment.study_id) == study_id)).all()
    for assignment_id, item_id, stratum in rows:
        if item_id not in truth:
            truth[item_id] = stratum.startswith("pass") == (rng.random() < 0.85)
        word = "yes" if truth[item_id] else "no"
        session.add(Answer(assignment_id=assignment_id, version=1,
                           submission_id=secrets.token_hex(16), compliance=word,
                           structure=word, realism=word, fidelity=word,
                           overall="accept" if truth[item_id] else "reject", confidence=4))
    session.commit()
    found = session.get(Study, study_id)
    assert found is not None
    lock_study(session, found)
    return study_id


if __name__ == "__main__":
    main()
