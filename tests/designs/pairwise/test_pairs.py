"""The pairs of a pairwise study, on the demo data: each of one task and both images present;
consecutive rounds, the accepted edit against each rejected round, and runs against runs."""

import itertools
from collections import Counter
from dataclasses import replace
from pathlib import Path

import pytest
from sqlalchemy.engine import Engine
from sqlmodel import Session, delete, select

from app.cases.filters import CaseFilter
from app.designs import design_of, pairs_left_out
from app.designs.pairwise.pairs import PairKind, PairPool, pair_pool, pairs
from app.designs.pairwise.study import pair_strata
from app.images.metrics_store import compute_pending
from app.models import Attempt, AttemptMetric, JudgeVerdict, Role, Run, SourceImage, Task
from app.studies.design import StudyError, StudyPlan
from app.studies.design_traits import PAIR_FACETS
from app.studies.models import Design, Study
from tests.accounts import add_user
from tests.regeneration import regenerate_offline


def _drafted(kind: str) -> StudyPlan:
    return StudyPlan(name="", case_filter=CaseFilter(), reader_ids=[], design=Design.pairwise,
                     pair_kind=kind)


def _runs(session: Session) -> dict[int, list[Attempt]]:
    """Each run's present rounds, of the tasks whose original is on disk."""
    shown = {t.id for t in session.exec(select(Task)).all()
             if (source := session.get(SourceImage, t.source_image_id)) and source.present}
    by: dict[int, list[Attempt]] = {}
    for attempt in session.exec(select(Attempt).where(Attempt.image_present == True)  # noqa: E712
                                .order_by(Attempt.round)).all():
        run = session.get(Run, attempt.run_id)
        if run is not None and run.task_id in shown:
            by.setdefault(attempt.run_id, []).append(attempt)
    return by


def test_pairs_whose_original_is_missing_are_left_out_and_counted(demo_engine: Engine) -> None:
    """The demo leaves one original out on purpose: every draw of the form's defaults was
    refused for it."""
    with Session(demo_engine) as session:
        missing = [s.id for s in session.exec(select(SourceImage)).all() if not s.present]
        pool = pair_pool(session, PairKind.consecutive, CaseFilter())
        left_out = pairs_left_out(session, _drafted("consecutive"))
    assert missing and pool.missing == left_out.missing > 0
    assert not any(pool.pair(i).source_image_id in missing for i in range(len(pool)))


def _make_identical(engine: Engine) -> tuple[int, int]:
    """Point one consecutive pair's later edit at its earlier edit's file: one image twice,
    as an offline refinement that changed nothing made. Returns its (first, second) attempt."""
    with Session(engine) as session:
        pool = pair_pool(session, PairKind.consecutive, CaseFilter(modality=("fundus",)))
        pair = pool.pair(0)
        first = session.get(Attempt, pair.first.attempt_id)
        second = session.get(Attempt, pair.second.attempt_id)
        assert first is not None and second is not None
        second.image_root_id, second.image_relpath = first.image_root_id, first.image_relpath
        session.add(second)
        session.commit()
        return pair.first.attempt_id, pair.second.attempt_id


def _pairs_of(pool: PairPool) -> set[tuple[int, int]]:
    return {(pool.pair(i).first.attempt_id, pool.pair(i).second.attempt_id)
            for i in range(len(pool))}


def test_a_pair_of_two_identical_edits_is_left_out_and_counted(demo_engine: Engine) -> None:
    """An offline regeneration made five identical rounds, and each pair of them entered the
    pairwise pools: a question with no answer."""
    fundus = CaseFilter(modality=("fundus",))
    while compute_pending(demo_engine, limit=500):
        pass
    with Session(demo_engine) as session:
        before = pair_pool(session, PairKind.consecutive, fundus)
    identical = _make_identical(demo_engine)
    with Session(demo_engine) as session:
        unchecked = pair_pool(session, PairKind.consecutive, fundus)
        session.exec(delete(AttemptMetric).where(AttemptMetric.attempt_id == identical[1]))
        session.commit()
        pending = pair_pool(session, PairKind.consecutive, fundus)
    # Its digest was of the old file until it is measured again; unmeasured it is counted.
    assert identical in _pairs_of(unchecked) and identical in _pairs_of(pending)
    assert pending.unchecked >= 1 and before.unchecked == 0
    while compute_pending(demo_engine, limit=500):
        pass
    with Session(demo_engine) as session:
        after = pair_pool(session, PairKind.consecutive, fundus)
        left_out = pairs_left_out(session, replace(_drafted("consecutive"), case_filter=fundus))
    assert identical not in _pairs_of(after)
    assert after.identical == before.identical + 1 == left_out.identical
    assert len(after) == len(before) - 1 and after.unchecked == 0


