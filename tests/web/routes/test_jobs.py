"""Regenerate from the browser: the confirmation, the job page, cancel, and the role rule."""

import json
from pathlib import Path

from bs4 import BeautifulSoup
from fastapi.testclient import TestClient
from sqlalchemy.engine import Engine
from sqlmodel import Session, select

from app.job_models import Job, JobTask
from app.jobs.runner import claim, run_job
from app.models import Role, Task
from app.settings import Settings
from app.web.main import create_app
from pipeline.loop import RetryPolicy
from pipeline.offline import OfflineBackend
from tests import aio
from tests.accounts import token_client


def two_tasks(engine: Engine) -> list[int]:
    with Session(engine) as session:
        return [t for t in session.exec(select(Task.id).where(Task.modality == "fundus",
                                                              Task.outcome == "success").limit(2))
                if t is not None]


def test_confirm_then_start_then_follow(client: TestClient, demo_engine: Engine, tmp_path: Path) -> None:
    ids = two_tasks(demo_engine)
    page = BeautifulSoup(client.get("/jobs/new", params={"task": ids}).text, "html.parser")
    assert page.select_one("#job-count").get_text() == "2"
    assert "30" in page.select_one("#estimate").get_text()  # 2 tasks x 5 rounds x 3 calls
    # the offline backend calls no service: no Gemini time, no Batch API
    assert "runs on this machine" in page.select_one("#estimate-time").get_text()
    assert page.select_one("#estimate-batch-cost") is None
    form = {"task": [str(i) for i in ids], "rounds": "3", "backend": "offline", "concurrency": "2",
            "requests_per_minute": "600"}
    response = client.post("/jobs", data=form, follow_redirects=False)
    assert response.status_code == 303
    job_id = int(response.headers["location"].rsplit("/", 1)[1])
    live = BeautifulSoup(client.get(f"/jobs/{job_id}").text, "html.parser")
    assert live.select_one("#job-progress")["hx-trigger"] == "every 1s"
    lease = claim(demo_engine, job_id)
    assert lease is not None
    aio.run(run_job(demo_engine, lease, lambda _: OfflineBackend(), tmp_path / "out",
                        policy=RetryPolicy(attempts=2, base_seconds=0.0)))
    done = BeautifulSoup(client.get(f"/jobs/{job_id}").text, "html.parser")
    assert done.select_one("#job-status").get_text() == "done"
    assert done.select_one("#job-progress").get("hx-trigger") is None  # polling stops
    # A finished job reads "2 of 2 tasks finished", without a rate that no longer runs.
    summary = done.select_one("#job-progress p").get_text(" ", strip=True)
    assert "2 of 2 tasks finished" in summary and "tasks/min" not in summary and "done 2" not in summary
    assert len(done.select("#job-runs a")) == 2
    # each run says how it ended, not the task's "done"
    from app.models import Run

    with Session(demo_engine) as session:
        outcomes = {r.id: r.outcome for r in session.exec(select(Run))}
    for li in done.select("#job-runs li"):
        run_id = int(li.select_one("a")["href"].rsplit("=", 1)[1])
        assert li["data-outcome"] == outcomes[run_id]
        assert li.select_one(".run-outcome").get_text() != "done"
    with Session(demo_engine) as session:
        job = session.get(Job, job_id)
        assert job is not None and job.options.count('"rounds": 3') == 1
        assert '"requests_per_minute": 600' in job.options
    case = client.get(f"/api/cases/{ids[0]}").json()
    assert [r["origin"] for r in case["runs"]].count("regeneration") == 1


def test_all_matching_and_bad_input(client: TestClient, demo_engine: Engine) -> None:
    page = BeautifulSoup(client.get("/jobs/new?modality=brain_mri&all=true").text, "html.parser")
    assert page.select_one("#job-count").get_text() == "12"
    response = client.post("/jobs?modality=brain_mri", data={"everything": "true"},
                           follow_redirects=False)
    job_id = int(response.headers["location"].rsplit("/", 1)[1])
    with Session(demo_engine) as session:
        assert len(session.exec(select(JobTask).where(JobTask.job_id == job_id)).all()) == 12
    assert client.get("/jobs/new").status_code == 422
    assert client.get("/jobs/new?task=999999").status_code == 422
    assert client.post("/jobs", data={"task": "1", "backend": "gpt"}).status_code == 422
    assert client.post("/jobs", data={"task": "1", "rounds": "99"}).status_code == 422
    # The form comes back as typed, the reason beside the field, in words.
    refused = client.post("/jobs", data={"task": "1", "rounds": "99", "concurrency": "3",
                                         "requests_per_minute": "40", "kind": "rejudge"})
    page = BeautifulSoup(refused.text, "html.parser")
    assert refused.status_code == 422 and page.select_one("#error-rounds").text == "at most 20"
    assert page.select_one("input[name=rounds]")["value"] == "99"
    assert page.select_one("input[name=concurrency]")["value"] == "3"
    assert page.select_one("input[name=requests_per_minute]")["value"] == "40"
    assert page.select_one('input[name=kind][value="rejudge"]').has_attr("checked")
    assert [i["value"] for i in page.select('#job-form input[name="task"]')] == ["1"]
    wrong = BeautifulSoup(client.post("/jobs", data={"task": "1", "backend": "gpt"}).text, "html.parser")
    assert "backend must be one of" in wrong.select_one("#error-backend").text
    assert client.get("/jobs/999").status_code == 404
    cancel = client.post(f"/jobs/{job_id}/cancel", follow_redirects=False)
    assert cancel.status_code == 303
    with Session(demo_engine) as session:
        job = session.get(Job, job_id)
        assert job is not None and job.status == "cancelled"


