"""Candidate judges added and scored on a busy server, through a real `medbanana serve` over HTTP.

    .venv/bin/python benchmarks/busy_judges.py [--busy 0,3] [--rounds 2] [--adds 3] [--readers 0]

A hospital's server under a study is never idle, and a template's render used to be timed
from the start of a process that imported the whole server: on two cores under load, the
default template was refused 3 times of 3. Here, for each load (N processes spinning on the
CPU beside the server; the loads take turns, round after round), a server is started afresh
with its in-process worker, and at once:

- the default template is added --adds times from the judges form (as an admin's API token
  posts it), each add timed;
- one of those candidates is scored on the demo's locked pilot (24 cases: 48 answers, each
  once more with the original first), as a job the server's worker runs; its answers that
  failed are counted, and those that failed to render apart.

--readers N: N radiologists, each with an account of their own, read another study through
the same server all the while (benchmarks/many_readers.py's readers, a case every ~5 s).

Printed per load: adds kept of tried, each add's time, the scoring job's answers, failures and
render failures, its time, and how busy the machine's cores were.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import secrets
import subprocess
import sys
import threading
import time
from pathlib import Path

import httpx

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from sqlalchemy import func, select
from sqlmodel import Session, col

from app.accounts.users import create_user, find_user, issue_token
from app.db import make_engine, migrate
from app.demo.pilot import make_pilot
from app.job_models import Job
from app.judges.models import CandidateVerdict
from app.models import Role
from benchmarks.many_readers import BASE as READERS_BASE
from benchmarks.many_readers import Level, database, machine_ticks, pct, read, study
from benchmarks.served import serve
from pipeline.judge_spec import default_template

RENDER_WORDS = ("render", "prompt template")
READING_SECONDS = 25.0  # the readers read this long from the server's start: the adds and the job
THINK = 5.0  # seconds a reader looks at a case, on average


def setup(url: str) -> tuple[int, str]:
    """The locked pilot's id, and an admin's API token."""
    engine = make_engine(url)
    migrate(engine)
    with Session(engine) as session:
        admin = find_user(session, "busy-admin") or create_user(
            session=session, name="busy-admin", role=Role.admin, password="busy-admin-password")
        pilot = make_pilot(session, admin)
        if pilot is None:
            raise SystemExit("the demo data holds no pilot study to score on")
        token = issue_token(session=session, user=admin)
        pilot_id = pilot.id or 0
    engine.dispose()
    return pilot_id, token


def one_load(url: str, port: int, busy: int, adds: int, pilot_id: int, token: str,
             label: str, readers: tuple[int, list[str]] | None) -> str:
    burners = [subprocess.Popen([sys.executable, "-c", "while True: pass"])
               for _ in range(busy)]
    ticks = machine_ticks()
    # The readers' study has its images drawn in the readers' benchmark's cache.
    server = serve(url, port, {"MEDBANANA_WORKER": "true",
                               "MEDBANANA_VAR_DIR": str(READERS_BASE / "var"),
                               "MEDBANANA_SECRET_KEY": secrets.token_urlsafe(48)})
    reading, level = None, Level()
    if readers is not None:  # radiologists reading all the while, each at their own pace
        study_id, tokens = readers
        at = [0] * len(tokens)
        reading = threading.Thread(target=asyncio.run, args=(read(
            f"http://127.0.0.1:{port}", study_id, tokens, at, READING_SECONDS, THINK, level),))
        reading.start()
    try:
        client = httpx.Client(base_url=f"http://127.0.0.1:{port}", timeout=300,
                              headers={"Authorization": f"Bearer {token}"})
        kept, times, made = 0, [], []
        for n in range(adds):
            started = time.monotonic()
            answer = client.post("/judges", data={
                "name": f"{label} {n + 1}", "backend": "offline",
                "model": "offline-heuristic-1", "template": default_template()})
            times.append(time.monotonic() - started)
            if answer.status_code == 303:
                kept += 1
                made.append(int(answer.headers["location"].rstrip("/").rsplit("/", 1)[1]))
            else:
                print(f"  add {n + 1} refused ({answer.status_code})", file=sys.stderr)
        scored = "no candidate to score"
        if made:
            started = time.monotonic()
            answer = client.post(f"/judges/{made[0]}/score", data={"study": str(pilot_id)})
            if answer.status_code != 303:
                raise SystemExit(f"scoring refused: {answer.status_code} {answer.text[:300]}")
            job_id = int(answer.headers["location"].rsplit("/", 1)[1])
            engine = make_engine(url)
            while True:
                with Session(engine) as session:
                    job = session.get(Job, job_id)
                    assert job is not None
                    if job.status not in ("queued", "running"):
                        break
                time.sleep(0.5)
            seconds = time.monotonic() - started
            with Session(engine) as session:
                rows = session.execute(select(col(CandidateVerdict.error)).where(
                    col(CandidateVerdict.candidate_id) == made[0])).scalars().all()
                answers = session.scalar(select(func.count()).select_from(CandidateVerdict).where(
                    col(CandidateVerdict.candidate_id) == made[0]))
            engine.dispose()
            failed = [r for r in rows if r]
            unrendered = [r for r in failed if any(w in r for w in RENDER_WORDS)]
            scored = (f"job {job.status}: {answers} answers, {len(failed)} failed, "
                      f"{len(unrendered)} render failures, {seconds:.1f} s")
        if reading is not None:
            reading.join()
        busy_ticks, all_ticks = (a - b for a, b in zip(machine_ticks(), ticks, strict=True))
        readers_said = "" if reading is None else (
            f"; {len(readers[1]) if readers else 0} readers meanwhile: {level.outcomes['ok']} "
            f"next cases, p95 {pct(level.times, 95):.0f} ms, "
            f"{sum(n for k, n in level.outcomes.items() if k != 'ok')} not ok")
        return (f"{busy} busy: adds {kept}/{adds} kept "
                f"({', '.join(f'{t:.2f}' for t in times)} s); {scored}{readers_said}; "
                f"cores {100 * busy_ticks / max(1, all_ticks):.0f} % busy")
    finally:
        server.terminate()
        server.wait(timeout=30)
        for burner in burners:
            burner.kill()
            burner.wait()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--busy", default="0,3", help="CPU-bound processes beside the server")
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--adds", type=int, default=3)
    parser.add_argument("--port", type=int, default=8791)
    parser.add_argument("--readers", type=int, default=0,
                        help="radiologists reading another study all the while (each its own "
                             "account, a case every ~5 s)")
    args = parser.parse_args()
    loads = [int(b) for b in args.busy.split(",")]
    url = database("sqlite")
    pilot_id, token = setup(url)
    readers = study(url, args.readers) if args.readers else None
    print(f"{os.cpu_count()} cores; default template; scoring on the pilot (study {pilot_id})")
    for round_ in range(args.rounds):
        for busy in loads if round_ % 2 == 0 else loads[::-1]:
            print(one_load(url, args.port, busy, args.adds, pilot_id, token,
                           f"round {round_ + 1} busy {busy}", readers), flush=True)


if __name__ == "__main__":
    main()
