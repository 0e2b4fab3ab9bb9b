"""Thirty readers, each its own account, read one study at once for a few seconds against a
running server: answer, follow to the next case, again. Not one error (issue 54; the load
itself is measured by benchmarks/many_readers.py)."""

import asyncio
import time
from collections import Counter

import httpx
from sqlalchemy.engine import Engine
from sqlmodel import Session

from app.accounts.users import issue_token
from app.cases.filters import CaseFilter
from app.models import Role
from app.settings import Settings
from app.studies.design import StudyPlan, create_study
from app.studies.models import Design
from tests.accounts import add_user
from tests.studies.conftest import opened
from tests.test_concurrency import serve

READERS, SECONDS, CASES = 30, 4.0, 10
FORM = {"compliance": "yes", "structure": "yes", "realism": "no", "fidelity": "yes",
        "overall": "accept", "confidence": "4"}


async def _read(base: str, study_id: int, tokens: list[str]) -> Counter[str]:
    outcomes: Counter[str] = Counter()
    deadline = time.monotonic() + SECONDS

    async def reader(index: int, client: httpx.AsyncClient) -> None:
        headers = {"Authorization": f"Bearer {tokens[index]}"}
        n = 0
        while time.monotonic() < deadline:
            try:
                page = await client.post(
                    f"/read/{study_id}/{n % CASES + 1}", headers=headers, follow_redirects=True,
                    data=FORM | {"comment": str(n), "submission_id": f"many-{index:02d}-{n:05d}"})
            except httpx.HTTPError as error:
                outcomes[type(error).__name__] += 1
                continue
            outcomes[str(page.status_code)] += 1
            n += 1

    async with httpx.AsyncClient(base_url=base, timeout=30,
                                 limits=httpx.Limits(max_connections=READERS + 5,
                                                     keepalive_expiry=2.0)) as client:
        await asyncio.gather(*(reader(i, client) for i in range(READERS)))
    return outcomes


def test_thirty_readers_at_once_get_no_error(demo_engine: Engine, settings: Settings) -> None:
    admin = add_user(demo_engine, "many-admin", Role.admin)
    readers = [add_user(demo_engine, f"many-{i:02d}", Role.reader) for i in range(READERS)]
    with Session(demo_engine) as session:
        study = create_study(session=session, created_by=admin, plan=StudyPlan(
            name="thirty at once", case_filter=CaseFilter(outcome=("success",)), total=CASES,
            design=Design.accepted, reader_ids=[r.id or 0 for r in readers]))
        study_id = study.id or 0
        tokens = [issue_token(session=session, user=r) for r in readers]
    opened(demo_engine, study_id)
    for base in serve(demo_engine, settings):
        outcomes = asyncio.run(_read(base, study_id, tokens))
    assert set(outcomes) == {"200"}, outcomes
    assert outcomes["200"] >= READERS  # every reader got at least one next case
