"""Image stores: regenerated images in an fsspec file system (here fsspec's in-memory one)
are written with their round and read back by the web app like local ones."""

import uuid
from collections.abc import Iterator
from pathlib import Path

import fsspec
import pytest
from fastapi.testclient import TestClient
from sqlalchemy import update
from sqlalchemy.engine import Engine
from sqlmodel import Session, col, select

from app.images.files import ImageKind, resolve_image
from app.images.store import StoreError, normalised, safe_relpath, store_for
from app.job_models import Job, JobTask
from app.jobs import store
from app.jobs.lease import Displaced, Lease
from app.jobs.options import JobOptions
from app.jobs.queue import create_job
from app.jobs.runner import MIN_STALE, claim, run_job
from app.models import Attempt, DataRoot, Run, utcnow
from pipeline.loop import RetryPolicy
from pipeline.offline import OfflineBackend
from tests import aio
from tests.jobs.test_runner import task_ids


def test_a_job_writes_to_a_remote_store_and_the_app_reads_it(client: TestClient,
                                                             demo_engine: Engine) -> None:
    location = f"memory://medbanana-{uuid.uuid4().hex}"
    job_id = create_job(demo_engine, task_ids(demo_engine, 2), JobOptions(rounds=1))
    lease = claim(demo_engine, job_id)
    assert lease is not None
    assert aio.run(run_job(demo_engine, lease, lambda _: OfflineBackend(), location,
                           policy=RetryPolicy(attempts=2, base_seconds=0.0))) == "done"
    memory = fsspec.filesystem("memory")
    with Session(demo_engine) as session:
        root = session.exec(select(DataRoot).where(DataRoot.path == location)).one()
        attempts = session.exec(select(Attempt).where(Attempt.image_root_id == root.id)).all()
        assert len(attempts) == 2
        for attempt in attempts:
            stored = memory.cat_file(f"{location.removeprefix('memory://')}/{attempt.image_relpath}")
            assert resolve_image(session, ImageKind.attempt, attempt.id or 0).read_bytes() == stored
        task_id = session.exec(select(Run.task_id).where(Run.id == attempts[0].run_id)).one()
    case = client.get(f"/api/cases/{task_id}").json()
    [attempt] = [a for r in case["runs"] if r["attempts"] for a in r["attempts"]]
    for size in ("full", "preview"):
        assert client.get(attempt["image_url"], params={"size": size}).status_code == 200
    assert client.get(attempt["difference_map_url"]).status_code == 200


def open_run(engine: Engine) -> tuple[int, int, Lease]:
    """A job of one task, claimed, with its run started: (job id, run id, lease)."""
    [task_id] = task_ids(engine, 1)
    job_id = create_job(engine, [task_id], JobOptions())
    lease = claim(engine, job_id)
    assert lease is not None
    with Session(engine) as session:
        job_task = session.exec(select(JobTask).where(JobTask.job_id == job_id)).one()
    return job_id, store.start_run(engine, task_id, job_task.id, lease), lease


ROUND = store.Round(number=1, instruction="x", instruction_thinking="", image=b"\xff\xd8\xff",
                    edit_error=None, verdict=None, verdict_error=None, judge_thinking="",
                    judge_model=None, prompt_version=None, raw="", calls={})


def test_a_round_that_cannot_commit_leaves_no_object_behind(demo_engine: Engine) -> None:
    location = f"memory://medbanana-{uuid.uuid4().hex}"
    job_id, run_id, first = open_run(demo_engine)
    with Session(demo_engine) as session:  # another worker takes the job over
        session.execute(update(Job).where(col(Job.id) == job_id)
                        .values(heartbeat_at=utcnow().replace(year=2000)))
        session.commit()
    assert claim(demo_engine, stale_after=MIN_STALE) is not None
    root_id = store.output_root(demo_engine, location)
    with pytest.raises(Displaced):
        store.save_round(demo_engine, run_id, root_id, location, ROUND, first)
    assert fsspec.filesystem("memory").find(location.removeprefix("memory://")) == []


