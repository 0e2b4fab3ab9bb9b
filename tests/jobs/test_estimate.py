"""A job's estimate from what the database knows (the tasks' own rounds, recorded calls), on
the job form and in the CLI."""

import json
from pathlib import Path

import pytest
from bs4 import BeautifulSoup
from fastapi.testclient import TestClient
from sqlalchemy.engine import Engine
from sqlmodel import Session, select
from typer.testing import CliRunner

from app.job_models import Job
from app.jobs.estimate import observed_usage, rounds_of
from app.models import Attempt, Run, RunOrigin, Task
from pipeline.estimate import TYPICAL


def test_rounds_come_from_the_tasks_own_runs(demo_engine: Engine) -> None:
    with Session(demo_engine) as session:
        tasks = session.exec(select(Task).where(Task.n_rounds > 0)).all()
        ids = [t.id or 0 for t in tasks]
        mean, source = rounds_of(session, ids, 5)
        capped, _ = rounds_of(session, ids, 1)
        assert rounds_of(session, [], 5) == (None, "")
    assert mean == pytest.approx(sum(t.n_rounds for t in tasks) / len(tasks))
    assert capped == 1.0 and f"{len(tasks):,} selected tasks" in source


def test_recorded_gemini_calls_replace_the_typical_usage(demo_engine: Engine) -> None:
    with Session(demo_engine) as session:
        assert observed_usage(session) == (None, "")  # the demo has no recorded Gemini calls
        task = session.exec(select(Task)).first()
        assert task is not None
        run = Run(task_id=task.id or 0, origin=RunOrigin.regeneration.value, outcome="success",
                  fingerprint="estimate-test")
        session.add(run)
        session.flush()
        call = {"input_tokens": 1000, "output_tokens": 100, "thinking_tokens": 900,
                "latency_ms": 4000.0}
        for number in range(1, 26):
            session.add(Attempt(run_id=run.id or 0, round=number, calls=json.dumps(
                {"backend": "gemini", "instruction": call, "edit": call, "judge": call})))
        session.commit()
        usage, source = observed_usage(session)
    assert usage is not None and usage["judge"].input == 1000 and usage["judge"].output == 1000
    assert usage["edit"].seconds == pytest.approx(4.0) and "25+ recorded" in source
    assert usage["instruction"] != TYPICAL["instruction"]


def test_the_job_form_shows_the_estimate_and_updates_it(client: TestClient) -> None:
    page = BeautifulSoup(client.get("/jobs/new?modality=fundus&all=true").text, "html.parser")
    assert page.select_one("#estimate-calls") is not None
    assert page.select_one("#job-form")["hx-post"].endswith("/jobs/estimate?modality=fundus")
    response = client.post("/jobs/estimate?modality=fundus", data={
        "everything": "true", "rounds": "2", "concurrency": "1", "requests_per_minute": ""})
    assert response.status_code == 200
    part = BeautifulSoup(response.text, "html.parser")
    assert part.select_one("section#estimate") is not None
    assert "12 tasks" in part.select_one("#calls-at-most").get_text()
    assert "72" in part.select_one("#calls-at-most strong").get_text()  # 12 x 2 rounds x 3
    # the offline backend: no Gemini wall time to give
    assert "runs on this machine" in part.select_one("#estimate-time").get_text()
    bad = client.post("/jobs/estimate", data={"everything": "true", "rounds": "99"})
    assert bad.status_code == 422
    nothing = client.post("/jobs/estimate", data={"task": "999999"})
    assert nothing.status_code == 422


def test_the_cli_prints_the_estimate_and_can_stop_there(demo_engine: Engine, tmp_path: Path,
                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    from concurrent.futures import ThreadPoolExecutor

    from app.cli import cli

    monkeypatch.setenv("MEDBANANA_DATABASE_URL", demo_engine.url.render_as_string(hide_password=False))
    monkeypatch.setenv("MEDBANANA_VAR_DIR", str(tmp_path / "var"))
    monkeypatch.delenv("GEMINI_API_KEY", raising=False)
    monkeypatch.delenv("GOOGLE_API_KEY", raising=False)
    with ThreadPoolExecutor(1) as pool:
        result = pool.submit(CliRunner().invoke, cli, [
            "pipeline", "run", "--backend", "gemini", "--modality", "fundus", "--per-minute", "2",
            "--estimate"]).result()
    # No key is needed to estimate, and nothing is started.
    assert result.exit_code == 0, result.output
    assert "Estimate for 12 tasks" in result.output
    assert "calls a minute to gemini-2.5-pro" in result.output and "Batch API: $" in result.output
    with Session(demo_engine) as session:
        assert session.exec(select(Job)).all() == []


def test_the_cli_refuses_a_job_identical_to_one_queued(demo_engine: Engine, tmp_path: Path,
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    from concurrent.futures import ThreadPoolExecutor

    from app.cli import cli

    monkeypatch.setenv("MEDBANANA_DATABASE_URL", demo_engine.url.render_as_string(hide_password=False))
    monkeypatch.setenv("MEDBANANA_VAR_DIR", str(tmp_path / "var"))
    command = ["pipeline", "run", "--modality", "fundus", "--queue", "--yes"]
    with ThreadPoolExecutor(1) as pool:
        first = pool.submit(CliRunner().invoke, cli, command).result()
        again = pool.submit(CliRunner().invoke, cli, command).result()
    assert first.exit_code == 0, first.output
    assert again.exit_code == 1
    assert "is already queued on the same 12 tasks, doing the same work" in again.output
    with Session(demo_engine) as session:
        assert len(session.exec(select(Job)).all()) == 1


def test_the_estimate_shows_no_batch_price_for_a_job_batch_mode_refuses(
        demo_engine: Engine) -> None:
    """A promoted judge is asked one call at a time: a regeneration under it cannot go through
    the Batch API, yet its estimate priced a batch."""
    from app.jobs.options import JobOptions, job_estimate
    from app.judges.candidates import CandidatePlan, create_candidate
    from app.judges.promotion import promote
    from pipeline.estimate import describe
    from pipeline.judge_spec import default_template
    from tests.jobs.test_runner import task_ids

    ids = task_ids(demo_engine, 3)
    options = JobOptions(backend="gemini", rounds=2)
    with Session(demo_engine) as session:
        assert any(line.startswith("Batch API: $") for line in describe(
            job_estimate(session, ids, options)))
        pro = create_candidate(session, CandidatePlan(
            name="pro", backend="gemini", model="gemini-2.5-pro", template=default_template()),
            None)
        promote(session, pro.id, None)
        lines = describe(job_estimate(session, ids, options))
    assert not any("$" in line for line in lines if line.startswith("Batch API"))
    assert any(line.startswith("Batch API: not for this job (the promoted judge, 'pro', is "
                               "asked one call at a time") for line in lines)
