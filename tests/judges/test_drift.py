"""Drift: the judge of record asked again on a locked study, and a warning when its agreement
moved outside its interval or the API names another model version."""

from pathlib import Path

from bs4 import BeautifulSoup
from sqlalchemy.engine import Engine
from sqlmodel import Session

from app.jobs import claim, make_backend, run_job, start_drift_check
from app.judges.drift import DriftCheck, checks
from app.judges.leaderboard import Figure
from app.models import Role
from app.settings import Settings
from pipeline.loop import RetryPolicy
from tests import aio
from tests.reference_study import Reference
from tests.web.routes.test_accounts import client_for


def test_a_check_is_scored_and_compared(demo_engine: Engine, settings: Settings,
                                        reference: Reference, tmp_path: Path) -> None:
    offline = Settings(gemini_api_key="")
    start_drift_check(demo_engine, reference.study_id, offline, None)
    lease = claim(demo_engine)
    assert lease is not None
    aio.run(run_job(demo_engine, lease, lambda o: make_backend(o, offline), tmp_path,
                    policy=RetryPolicy(attempts=1, base_seconds=0.0)))
    with Session(demo_engine) as session:
        [check] = checks(session, reference.study_id)
    assert check.now is not None and check.now.value == 1.0  # the readers answered by its rule
    assert check.record.value is not None and check.record.value < 1.0
    assert check.moved == (check.record.high is not None and check.record.high < 1.0)
    assert check.versions_now == ("offline-heuristic-1",) and not check.new_version
    admin = client_for(demo_engine, settings, "chief", Role.admin)
    page = BeautifulSoup(admin.get(f"/judges/leaderboard?study={reference.study_id}").text,
                         "html.parser")
    assert page.select_one(f'#drift-checks tr[data-candidate-id="{check.candidate_id}"]') is not None
    assert (page.select_one(".drift-warning") is not None) == check.moved


def test_a_new_model_version_is_named() -> None:
    figure = Figure(0.8, 0.7, 0.9, 100, 50)
    seen = DriftCheck("c", 1, "now", figure, figure, False, ("v1",), ("v1", "v2"))
    unknown = DriftCheck("c", 1, "now", figure, figure, False, (), ("v2",))
    assert seen.new_version and not unknown.new_version


def test_a_second_check_while_one_runs_is_refused_and_names_never_clash(
        demo_engine: Engine, reference: Reference) -> None:
    import pytest
    from sqlmodel import select

    from app.errors import Conflict
    from app.judges.drift import drift_candidate, drift_plan
    from app.judges.models import JudgeCandidate
    from app.judges.reference import Ref

    offline = Settings(gemini_api_key="")
    job_id = start_drift_check(demo_engine, reference.study_id, offline, None)
    with pytest.raises(Conflict, match=f"already queued: job {job_id}"):
        start_drift_check(demo_engine, reference.study_id, offline, None)
    with Session(demo_engine) as session:  # within one second, on two references
        plan = drift_plan(session, offline, Ref("study", reference.study_id))
        names = {drift_candidate(session, plan, None).name for _ in range(3)}
        session.commit()
        assert len(names) == 3
        checks_made = session.exec(select(JudgeCandidate).where(
            JudgeCandidate.name.startswith("drift check"))).all()  # type: ignore[attr-defined]
        assert len(checks_made) == 4  # the refused click made none
