"""The kept judged pool: the same strata and the same sample as the pool built per request,
and never stale after a regeneration or a re-judgement."""

import random
from pathlib import Path

import numpy as np
import pytest
from sqlalchemy.engine import Engine
from sqlmodel import Session

from app.cases.filters import CaseFilter
from app.importer import import_tree
from app.jobs.options import JobOptions
from app.jobs.queue import create_job
from app.jobs.runner import claim, run_job
from app.models import Direction
from app.studies.design import StudyPlan, draw_sample
from app.studies.judged_pool import _build, judged_pool
from app.studies.models import Design
from app.studies.pool import candidates, cluster_sizes, pool_by_stratum, strata_table, stratum_label
from pipeline.loop import RetryPolicy
from pipeline.offline import OfflineBackend
from tests import aio, factories
from tests.jobs.test_runner import task_ids

PLANS = [
    (CaseFilter(), ("verdict", "direction", "modality"), 9),
    (CaseFilter(modality=("chest_xray",)), ("verdict", "direction"), 5),
    (CaseFilter(disease=("Pneumothorax", "Edema")), ("verdict",), 3),
    (CaseFilter(q="effusion"), ("verdict", "outcome"), 2),
    (CaseFilter(), ("verdict", "disease"), 1),
]


def reference(session: Session, plan: StudyPlan) -> tuple[dict[str, list[int]], dict[str, int]]:
    """The draw as it was made before the pool was kept: Candidate objects from SQL."""
    facets = plan.strata_facets
    pool = pool_by_stratum(candidates(session, plan.case_filter, Design.validation, facets), facets)
    sample = {}
    for key, count in plan.per_stratum.items():
        rng = random.Random(f"{plan.seed}:sample:{key}")
        chosen = sorted(rng.sample(pool[key], count), key=lambda c: (c.task_id, c.attempt_id or 0))
        sample[key] = [c.attempt_id or 0 for c in chosen]
    return sample, {key: len(found) for key, found in pool.items()}


@pytest.mark.parametrize(("case_filter", "facets", "count"), PLANS)
def test_the_kept_pool_draws_the_sample_drawn_before(demo_engine: Engine, case_filter: CaseFilter,
                                                     facets: tuple[str, ...], count: int) -> None:
    with Session(demo_engine) as session:
        old = pool_by_stratum(candidates(session, case_filter, Design.validation, facets), facets)
        wanted = {key: min(count, len(found)) for key, found in old.items()}
        plan = StudyPlan(name="x", case_filter=case_filter, reader_ids=[1], seed=17,
                         strata_facets=facets, per_stratum=wanted)
        sample, sizes = draw_sample(session, plan)
        expected, expected_sizes = reference(session, plan)
        assert {k: [c.attempt_id for c in v] for k, v in sample.items()} == expected
        assert sizes == expected_sizes
        assert all(c.values == {f: stratum_part for f, stratum_part in zip(
            facets, key.split("/"), strict=True)} for key, v in sample.items() for c in v)
        rows, image_sizes = strata_table(session, case_filter, Design.validation, facets)
        assert [(r.key, r.label, r.pool) for r in rows] == [
            (k, stratum_label(k, facets), len(v)) for k, v in old.items()]
        flat = [c for v in old.values() for c in v]
        assert sorted(image_sizes) == sorted(cluster_sizes(flat))


def assert_fresh(session: Session) -> None:
    """The kept pool (updated in place, or built again) equals a fresh build, every column
    and every facet code, so that a study drawn from it is the study a fresh pool draws."""
    kept, built = judged_pool(session), _build(session)
    for name in ("attempt_id", "task_id", "image", "passed", "round", "accepted"):
        assert np.array_equal(getattr(kept, name), getattr(built, name)), name
    for name in ("score", "answers"):
        assert np.array_equal(getattr(kept, name), getattr(built, name), equal_nan=True), name
    assert kept.labels == built.labels
    for facet, codes in built.codes.items():
        assert np.array_equal(kept.codes[facet], codes), facet