def test_a_drawn_pair_not_yet_checked_is_compared_when_the_study_is_made(
        demo_engine: Engine) -> None:
    """While the metrics worker is behind, the draw itself compares the drawn edits: a study
    never holds two identical edits, and nothing is written when it refuses."""
    _make_identical(demo_engine)
    admin = add_user(demo_engine, "chief", Role.admin)
    reader = add_user(demo_engine, "dr-a", Role.reader)
    fundus = CaseFilter(modality=("fundus",))
    with Session(demo_engine) as session:
        size = len(pair_pool(session, PairKind.consecutive, fundus))
        plan = StudyPlan(name="all", case_filter=fundus, reader_ids=[reader.id or 0],
                         design=Design.pairwise, total=size, pair_kind="consecutive")
        with pytest.raises(StudyError, match="1 drawn pair shows two identical edits"):
            design_of(Design.pairwise).create(session, plan, admin)
        session.rollback()
        assert not session.exec(select(Study)).all()
    while compute_pending(demo_engine, limit=500):
        pass
    with Session(demo_engine) as session:
        plan = replace(plan, total=size - 1)
        study = design_of(Design.pairwise).create(session, plan, admin)
        assert study.id is not None


def test_consecutive_and_accepted_pairs_of_the_demo(demo_engine: Engine) -> None:
    with Session(demo_engine) as session:
        consecutive = pairs(session, PairKind.consecutive)
        accepted = pairs(session, PairKind.accepted)
        runs = {r.id: r for r in session.exec(select(Run)).all()}
        by_run = _runs(session)
        passed = {v.attempt_id: bool(v.qualified) for v in
                  session.exec(select(JudgeVerdict).order_by(JudgeVerdict.id.desc())).all()}  # type: ignore[union-attr]
    expected_consecutive = sum(sum(1 for a, b in itertools.pairwise(rounds)
                                   if b.round == a.round + 1) for rounds in by_run.values())
    expected_accepted = sum(len(rounds) - 1 for run_id, rounds in by_run.items()
                            if any(a.round == runs[run_id].success_round for a in rounds))
    assert len(consecutive) == expected_consecutive > 0
    assert len(accepted) == expected_accepted > 0
    for pair in consecutive:
        assert pair.first.run_id == pair.second.run_id and pair.second.round == pair.first.round + 1
    for pair in accepted:
        assert pair.first.round == runs[pair.first.run_id].success_round != pair.second.round
        assert pair.first.passed and pair.verdicts in ("both passed", "one passed")
    # The verdicts are the verdicts of record (the first one given).
    assert all(p.first.passed == passed.get(p.first.attempt_id, False) for p in consecutive)
    # The pool's strata, by position, are the pairs grouped by their facets' values.
    with Session(demo_engine) as session:
        pool = pair_pool(session, PairKind.accepted, CaseFilter())
    for facets in (PAIR_FACETS, ("verdicts", "modality"), ()):
        expected: dict[str, list[int]] = {}
        for pair in accepted:
            key = "/".join(pair.value(f) for f in facets)
            expected.setdefault(key, []).append(pair.second.attempt_id)
        by_stratum = pool.by_stratum(facets)
        assert {key: [pool.pair(int(i)).second.attempt_id for i in members]
                for key, members in by_stratum.items()} == expected
    assert all(len(key.split("/")) == 3 for key in pool.by_stratum(PAIR_FACETS))


def test_a_filter_narrows_the_pairs(demo_engine: Engine) -> None:
    with Session(demo_engine) as session:
        every = pairs(session, PairKind.consecutive)
        fundus = pairs(session, PairKind.consecutive, CaseFilter(modality=("fundus",)))
        modality = {t.id: t.modality for t in session.exec(select(Task)).all()}
    assert fundus and len(fundus) < len(every)
    assert {modality[p.task_id] for p in fundus} == {"fundus"} == {p.modality for p in fundus}


