"""Benchmark: agreement figures for a study on the 88K-task database.

    .venv/bin/python benchmarks/agreement.py [--db var/bench/bench.db | --url postgres]
        [--cases 1000] [--readers 3]

Run benchmarks/import_scale.py first. Creates a validation study (judged attempts stratified by
the judge's verdict x modality), writes every reader's answers in bulk (correlated with a hidden
truth, some "cannot assess"), then times: loading the reads, the full report (every question,
every figure with its 2,000-resample cluster-bootstrap interval), the charts, the agreement page
cold and cached, again after one more read, the JSON report and the disagreement queue, all
in-process through the ASGI app. Goal: the agreement page's first view of a 1,000-case x
3-reader study in <= 600 ms.
"""

import argparse
import random
import secrets
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from fastapi.testclient import TestClient
from sqlalchemy import insert, select
from sqlmodel import Session, col

from app.agreement.charts import report_charts
from app.agreement.reads import load
from app.agreement.report import study_report
from app.agreement.warm import warm_figures
from app.cases.filters import CaseFilter
from app.db import make_engine, migrate
from app.models import Role
from app.settings import Settings
from app.studies.design import StudyPlan, create_study
from app.studies.judged_pool import judged_pool
from app.studies.models import Answer, Assignment, Design
from app.web.main import create_app
from app.web.templating import compile_templates
from benchmarks import postgres
from benchmarks.accounts import bench_admin_token, bench_user
from benchmarks.plans import watch_queries
from pipeline.vocabulary import DIMENSIONS


def timed(label: str, fn):  # type: ignore[no-untyped-def]
    start = time.perf_counter()
    result = fn()
    print(f"{label:60s} {(time.perf_counter() - start) * 1000:8.0f} ms")
    return result


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--db", type=Path, default=Path("var/bench/bench.db"))
    parser.add_argument("--url", help="a database URL instead of --db; 'postgres' for the benchmark server")
    parser.add_argument("--cases", type=int, default=1000)
    parser.add_argument("--readers", type=int, default=3)
    args = parser.parse_args()
    if not args.url and not args.db.is_file():
        sys.exit(f"{args.db} not found: run benchmarks/import_scale.py first")
    engine = make_engine(postgres.resolve(args.url, args.db))
    print(f"database: {engine.url.render_as_string()}")
    migrate(engine)  # a database left by an older import_scale run
    run = secrets.token_hex(3)
    admin = bench_user(engine, "bench-admin")
    readers = [bench_user(engine, f"bench-reader-{i:02d}", Role.reader) for i in range(args.readers)]
    sixth = args.cases // 6
    strata = {f"{v}/{m}": sixth for v in ("pass", "fail") for m in ("chest_xray", "brain_mri", "fundus")}
    strata["pass/chest_xray"] += args.cases - 6 * sixth
    heavy = watch_queries(engine)
    with Session(engine) as session:
        timed("build the judged-edit pool (once per data version; the server does it at start)",
              lambda: judged_pool(session))
        study = timed("create the study (kept pool, sample, worklists)",
                      lambda: create_study(session=session, created_by=admin, plan=StudyPlan(
                          name=f"bench agreement {run}", case_filter=CaseFilter(),
                          design=Design.validation, reader_ids=[r.id or 0 for r in readers], seed=3,
                          strata_facets=("verdict", "modality"), per_stratum=strata,
                          repeat_fraction=0.1)))
        assignments = session.execute(select(col(Assignment.id), col(Assignment.item_id))
                                      .where(col(Assignment.study_id) == study.id)).all()
    rng = random.Random(11)
    truth = {item: {q: rng.random() < 0.75 for q in (*DIMENSIONS, "overall")}
             for _, item in assignments}

    def answer(item: int, q: str) -> str:
        agree = truth[item][q] if rng.random() < 0.85 else not truth[item][q]
        if q == "overall":
            return "accept" if agree else "reject"
        return "cannot_assess" if rng.random() < 0.05 else ("yes" if agree else "no")

    rows = [{"assignment_id": aid, "version": 1, "submission_id": f"bench-{run}-{aid}",
             **{q: answer(item, q) for q in (*DIMENSIONS, "overall")}, "confidence": 3,
             "tags": "[]", "comment": "", "time_on_case_ms": 20_000, "retracted": False}
            for aid, item in assignments]
    with engine.begin() as connection:
        connection.execute(insert(Answer), rows)
    print(f"study {study.name}: {args.cases} cases, {args.readers} readers, {len(rows)} reads")
    with Session(engine) as session:
        data = timed("load the reads", lambda: load(session, study))
        report = timed("report: every question and figure, cluster bootstrap 2,000 each",
                       lambda: study_report(data))
        timed("charts (matplotlib SVG)", lambda: report_charts(report))
    settings = Settings(demo=True, var_dir=Path(tempfile.mkdtemp()))
    warm_figures()  # what the server's start does in the background (app/web/main.py)
    compile_templates()
    client = TestClient(create_app(settings, engine),
                        headers={"Authorization": f"Bearer {bench_admin_token(engine)}"})
    sid = study.id
    timed("GET /studies/new (validation strata: pool of every judged attempt)",
          lambda: client.get("/studies/new"))
    timed("GET /studies/{id}/agreement (first view: reads + report)",
          lambda: client.get(f"/studies/{sid}/agreement"))
    timed("GET /studies/{id}/report.html (cached report)",
          lambda: client.get(f"/studies/{sid}/report.html"))
    timed("  then its charts fragment (drawn once, fetched by htmx)",
          lambda: client.get(f"/studies/{sid}/agreement/charts"))
    timed("GET /studies/{id}/agreement (cached)", lambda: client.get(f"/studies/{sid}/agreement"))
    timed("GET /studies/{id}/agreement.json (cached)",
          lambda: client.get(f"/studies/{sid}/agreement.json"))
    timed("GET /studies/{id}/agreement?modality=fundus (new slice)",
          lambda: client.get(f"/studies/{sid}/agreement?modality=fundus"))
    # A reader answers once more: the report is computed again, in a server that has
    # computed one before (what a coordinator sees on the page after each new read).
    with engine.begin() as connection:
        aid = assignments[0][0]
        connection.execute(insert(Answer), [{**rows[0], "version": 2,
                                             "submission_id": f"bench-{run}-{aid}-again"}])
    timed("GET /studies/{id}/agreement (first view after one more read)",
          lambda: client.get(f"/studies/{sid}/agreement"))
    timed("GET /studies/{id}/disagreements", lambda: client.get(f"/studies/{sid}/disagreements"))
    timed("GET /studies/{id}/answers-long.csv",
          lambda: client.get(f"/studies/{sid}/answers-long.csv"))
    timed("GET /overview (88K tasks; first)", lambda: client.get("/overview"))
    timed("  then its charts fragment", lambda: client.get("/overview/charts"))
    timed("GET /overview (again)", lambda: client.get("/overview"))
    heavy.print_plans(engine)


if __name__ == "__main__":
    main()
