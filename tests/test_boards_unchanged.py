"""The leaderboard and the pairwise figures of fixed studies do not change when the code under
them moves (issue 44: one package per design).

The golden files in tests/golden/fixed_boards/ were written by this test at commit 6b95e3f,
before the designs declared their own traits and the pairwise strengths, the disagreement
queue and the charts moved. A change meant to move a figure rewrites them with
MEDBANANA_WRITE_GOLDEN=1 and says why in its commit.
"""

import itertools
import json
import secrets
from dataclasses import asdict, replace
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy.engine import Engine
from sqlmodel import Session, select

from app.cases.filters import CaseFilter
from app.cli.judges import board_json
from app.designs import design_of, pairwise_figures
from app.judges.board import leaderboard
from app.judges.scoring import offline_judge, score
from app.models import Role
from app.studies.design import StudyPlan
from app.studies.models import Assignment, Design
from tests import aio
from tests.accounts import add_user
from tests.reference_study import answer_and_lock, candidate
from tests.studies.conftest import make_study
from tests.test_figures_unchanged import as_before, masked

GOLDEN = Path(__file__).parent / "golden" / "fixed_boards"


def _plain(value: Any) -> Any:
    """A figure as JSON holds it: numpy numbers as Python's."""
    return json.loads(json.dumps(value, default=lambda v: v.tolist() if hasattr(v, "tolist") else str(v)))


def _boards(engine: Engine) -> dict[str, Any]:
    setup = make_study(engine, readers=2, design=Design.validation)
    answer_and_lock(engine, setup.study.id or 0, setup.readers)
    for bias in (None, "lenient", "strict"):
        judge = candidate(engine, bias or "fair", bias)
        aio.run(score(engine, judge.id or 0, setup.study.id or 0, offline_judge))
    with Session(engine) as session:
        boards = leaderboard(session, setup.study.id or 0, resamples=300)
    return json.loads(board_json(boards))


def _pairwise(engine: Engine) -> dict[str, Any]:
    admin = add_user(engine, "pair-admin", Role.admin)
    readers = [add_user(engine, f"pair-reader-{i}", Role.reader) for i in range(2)]
    plan = StudyPlan(name="rounds compared", case_filter=CaseFilter(),
                     reader_ids=[r.id or 0 for r in readers], design=Design.pairwise,
                     strata_facets=("direction",), per_stratum={"add": 6, "remove": 6})
    from app.designs.pairwise.answers import PairAnswerIn, submit

    with Session(engine) as session:
        study = design_of(Design.pairwise).create(session, replace(plan, pair_kind="consecutive"),
                                                  admin)
        reads = session.exec(select(Assignment).where(Assignment.study_id == study.id)
                             .order_by(Assignment.user_id, Assignment.sequence)).all()
        for i, assignment in enumerate(reads):
            submit(session, study, assignment, PairAnswerIn(
                call=["a", "b", "a", "equal", "b"][i % 5], confidence=1 + i % 5,
                submission_id=f"pair-{i:04d}"))
        return _plain(asdict(pairwise_figures(session, study, resamples=300)))


def test_the_leaderboard_and_the_pairwise_figures_are_as_before(
        demo_engine: Engine, monkeypatch: pytest.MonkeyPatch) -> None:
    drawn = itertools.count(1)
    monkeypatch.setattr(secrets, "token_hex", lambda n=32: f"{next(drawn):0{2 * n}x}")
    found = {"leaderboard.json": _boards(demo_engine), "pairwise.json": _pairwise(demo_engine)}
    found = {name: masked(value) for name, value in found.items()}
    assert found["pairwise.json"]["reads"] > 0 and found["leaderboard.json"]["overall"]["rows"]
    as_before(found, GOLDEN)