def test_runs_of_one_task_are_paired_in_the_order_they_were_made(demo_engine: Engine,
                                                                 tmp_path: Path) -> None:
    with Session(demo_engine) as session:
        assert pairs(session, PairKind.runs) == []  # the demo has one run per task
        assert pair_strata(session, _drafted("runs")) == ([], [])
        tasks = [t.id or 0 for t in session.exec(select(Task).order_by(Task.id).limit(3)).all()]
    regenerate_offline(demo_engine, tasks, tmp_path)
    with Session(demo_engine) as session:
        found = pairs(session, PairKind.runs)
        # The form's counts are kept, but not past a new run.
        rows, per_image = pair_strata(session, _drafted("runs"))
        assert [(row.key, row.pool) for row in rows] == [("", len(found))]
        assert sum(per_image) == len(found)
        runs = {r.id: r for r in session.exec(select(Run)).all()}
    assert Counter(p.task_id for p in found) == Counter(tasks)  # one pair each: import, then regeneration
    for pair in found:
        before, after = runs[pair.first.run_id], runs[pair.second.run_id]
        assert before.origin != "regeneration" and after.origin == "regeneration"
        assert before.task_id == after.task_id == pair.task_id


def test_the_kept_counts_follow_a_run_that_ends(demo_engine: Engine) -> None:
    """A run's accepted round is set when it ends, with no new id: the form's counts of
    accepted-against-rejected pairs must see it (the data's fingerprint counts open runs)."""
    plan = replace(_drafted("accepted"), strata_facets=())
    with Session(demo_engine) as session:
        task = session.exec(select(Task).order_by(Task.id)).first()
        assert task is not None
        old = session.exec(select(Attempt).join(Run, Attempt.run_id == Run.id)  # type: ignore[arg-type]
                           .where(Run.task_id == task.id, Attempt.image_present == True)  # noqa: E712
                           .order_by(Attempt.round)).first()
        assert old is not None
        run = Run(task_id=task.id or 0, origin="regeneration", outcome="running", fingerprint="open-run")
        session.add(run)
        session.flush()
        for round_ in (1, 2):
            session.add(Attempt(run_id=run.id or 0, round=round_, image_root_id=old.image_root_id,
                                image_relpath=old.image_relpath, image_present=True))
        session.commit()
        before = pair_strata(session, plan)[0]
        run.outcome, run.success_round = "success", 2
        session.add(run)
        session.commit()
        after = pair_strata(session, plan)[0]
    assert after[0].pool == before[0].pool + 1


def test_each_kind_and_choice_of_strata_is_counted_apart_and_kept(
        demo_engine: Engine, monkeypatch: pytest.MonkeyPatch) -> None:
    """The form's counts are kept per kind and strata: a change of either is its own entry,
    and asking again reads no edit (the kept pool answers)."""
    from app.designs.pairwise import study as pairwise_study

    by_modality = replace(_drafted("consecutive"), strata_facets=("modality",))
    with Session(demo_engine) as session:
        counted = pair_strata(session, by_modality)[0]
        whole = pair_strata(session, replace(by_modality, strata_facets=()))[0]
        assert sum(r.pool for r in counted) == whole[0].pool and len(counted) > 1
        reads: list[object] = []
        monkeypatch.setattr(pairwise_study, "edit_table", lambda *a: reads.append(a))
        assert pair_strata(session, by_modality)[0] == counted
    assert reads == []


def test_the_kept_counts_follow_a_digest_written_to_an_older_row(demo_engine: Engine) -> None:
    """The metrics worker's backfill writes digests into rows it made before, adding none:
    the kept pool must see a pair become two identical edits (counted undigested rows)."""
    plan = replace(_drafted("consecutive"), strata_facets=())
    with Session(demo_engine) as session:
        pair = pairs(session, PairKind.consecutive)[0]
        ids = (pair.first.attempt_id, pair.second.attempt_id)
        session.exec(delete(AttemptMetric).where(AttemptMetric.attempt_id.in_(ids)))  # type: ignore[attr-defined]
        session.add_all([AttemptMetric(attempt_id=a) for a in ids])
        session.commit()
        before = pair_strata(session, plan)[0][0].pool
        for metric in session.exec(select(AttemptMetric).where(
                AttemptMetric.attempt_id.in_(ids))).all():  # type: ignore[attr-defined]
            metric.pixels_sha256 = "0" * 64  # the two edits turn out to be one image
            session.add(metric)
        session.commit()
        after = pair_strata(session, plan)[0][0].pool
    assert after == before - 1


def test_the_form_reads_the_state_of_the_data_once_per_transaction(
        demo_engine: Engine, monkeypatch: pytest.MonkeyPatch) -> None:
    from app.designs.pairwise import study as pairwise_study

    calls: list[object] = []
    real = pairwise_study._state
    monkeypatch.setattr(pairwise_study, "_state", lambda *a: calls.append(a) or real(*a))
    plan = _drafted("consecutive")
    with Session(demo_engine) as session:
        pair_strata(session, plan)
        pairs_left_out(session, plan)
        assert len(calls) == 1
        session.commit()  # a new transaction reads it again
        pairs_left_out(session, plan)
        assert len(calls) == 2
