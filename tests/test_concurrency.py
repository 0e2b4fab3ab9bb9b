"""20 readers x 20 submissions in parallel against a running server (each answer of ten cases
sent twice, the second a new version while the others answer the same cases), and one submission
sent ten times at once: nothing lost, nothing doubled, no 5xx."""

import threading
import time
from collections import Counter
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor

import httpx
import pytest
import uvicorn
from sqlalchemy import func, select
from sqlalchemy.engine import Engine
from sqlmodel import Session

from app.accounts.users import issue_token
from app.cases.filters import CaseFilter
from app.models import Role
from app.settings import Settings
from app.studies.design import StudyPlan, create_study
from app.studies.models import Answer, Design
from app.web.main import create_app
from tests.accounts import add_user
from tests.browser.conftest import _free_port
from tests.config import server_settings
from tests.studies.conftest import opened

READERS, SUBMISSIONS = 20, 20
pytestmark = pytest.mark.slow


def serve(engine: Engine, settings: Settings) -> Iterator[str]:
    port = _free_port()
    server = uvicorn.Server(uvicorn.Config(create_app(settings, engine), host="127.0.0.1",
                                           port=port, log_level="warning"))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    while not server.started:
        time.sleep(0.05)
    yield f"http://127.0.0.1:{port}"
    server.should_exit = True
    thread.join(timeout=10)


def run_readers(engine: Engine, base: str) -> tuple[Counter[int], int]:
    admin = add_user(engine, "load-admin", Role.admin)
    readers = [add_user(engine, f"load-{i:02d}", Role.reader) for i in range(READERS)]
    with Session(engine) as session:
        study = create_study(session=session, created_by=admin, plan=StudyPlan(
            name="load", case_filter=CaseFilter(outcome=("success",)), total=10,
            design=Design.accepted, reader_ids=[r.id or 0 for r in readers]))
        study_id = study.id
        tokens = [issue_token(session=session, user=r) for r in readers]
    opened(engine, study_id or 0)

    def reader_work(index: int) -> list[int]:
        statuses = []
        with httpx.Client(base_url=base, timeout=60,
                          headers={"Authorization": f"Bearer {tokens[index]}"}) as client:
            for n in range(SUBMISSIONS):
                form = {"compliance": "yes", "structure": "no", "realism": "yes",
                        "fidelity": "yes", "overall": "accept", "confidence": "3",
                        "comment": f"look {n}", "submission_id": f"load-{index:02d}-{n:03d}"}
                # Ten cases each, so later submissions are edits (each comment differs; an
                # unchanged answer makes no version): new versions of earlier answers, while
                # the other readers answer the same cases at the same moment.
                response = client.post(f"/read/{study_id}/{n % 10 + 1}", data=form)
                statuses.append(response.status_code)
        return statuses

    def double_click(_: int) -> list[int]:
        # The same submission sent ten times at once, as a retrying client or a double click.
        with httpx.Client(base_url=base, timeout=60,
                          headers={"Authorization": f"Bearer {tokens[0]}"}) as client:
            form = {"compliance": "no", "structure": "no", "realism": "no", "fidelity": "no",
                    "overall": "reject", "confidence": "5", "submission_id": "load-duplicate"}
            return [client.post(f"/read/{study_id}/1", data=form).status_code]

    with ThreadPoolExecutor(READERS) as pool:
        results = list(pool.map(reader_work, range(READERS)))
        results += list(pool.map(double_click, range(10)))
    with Session(engine) as session:
        stored = session.scalar(select(func.count()).select_from(Answer)) or 0
    return Counter(s for statuses in results for s in statuses), stored


def test_parallel_readers_on_sqlite(demo_engine: Engine, settings: Settings) -> None:
    for base in serve(demo_engine, settings):
        statuses, stored = run_readers(demo_engine, base)
    assert statuses == Counter({303: READERS * SUBMISSIONS + 10})
    assert stored == READERS * SUBMISSIONS + 1


@pytest.mark.postgres
def test_parallel_readers_on_postgres(pg_engine: Engine, demo_dir, tmp_path) -> None:  # type: ignore[no-untyped-def]
    from app.importer import import_tree

    import_tree(pg_engine, demo_dir / "run", demo_dir / "source")
    for base in serve(pg_engine, server_settings(tmp_path)):
        statuses, stored = run_readers(pg_engine, base)
    assert statuses == Counter({303: READERS * SUBMISSIONS + 10})
    assert stored == READERS * SUBMISSIONS + 1