def test_the_kept_pool_follows_a_regeneration_and_a_rejudgement(demo_engine: Engine, tmp_path: Path,
                                                                 caplog: pytest.LogCaptureFixture) -> None:
    """Each new version is applied to the newest pool as a delta (only the changed tasks read
    again), and the result is the pool a fresh build gives."""
    caplog.set_level("INFO", logger="app.studies.judged_pool")
    with Session(demo_engine) as session:
        before = judged_pool(session)
    tasks = task_ids(demo_engine, 3)
    for options in (JobOptions(), JobOptions(kind="rejudge", rejudge_times=1)):
        job_id = create_job(demo_engine, tasks, options)
        lease = claim(demo_engine, job_id)
        assert lease is not None
        aio.run(run_job(demo_engine, lease, lambda _: OfflineBackend(), tmp_path / "out",
                        policy=RetryPolicy(attempts=2, base_seconds=0.0)))
        with Session(demo_engine) as session:
            assert_fresh(session)
    with Session(demo_engine) as session:
        after = judged_pool(session)
    assert not np.array_equal(before.attempt_id, after.attempt_id)  # the new runs' rounds
    assert "updated in place: 3 tasks read again" in caplog.text


def test_the_kept_pool_follows_an_import(demo_engine: Engine, tmp_path: Path) -> None:
    with Session(demo_engine) as session:
        before = len(judged_pool(session))
    run = tmp_path / "run"
    key = "p-901-Lung_Lesion"
    factories.write_folder(run, "Chest-XRay", Direction.add, {key: factories.conversation(
        "p-901.jpeg", "Lung_Lesion", "success", [factories.round_entry(1, True)])})
    factories.write_images(run, "Chest-XRay", Direction.add, "p-901", "Lung_Lesion", [], accepted=True)
    import_tree(demo_engine, run)
    with Session(demo_engine) as session:
        assert_fresh(session)
        assert len(judged_pool(session)) == before + 1


def test_the_kept_pool_follows_a_migration(demo_engine: Engine) -> None:
    """A migration may rewrite rows in place (here: every verdict made a pass as the
    database moves to the newest revision), changing no id the data version looks at."""
    from alembic import command
    from alembic.config import Config
    from sqlalchemy import text

    from app.resources import resource_dir

    config = Config()
    config.set_main_option("script_location", str(resource_dir("app.migrations")))
    with demo_engine.begin() as connection:
        config.attributes["connection"] = connection
        command.downgrade(config, "-1")
    with Session(demo_engine) as session:
        assert not judged_pool(session).passed.all()  # kept, at the revision before
    with demo_engine.begin() as connection:
        config.attributes["connection"] = connection
        connection.execute(text("UPDATE judge_verdict SET qualified = 1, compliance = 1, "
                                "structure = 1, realism = 1, fidelity = 1"))
        command.upgrade(config, "head")
    with Session(demo_engine) as session:
        assert_fresh(session)
        assert judged_pool(session).passed.all()


def test_a_verdict_committed_below_the_newest_id_is_not_missed(demo_engine: Engine) -> None:
    """On PostgreSQL ids are handed out before the commit, so a verdict can appear with an id
    below the newest seen when the pool was read (two writers, one slower to commit). The
    update counts the rows and builds the pool afresh when they do not add up."""
    from sqlalchemy import text

    with demo_engine.begin() as conn:
        newest = conn.execute(text("SELECT max(id) FROM judge_verdict")).scalar()
        judged = conn.execute(text("SELECT min(attempt_id) FROM judge_verdict")).scalar()
        # An edit its judge has not answered yet, in another task's latest run.
        run = conn.execute(text(
            "SELECT t.latest_run_id FROM task t JOIN attempt a ON a.id = :judged "
            "WHERE t.latest_run_id IS NOT NULL AND t.latest_run_id <> a.run_id "
            "ORDER BY t.id LIMIT 1"), {"judged": judged}).scalar()
        unjudged = conn.execute(text(
            "INSERT INTO attempt (run_id, round, image_relpath, image_present) "
            "VALUES (:run, 99, 'late.jpeg', 1) RETURNING id"), {"run": run}).scalar()

    def verdict(verdict_id: int, attempt_id: int) -> None:
        with demo_engine.begin() as conn:
            conn.execute(text(
                "INSERT INTO judge_verdict (id, attempt_id, qualified, compliance, structure, "
                "realism, fidelity, created_at) VALUES (:v, :a, 1, 1, 1, 1, 1, CURRENT_TIMESTAMP)"),
                {"v": verdict_id, "a": attempt_id})

    with Session(demo_engine) as session:
        judged_pool(session)
    verdict(newest + 10, judged)  # the faster writer: a re-judgement, newest id
    with Session(demo_engine) as session:
        assert_fresh(session)
    verdict(newest + 5, unjudged)  # the slower one commits a lower id: a verdict of record
    verdict(newest + 11, judged)  # and the data moves on
    with Session(demo_engine) as session:
        assert_fresh(session)
        assert unjudged in judged_pool(session).attempt_id