def test_readers_cannot_start_jobs(demo_engine: Engine, settings: Settings) -> None:
    reader = token_client(create_app(settings, demo_engine), demo_engine, "a-reader", Role.reader,
                          raise_server_exceptions=False)
    assert reader.post("/jobs", data={"task": "1"}).status_code == 403
    assert reader.get("/jobs").status_code == 403


def test_rejudge_from_the_form_and_backend_choices(client: TestClient, demo_engine: Engine,
                                                   monkeypatch) -> None:  # type: ignore[no-untyped-def]
    for name in ("GOOGLE_API_KEY", "GEMINI_API_KEY"):
        monkeypatch.delenv(name, raising=False)
    ids = two_tasks(demo_engine)
    page = BeautifulSoup(client.get("/jobs/new", params={"task": ids}).text, "html.parser")
    assert [o["value"] for o in page.select('select[name="backend"] option')] == ["offline"]
    assert page.select_one("#no-gemini") is not None
    assert client.post("/jobs", data={"task": str(ids[0]), "backend": "gemini"}).status_code == 422
    response = client.post("/jobs", data={"task": [str(i) for i in ids], "kind": "rejudge",
                                          "rejudge_times": "2"}, follow_redirects=False)
    job_id = int(response.headers["location"].rsplit("/", 1)[1])
    with Session(demo_engine) as session:
        job = session.get(Job, job_id)
        assert job is not None and job.kind == "rejudge" and '"rejudge_times": 2' in job.options
    assert client.post("/jobs", data={"task": str(ids[0]), "kind": "delete"}).status_code == 422
    monkeypatch.setenv("GEMINI_API_KEY", "k")
    page = BeautifulSoup(client.get("/jobs/new", params={"task": ids}).text, "html.parser")
    assert page.select_one('input[name="judge_model"]')["placeholder"] == "gemini-2.5-pro"
    assert client.post("/jobs", data={"task": str(ids[0]), "backend": "gemini",
                                      "judge_model": "bad model!"}).status_code == 422


def test_stored_errors_never_show_a_key(client: TestClient, demo_engine: Engine) -> None:
    """Errors stored before redaction on the way in (by an older version) are redacted
    where they are shown."""
    key = "AIzaSyZ9y8X7w6V5u4T3s2R1q0PoNmLkJiHgFeD"
    with Session(demo_engine) as session:
        job = Job(status="done", total=1, done=1, api_failed=1,
                  last_errors=json.dumps([{"task_id": 1, "error": f"403 PERMISSION_DENIED: key {key}"}]))
        session.add(job)
        session.commit()
        job_id = job.id
    page = BeautifulSoup(client.get(f"/jobs/{job_id}").text, "html.parser")
    shown = page.select_one("#job-errors").get_text()
    assert "PERMISSION_DENIED" in shown and key not in shown and "[redacted]" in shown


def test_an_identical_job_is_refused_while_the_first_is_queued(client: TestClient,
                                                                demo_engine: Engine) -> None:
    """25 clicks on "regenerate" made 25 jobs for the same tasks, each paying again."""
    ids = two_tasks(demo_engine)
    form = {"task": [str(i) for i in ids], "rounds": "2", "backend": "offline", "concurrency": "2"}
    first = client.post("/jobs", data=form, follow_redirects=False)
    assert first.status_code == 303
    job_id = int(first.headers["location"].rsplit("/", 1)[1])
    again = client.post("/jobs", data=form, follow_redirects=False)
    assert again.status_code == 409
    said = BeautifulSoup(again.text, "html.parser").get_text(" ")
    assert f"job {job_id} is already queued" in said and f"/jobs/{job_id}" in said
    other = client.post("/jobs", data={**form, "rounds": "3"}, follow_redirects=False)
    assert other.status_code == 303  # other options: another job
    with Session(demo_engine) as session:
        assert len(session.exec(select(Job)).all()) == 2
    client.post(f"/jobs/{job_id}/cancel", follow_redirects=False)
    assert client.post("/jobs", data=form, follow_redirects=False).status_code == 303


def test_concurrent_identical_jobs_make_one(demo_engine: Engine) -> None:
    import threading

    from app.errors import Conflict
    from app.jobs import JobOptions, create_job

    ids = two_tasks(demo_engine)
    made, refused = [], []

    def click() -> None:
        try:
            made.append(create_job(demo_engine, ids, JobOptions(rounds=2)))
        except Conflict:
            refused.append(1)

    clicks = [threading.Thread(target=click) for _ in range(8)]
    for t in clicks:
        t.start()
    for t in clicks:
        t.join()
    assert len(made) == 1 and len(refused) == 7
