"""Four worker processes on one PostgreSQL database against the fake Gemini server: one is
paused and resumed after its job was taken over, one is killed. Every task ends once, and
every stored round's image is the one its verdict judged (the fake tags each image it
makes and names the tag in its verdict)."""

import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest
from sqlalchemy.engine import Engine
from sqlmodel import Session, col, select

from app.db import make_engine, migrate
from app.images.files import ImageKind, resolve_image
from app.importer import import_tree
from app.job_models import Job, JobTask
from app.jobs.options import JobOptions
from app.jobs.queue import create_job
from app.jobs.runner import HEARTBEAT
from app.models import Attempt, JudgeVerdict, Run, Task
from tests.fake_gemini import FakeGemini, Tagger, image_tag
from tests.pg_server import PostgresServer

pytestmark = pytest.mark.postgres
STALE = 15  # seconds: the least --stale-after allows (three heartbeats)


def wait_for(check: Callable[[], bool], seconds: float, what: str) -> None:
    deadline = time.monotonic() + seconds
    while not check():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.2)


def jobs(engine: Engine) -> list[Job]:
    with Session(engine) as session:
        return list(session.exec(select(Job).order_by(col(Job.id))).all())


def every_round_paired(engine: Engine, tasks: int) -> dict[int, list[int]]:
    """Every task ended once, in the run its job task names, and every stored round's image
    carries the tag the fake put in the verdict stored with it; the rounds of each run."""
    finished = jobs(engine)
    assert sum(j.done for j in finished) == tasks
    assert sum(j.api_failed for j in finished) == 0, [j.last_errors for j in finished]
    assert sum(j.succeeded for j in finished) == tasks
    with Session(engine) as session:
        job_tasks = session.exec(select(JobTask)).all()
        assert all(t.status == "done" and t.run_id for t in job_tasks)
        runs = session.exec(select(Run).where(Run.origin == "regeneration")).all()
        # Each task's run is the one its job task names; a run started by the worker that
        # lost its job before recording it on the task would be a duplicate.
        assert sorted(r.id or 0 for r in runs if r.outcome != "running") == sorted(
            t.run_id or 0 for t in job_tasks)
        assert all(r.outcome == "success" for r in runs if r.id in {t.run_id for t in job_tasks})
        rows = session.exec(select(Attempt, JudgeVerdict).join(
            JudgeVerdict, col(JudgeVerdict.attempt_id) == Attempt.id).join(
            Run, col(Run.id) == Attempt.run_id).where(Run.origin == "regeneration")).all()
        by_run: dict[int, list[int]] = {}
        tags = []
        for attempt, verdict in rows:
            by_run.setdefault(attempt.run_id, []).append(attempt.round)
            stored = resolve_image(session, ImageKind.attempt, attempt.id or 0).path.read_bytes()
            tags.append(image_tag(stored))
            assert verdict.reason == f"judged {tags[-1]}", (attempt.id, verdict.reason)
    assert len(tags) == len(set(tags))  # no image stored twice
    assert all(sorted(rounds) == list(range(1, len(rounds) + 1))
               for rounds in by_run.values()), by_run
    return by_run


def demo_database(pg_server: PostgresServer, demo_dir: Path, name: str,
                  tasks: int) -> tuple[str, Engine, list[int]]:
    """A database of the demo run whose server drops idle connections after 4 s, as a
    managed PostgreSQL with an idle-session limit does: a paused worker wakes to writes
    that fail, and its job must be given up whole, not left half running. Its URL, an
    engine, and ``tasks`` chest X-ray tasks."""
    url = pg_server.create_database(name)
    engine = make_engine(url)
    with engine.connect() as connection:
        connection.exec_driver_sql(f"ALTER DATABASE {name} SET idle_session_timeout = '4s'")
        connection.exec_driver_sql(
            f"ALTER DATABASE {name} SET idle_in_transaction_session_timeout = '4s'")
        connection.commit()
    engine.dispose()
    engine = make_engine(url)
    migrate(engine)
    import_tree(engine, demo_dir / "run", demo_dir / "source")
    with Session(engine) as session:
        ids = [i for i in session.exec(select(Task.id).where(
            Task.outcome != "api_failed", Task.modality == "chest_xray")
            .order_by(col(Task.id)).limit(tasks)).all() if i is not None]
    return url, engine, ids


def start_worker(env: dict[str, str], log: Path) -> subprocess.Popen[bytes]:
    return subprocess.Popen([sys.executable, "-m", "app.cli", "pipeline", "worker", "--poll",
                             "0.2", "--stale-after", str(STALE)], env=env, stdout=log.open("w"),
                            stderr=subprocess.STDOUT)


def stop_workers(processes: list[subprocess.Popen[bytes]]) -> None:
    """Continue any paused worker, then stop every one (killed if it will not stop)."""
    for process in processes:
        if process.poll() is None:
            process.send_signal(signal.SIGCONT)
            process.terminate()
    for process in processes:
        try:
            process.wait(10)
        except subprocess.TimeoutExpired:
            process.kill()


