"""A server killed with SIGKILL right after acknowledging submissions still has them."""

import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx
import pytest
from bs4 import BeautifulSoup
from sqlalchemy import func, select
from sqlalchemy.engine import Engine
from sqlmodel import Session

from app.accounts.users import issue_token
from app.studies.models import Answer
from tests.browser.conftest import _free_port
from tests.config import TEST_SECRET_KEY
from tests.studies.conftest import make_study

pytestmark = pytest.mark.slow
ROOT = Path(__file__).resolve().parent.parent


@contextmanager
def server_process(engine: Engine, var_dir: Path) -> Iterator[tuple[subprocess.Popen[bytes], str]]:
    """The app in a process of its own, as `medbanana serve` runs it, on this test's database."""
    port = _free_port()
    env = {**os.environ, "MEDBANANA_VAR_DIR": str(var_dir), "MEDBANANA_SECURE_COOKIES": "false",
           "MEDBANANA_SECRET_KEY": TEST_SECRET_KEY.get_secret_value(),
           "MEDBANANA_DATABASE_URL": engine.url.render_as_string(hide_password=False)}
    process = subprocess.Popen(
        [sys.executable, "-m", "uvicorn", "app.web.main:create_app", "--factory", "--port", str(port),
         "--log-level", "warning"], cwd=ROOT, env=env)
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 30
        while True:
            try:
                httpx.get(f"{base}/login", timeout=1)
                break
            except httpx.TransportError:
                if time.monotonic() > deadline or process.poll() is not None:
                    raise RuntimeError("the server did not start") from None
                time.sleep(0.1)
        yield process, base
    finally:
        if process.poll() is None:
            process.kill()
        process.wait(timeout=10)


def submit_then_kill(engine: Engine, var_dir: Path) -> None:
    setup = make_study(engine)
    with Session(engine) as session:
        token = issue_token(session=session, user=setup.readers[0])
    headers = {"Authorization": f"Bearer {token}"}
    sid = setup.study.id
    acknowledged = 0
    with server_process(engine, var_dir) as (process, base):
        with httpx.Client(base_url=base, headers=headers, timeout=30) as client:
            for n in range(1, 9):
                form = {"compliance": "yes", "structure": "yes", "realism": "no",
                        "fidelity": "yes", "overall": "accept", "confidence": "4",
                        "submission_id": f"durable-{n:04d}"}
                response = client.post(f"/read/{sid}/{n}", data=form, follow_redirects=False)
                assert response.status_code == 303
                acknowledged += 1
        # No shutdown, no flush, no atexit: the process is gone the moment it acknowledged.
        os.kill(process.pid, signal.SIGKILL)
        process.wait(timeout=10)
    engine.dispose()
    with Session(engine) as session:
        assert session.scalar(select(func.count()).select_from(Answer)) == acknowledged
    with server_process(engine, var_dir) as (_, base):
        page = httpx.get(f"{base}/read/{sid}/1", headers=headers, timeout=30)
        assert page.status_code == 200
        progress = BeautifulSoup(page.text, "html.parser").select_one("#reader-progress")
        assert progress is not None and progress.get_text() == f"{acknowledged} of 8 done"


def test_sigkill_after_acknowledging_loses_nothing_on_sqlite(demo_engine: Engine,
                                                              tmp_path: Path) -> None:
    submit_then_kill(demo_engine, tmp_path / "var")


@pytest.mark.postgres
def test_sigkill_after_acknowledging_loses_nothing_on_postgres(pg_engine: Engine, demo_dir: Path,
                                                                tmp_path: Path) -> None:
    from app.importer import import_tree

    import_tree(pg_engine, demo_dir / "run", demo_dir / "source")
    submit_then_kill(pg_engine, tmp_path / "var")
