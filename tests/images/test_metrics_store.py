"""Metrics for every edit, computed in the background, shown on the case page."""

import io
from pathlib import Path

import pytest
from bs4 import BeautifulSoup
from fastapi.testclient import TestClient
from PIL import Image
from sqlalchemy import update
from sqlalchemy.engine import Engine
from sqlmodel import Session, select
from typer.testing import CliRunner

from app.cli import cli
from app.images.metrics import pixel_digest
from app.images.metrics_store import compute_pending, pending_count
from app.models import Attempt, AttemptMetric, Task


def test_every_edit_is_measured_once(demo_engine: Engine) -> None:
    with Session(demo_engine) as session:
        with_image = len(session.exec(select(Attempt).where(Attempt.image_present == True)).all())  # noqa: E712
        assert pending_count(session) == with_image
    total = 0
    while stored := compute_pending(demo_engine, limit=100):
        total += stored
    with Session(demo_engine) as session:
        metrics = session.exec(select(AttemptMetric)).all()
        assert pending_count(session) == 0
    assert total == with_image == len(metrics)
    measured = [m for m in metrics if m.error is None]
    # One demo original is missing on purpose: its edits are recorded with the reason.
    assert any(m.error is not None for m in metrics)
    assert all(0 <= (m.changed_fraction or 0) <= 1 and (m.ssim or 0) <= 1 for m in measured)
    # A too-subtle failed round may change nothing above the threshold; most edits do.
    assert sum((m.changed_regions or 0) >= 1 for m in measured) > len(measured) / 2


def test_rows_measured_before_digests_were_kept_get_theirs(demo_engine: Engine) -> None:
    """The pixel digest (what leaves identical pairs out of pairwise pools) came after the
    metrics: older rows are filled by the same worker, to the digest a fresh measure gives."""
    while compute_pending(demo_engine, limit=500):
        pass
    with Session(demo_engine) as session:
        fresh = {m.attempt_id: m.pixels_sha256 for m in session.exec(select(AttemptMetric)).all()
                 if m.error is None}
        assert all(fresh.values()) and len(set(fresh.values())) > 1
        session.exec(update(AttemptMetric).values(pixels_sha256=None))  # as the migration left them
        session.commit()
        assert pending_count(session) == len(fresh)
    assert compute_pending(demo_engine, limit=5) == 5
    while compute_pending(demo_engine, limit=500):
        pass
    with Session(demo_engine) as session:
        filled = {m.attempt_id: m.pixels_sha256 for m in session.exec(select(AttemptMetric)).all()
                  if m.error is None}
        assert pending_count(session) == 0
    assert filled == fresh


def test_one_image_in_two_encodings_has_one_digest(tmp_path: Path) -> None:
    image = Image.new("L", (40, 30), 90)
    image.putpixel((3, 4), 200)
    grey, rgb = io.BytesIO(), io.BytesIO()
    image.save(grey, "PNG")
    image.convert("RGB").save(rgb, "PNG", compress_level=1)
    assert grey.getvalue() != rgb.getvalue()
    assert pixel_digest(grey.getvalue()) == pixel_digest(rgb.getvalue())
    image.putpixel((3, 5), 201)
    other = io.BytesIO()
    image.save(other, "PNG")
    assert pixel_digest(other.getvalue()) != pixel_digest(grey.getvalue())


def test_the_case_page_shows_them(client: TestClient, demo_engine: Engine) -> None:
    compute_pending(demo_engine, limit=1000)
    with Session(demo_engine) as session:
        task = session.exec(select(Task).where(Task.outcome == "success",
                                               Task.modality == "chest_xray")).first()
        assert task is not None
    page = BeautifulSoup(client.get(f"/cases/{task.id}").text, "html.parser")
    accepted = page.select_one('figure[data-role="accepted"] dl.metrics')
    assert accepted is not None
    assert accepted.select_one(".ssim").get_text().startswith("0.")
    assert accepted.select_one(".changed-area").get_text().endswith("%")


def test_the_cli_measures_what_is_left(demo_engine: Engine, tmp_path: Path) -> None:
    env = {"MEDBANANA_DATABASE_URL": demo_engine.url.render_as_string(hide_password=False),
           "MEDBANANA_VAR_DIR": str(tmp_path / "var")}
    result = CliRunner().invoke(cli, ["metrics"], env=env)
    assert result.exit_code == 0 and result.output.startswith("measured ")
    with Session(demo_engine) as session:
        assert pending_count(session) == 0



@pytest.mark.parametrize("database", ["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
def test_two_workers_measuring_the_same_edit_store_it_once(
        request: pytest.FixtureRequest, demo_dir: Path, monkeypatch: pytest.MonkeyPatch,
        database: str) -> None:
    """The second worker's pass finds the row the first one stored meanwhile: no unique-key
    error (it once crashed both workers' loops), and the first row stands."""
    from sqlmodel import Session, select

    from app.images import metrics_store
    from app.importer import import_tree
    from app.models import AttemptMetric

    if database == "sqlite":
        engine = request.getfixturevalue("demo_engine")
    else:
        engine = request.getfixturevalue("pg_engine")
        import_tree(engine, demo_dir / "run", demo_dir / "source")
    with Session(engine) as session:
        ids = metrics_store.pending(session, 3)
    assert metrics_store.compute_pending(engine, limit=1) == 1  # "the other worker"
    monkeypatch.setattr(metrics_store, "pending", lambda session, limit: ids)  # a stale list
    metrics_store.compute_pending(engine, limit=3)
    with Session(engine) as session:
        stored = session.exec(select(AttemptMetric.attempt_id)).all()
        assert sorted(stored) == sorted(ids)