def test_four_workers_survive_pause_kill_and_takeover(pg_server: PostgresServer, demo_dir: Path,
                                                      tmp_path: Path) -> None:
    url, engine, ids = demo_database(pg_server, demo_dir, "four_workers", 24)
    for share in range(4):
        create_job(engine, ids[share::4], JobOptions(backend="gemini", rounds=3, concurrency=2))

    fake = FakeGemini(Tagger(latency=0.3))
    logs = [tmp_path / f"worker-{n}.log" for n in range(4)]
    with fake.serve() as base:
        env = {**os.environ, "MEDBANANA_DATABASE_URL": url,
               "MEDBANANA_VAR_DIR": str(tmp_path / "var"), "GEMINI_API_KEY": "k" * 39,
               "GOOGLE_GEMINI_BASE_URL": base}
        workers = [start_worker(env, log) for log in logs]
        try:
            wait_for(lambda: all(j.status == "running" for j in jobs(engine)), 60,
                     "every worker to claim a job")
            wait_for(lambda: sum(j.done for j in jobs(engine)) >= 2, 60, "the first tasks")
            paused, killed = workers[0], workers[1]
            paused.send_signal(signal.SIGSTOP)
            killed.kill()
            wait_for(lambda: all(j.status == "done" for j in jobs(engine)), 150,
                     "the two left to take over and finish every job")
            leases = [j.lease for j in jobs(engine)]
            assert sum(lease >= 2 for lease in leases) >= 2, leases  # two were taken over
            paused.send_signal(signal.SIGCONT)  # wakes with calls in flight for a lost job
            time.sleep(4)
        finally:
            stop_workers(workers)

    by_run = every_round_paired(engine, 24)
    # The fake rejects each task's first verdict and accepts the next. Usually that is round 1
    # then round 2; but when the first verdict went to a worker that then lost its job (or
    # was killed), the round it judged was never stored, and the next worker's round 1 is
    # accepted. Either way no run goes on past its accepted round.
    assert all(len(rounds) in (1, 2) for rounds in by_run.values()), by_run
    assert sum(len(rounds) == 2 for rounds in by_run.values()) >= 12, by_run
    # What the holder meets first on waking depends on where the pause caught it: a lease
    # check (displaced), or a write on a connection the server dropped while it was open in
    # a transaction (given up). Either way it wrote nothing more, as the lines above show.
    woke = logs[0].read_text()
    assert "taken over by another worker" in woke or "given up after an error" in woke, woke


def test_a_paused_workers_job_is_taken_over_in_time_and_it_writes_nothing_more(
        pg_server: PostgresServer, demo_dir: Path, tmp_path: Path) -> None:
    """The worker holding the job is paused past --stale-after (its connections dropped by
    the server meanwhile): an idle worker takes the job over within --stale-after plus one
    heartbeat, and the paused one, continued, writes nothing more for it."""
    url, engine, ids = demo_database(pg_server, demo_dir, "paused_worker", 8)
    job_id = create_job(engine, ids, JobOptions(backend="gemini", rounds=3, concurrency=2))
    fake = FakeGemini(Tagger(latency=0.4))
    logs = [tmp_path / "holder.log", tmp_path / "idle.log"]
    with fake.serve() as base:
        env = {**os.environ, "MEDBANANA_DATABASE_URL": url,
               "MEDBANANA_VAR_DIR": str(tmp_path / "var"), "GEMINI_API_KEY": "k" * 39,
               "GOOGLE_GEMINI_BASE_URL": base}
        holder = start_worker(env, logs[0])
        started = [holder]
        try:
            wait_for(lambda: jobs(engine)[0].status == "running", 60, "the job to be claimed")
            started.append(start_worker(env, logs[1]))  # idle: the only job is taken
            wait_for(lambda: jobs(engine)[0].done >= 1, 60, "the first task")
            # The clock below is the takeover's, not the idle worker's start-up: on a busy
            # machine importing the app can take longer than the slack.
            wait_for(lambda: "started" in logs[1].read_text(), 60, "the idle worker to start")
            holder.send_signal(signal.SIGSTOP)
            # Within --stale-after plus a heartbeat, with room for a busy machine's polls.
            wait_for(lambda: jobs(engine)[0].lease >= 2, STALE + HEARTBEAT.total_seconds() + 10,
                     "the idle worker to take the job over")
            time.sleep(6)  # past the server's idle limit: the holder's connections are gone
            holder.send_signal(signal.SIGCONT)  # wakes with calls in flight for a lost job
            wait_for(lambda: jobs(engine)[0].status == "done", 120, "the job to finish")
            time.sleep(4)  # time for any late write of the holder to land, were it able to
        finally:
            stop_workers(started)
    job = jobs(engine)[0]
    assert job.id == job_id and job.lease == 2, job.lease  # taken over once, never back
    every_round_paired(engine, len(ids))
    # What the holder meets first on waking depends on where the pause caught it: a lease
    # check (displaced), or a write on a connection the server dropped while it was open in
    # a transaction (given up). Either way it wrote nothing more, as the lines above show.
    woke = logs[0].read_text()
    assert "taken over by another worker" in woke or "given up after an error" in woke, woke
