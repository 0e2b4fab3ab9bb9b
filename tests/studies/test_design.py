"""Stratified, seeded, reproducible samples; balanced assignment; hidden repeat reads."""

import json
from collections import Counter

import pytest
from sqlalchemy.engine import Engine
from sqlmodel import Session, col, select

from app.cases.filters import CaseFilter
from app.models import JudgeVerdict, Role, Task
from app.studies.design import StudyError, StudyPlan, create_study, draw_sample
from app.studies.models import Assignment, Design, StudyItem, StudyReader
from tests.accounts import add_user

CHEST_SUCCESS = CaseFilter(modality=("chest_xray",), outcome=("success",))


def plan(readers: list[int], **overrides: object) -> StudyPlan:
    values: dict[str, object] = dict(name="pilot", case_filter=CHEST_SUCCESS, reader_ids=readers,
                                     seed=42, design=Design.accepted, strata_facets=("direction",),
                                     per_stratum={"add": 4, "remove": 4})
    values.update(overrides)
    return StudyPlan(**values)  # type: ignore[arg-type]


def people(engine: Engine, n: int = 2) -> tuple[list[int], object]:
    admin = add_user(engine, "admin-1", Role.admin)
    readers = [add_user(engine, f"reader-{i}", Role.reader).id or 0 for i in range(n)]
    return readers, admin


def test_sample_is_stratified_and_reproducible(demo_engine: Engine) -> None:
    readers, _ = people(demo_engine)
    with Session(demo_engine) as s:
        first, pool = draw_sample(s, plan(readers))
        again, _ = draw_sample(s, plan(readers))
        other_seed, _ = draw_sample(s, plan(readers, seed=7))
        tasks = {t.id: t for t in s.exec(select(Task))}
    assert first == again and first != other_seed
    assert {k: len(v) for k, v in first.items()} == {"add": 4, "remove": 4}
    assert pool == {"add": 53, "remove": 52}  # the demo's accepted chest X-ray edits
    for stratum, units in first.items():
        assert all(tasks[u.task_id].direction == stratum and tasks[u.task_id].outcome == "success"
                   for u in units)


def test_fully_crossed_each_reader_reads_all_in_an_own_order(demo_engine: Engine) -> None:
    readers, admin = people(demo_engine)
    with Session(demo_engine) as s:
        study = create_study(session=s, plan=plan(readers), created_by=admin)
        items = s.exec(select(StudyItem).where(StudyItem.study_id == study.id)).all()
        orders = {r: [a.item_id for a in s.exec(select(Assignment).where(
            Assignment.user_id == r).order_by(col(Assignment.sequence)))] for r in readers}
        seeds = [r.order_seed for r in s.exec(select(StudyReader))]
    assert len(items) == 8
    assert all(sorted(o) == sorted(i.id for i in items) for o in orders.values())
    assert orders[readers[0]] != orders[readers[1]]
    assert len(set(seeds)) == 2
    assert len({i.uid for i in items}) == 8 and all(len(i.uid) == 24 for i in items)


def test_k_readers_per_case_balances_the_load(demo_engine: Engine) -> None:
    readers, admin = people(demo_engine, 3)
    with Session(demo_engine) as s:
        create_study(session=s, plan=plan(readers, readers_per_case=2), created_by=admin)
        loads = Counter(a.user_id for a in s.exec(select(Assignment)))
        per_item = Counter(a.item_id for a in s.exec(select(Assignment)))
    assert set(per_item.values()) == {2}
    assert max(loads.values()) - min(loads.values()) <= 1


def test_repeat_reads_come_in_the_second_half_after_their_first_reads(demo_engine: Engine) -> None:
    readers, admin = people(demo_engine, 1)
    with Session(demo_engine) as s:
        create_study(session=s, plan=plan(readers, repeat_fraction=0.25), created_by=admin)
        worklist = s.exec(select(Assignment).order_by(col(Assignment.sequence))).all()
    assert len(worklist) == 10 and [a.sequence for a in worklist] == list(range(1, 11))
    repeats = [a for a in worklist if a.repeat_of is not None]
    assert len(repeats) == 2 and all(a.sequence > 5 for a in repeats)
    firsts = {a.id: a for a in worklist if a.repeat_of is None}
    assert all(firsts[a.repeat_of].item_id == a.item_id  # type: ignore[index]
               and firsts[a.repeat_of].sequence < a.sequence for a in repeats)  # type: ignore[index]