@pytest.mark.parametrize("relpath", ["../outside.png", "/etc/passwd", "runs//x.png", "a\\b.png",
                                     "", "runs/../../x"])
def test_paths_that_climb_out_of_a_store_are_refused(relpath: str) -> None:
    with pytest.raises(StoreError):
        safe_relpath(relpath)


def test_locations(tmp_path: Path) -> None:
    assert normalised("s3://bucket/prefix/") == "s3://bucket/prefix"
    assert normalised(f"file://{tmp_path}/x") == str((tmp_path / "x").resolve())
    assert store_for(tmp_path).__class__.__name__ == "LocalStore"
    with pytest.raises(StoreError, match="cannot be used"):
        store_for("nosuchprotocol://bucket/x")


@pytest.fixture
def s3_bucket(monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    """A bucket on a local S3 server (moto), reached by s3fs as a real one would be."""
    import s3fs
    from moto.server import ThreadedMotoServer

    server = ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
    server.start()
    host, port = server.get_host_and_port()
    for name, value in (("AWS_ACCESS_KEY_ID", "testing"), ("AWS_SECRET_ACCESS_KEY", "testing"),
                        ("AWS_DEFAULT_REGION", "us-east-1"),
                        ("AWS_ENDPOINT_URL", f"http://{host}:{port}")):
        monkeypatch.setenv(name, value)
    s3fs.S3FileSystem.clear_instance_cache()
    bucket = f"medbanana-{uuid.uuid4().hex[:12]}"
    fsspec.filesystem("s3").mkdir(bucket)
    yield bucket
    s3fs.S3FileSystem.clear_instance_cache()
    server.stop()


def test_an_s3_bucket_as_the_image_store(client: TestClient, demo_engine: Engine,
                                         s3_bucket: str) -> None:
    location = f"s3://{s3_bucket}/medbanana"
    job_id = create_job(demo_engine, task_ids(demo_engine, 2), JobOptions(rounds=1))
    lease = claim(demo_engine, job_id)
    assert lease is not None
    assert aio.run(run_job(demo_engine, lease, lambda _: OfflineBackend(), location,
                           policy=RetryPolicy(attempts=2, base_seconds=0.0))) == "done"
    with Session(demo_engine) as session:
        root = session.exec(select(DataRoot).where(DataRoot.path == location)).one()
        attempts = session.exec(select(Attempt).where(Attempt.image_root_id == root.id)).all()
        keys = sorted(f"{s3_bucket}/medbanana/{a.image_relpath}" for a in attempts)
        image = resolve_image(session, ImageKind.attempt, attempts[0].id or 0)
        assert image.read_bytes()[:2] == b"\xff\xd8"
    assert sorted(fsspec.filesystem("s3").find(s3_bucket)) == keys
    preview = client.get(f"/images/attempt/{attempts[0].id}", params={"size": "preview"})
    assert preview.status_code == 200


def test_an_image_whose_commit_went_through_before_the_connection_dropped_is_kept(
        demo_engine: Engine, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The four-worker PostgreSQL test once found a stored round whose image was missing: the
    commit was applied, the client saw its connection drop, and the image was removed as if
    the round had never been written."""
    from sqlalchemy.exc import OperationalError

    _, run_id, lease = open_run(demo_engine)
    root_id = store.output_root(demo_engine, str(tmp_path))
    real_commit = Session.commit

    def commit_then_drop(self: Session) -> None:
        real_commit(self)
        raise OperationalError("COMMIT", {}, Exception("server closed the connection unexpectedly"))

    monkeypatch.setattr(Session, "commit", commit_then_drop)
    with pytest.raises(OperationalError):
        store.save_round(demo_engine, run_id, root_id, str(tmp_path), ROUND, lease)
    monkeypatch.undo()
    with Session(demo_engine) as session:
        attempt = session.exec(select(Attempt).where(Attempt.run_id == run_id)).one()
        assert resolve_image(session, ImageKind.attempt, attempt.id or 0).read_bytes() == ROUND.image