def test_failed_rounds_can_be_read_too(demo_engine: Engine) -> None:
    readers, admin = people(demo_engine, 1)
    with Session(demo_engine) as s:
        study = create_study(session=s, created_by=admin, plan=plan(
            readers, case_filter=CaseFilter(modality=("fundus",)), strata_facets=(),
            per_stratum={}, total=6, design=Design.runs))
        items = s.exec(select(StudyItem).where(StudyItem.study_id == study.id)).all()
    assert len(items) > 6  # tasks with failed rounds add one item per round with an image


@pytest.mark.parametrize("overrides, message", [
    ({"per_stratum": {"add": 500, "remove": 4}}, "stratum direction add has 53 in its pool; 500"),
    ({"strata_facets": ("colour",)}, "strata can be"),
    ({"strata_facets": ("verdict",)}, "only a validation study"),
    ({"design": Design.validation}, "stratifies by the judge's verdict"),
    ({"primary_question": "beauty"}, "primary question"),
    ({"reader_ids": []}, "at least one reader"),
    ({"readers_per_case": 3}, "between 1 and 2"),
    ({"repeat_fraction": 0.9}, "repeat fraction"),
    ({"name": " "}, "name"),
])
def test_impossible_plans_say_why(demo_engine: Engine, overrides: dict, message: str) -> None:
    readers, admin = people(demo_engine)
    with Session(demo_engine) as s, pytest.raises(StudyError, match=message):
        create_study(session=s, plan=plan(readers, **overrides), created_by=admin)


def test_admins_cannot_be_readers_and_names_are_unique(demo_engine: Engine) -> None:
    readers, admin = people(demo_engine)
    with Session(demo_engine) as s:
        with pytest.raises(StudyError, match="be a reader"):
            create_study(session=s, plan=plan([admin.id]), created_by=admin)  # type: ignore[attr-defined]
        create_study(session=s, plan=plan(readers), created_by=admin)
        with pytest.raises(StudyError, match="exists already"):
            create_study(session=s, plan=plan(readers), created_by=admin)


def test_a_validation_study_reads_both_verdicts_and_freezes_each(demo_engine: Engine) -> None:
    readers, admin = people(demo_engine)
    strata = {f"{v}/{d}/chest_xray": 5 for v in ("pass", "fail") for d in ("add", "remove")}
    with Session(demo_engine) as s:
        study = create_study(session=s, created_by=admin, plan=plan(
            readers, case_filter=CaseFilter(modality=("chest_xray",)), design=Design.validation,
            strata_facets=("verdict", "direction", "modality"), per_stratum=strata))
        items = s.exec(select(StudyItem).where(StudyItem.study_id == study.id)).all()
        verdicts = {i.id: s.get(JudgeVerdict, i.judge_verdict_id) for i in items}
        first = {i.id: s.exec(select(JudgeVerdict).where(JudgeVerdict.attempt_id == i.attempt_id)
                              .order_by(col(JudgeVerdict.id))).first() for i in items}
    assert len(items) == 20 and Counter(i.stratum for i in items) == dict.fromkeys(strata, 5)
    for item in items:
        verdict = verdicts[item.id]
        assert verdict is not None and verdict.id == first[item.id].id  # the verdict of record
        assert verdict.qualified is (item.stratum.startswith("pass"))
    assert json.loads(study.selection)["pool"] == {
        "fail/add/chest_xray": 84, "fail/remove/chest_xray": 79,
        "pass/add/chest_xray": 53, "pass/remove/chest_xray": 52}


def test_a_stratum_too_small_is_named_and_nothing_is_created(demo_engine: Engine) -> None:
    readers, admin = people(demo_engine)
    with Session(demo_engine) as s:
        with pytest.raises(StudyError, match="verdict pass · direction add has 53 in its pool; 60"):
            create_study(session=s, created_by=admin, plan=plan(
                readers, case_filter=CaseFilter(modality=("chest_xray",)), design=Design.validation,
                strata_facets=("verdict", "direction"), per_stratum={"pass/add": 60, "fail/add": 5}))
        s.rollback()
        assert s.exec(select(StudyItem)).first() is None


def test_a_run_never_judged_is_not_in_the_whole_runs_pool(demo_engine: Engine) -> None:
    """A whole-runs study compares readers with the judge round by round: a run with no
    verdict at all has nothing to compare with."""
    from sqlalchemy import update

    from app.studies.pool import candidates

    with Session(demo_engine) as s:
        before = candidates(s, CaseFilter(), Design.runs, ())
        gone = before[0].task_id
        s.execute(update(Task).where(Task.id == gone).values(outcome="unjudged"))  # type: ignore[arg-type]
        s.commit()
        after = candidates(s, CaseFilter(), Design.runs, ())
    assert [c.task_id for c in after] == [c.task_id for c in before[1:]]
