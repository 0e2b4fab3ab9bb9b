"""Stratified, seeded, reproducible samples; balanced assignment; hidden repeat reads."""

from collections import Counter

import pytest
from sqlalchemy.engine import Engine
from sqlmodel import Session, col, select

from app.case_filter import CaseFilter
from app.models import Role, Task
from app.study_design import StudyError, StudyPlan, create_study, draw_sample
from app.study_models import Assignment, StudyItem, StudyReader
from tests.accounts import add_user

CHEST_SUCCESS = CaseFilter(modality=("chest_xray",), outcome=("success",))


def plan(readers: list[int], **overrides: object) -> StudyPlan:
    values: dict[str, object] = dict(name="pilot", case_filter=CHEST_SUCCESS, reader_ids=readers,
                                     seed=42, strata_facet="direction",
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
        first = draw_sample(s, plan(readers))
        again = draw_sample(s, plan(readers))
        other_seed = draw_sample(s, plan(readers, seed=7))
        tasks = {t.id: t for t in s.exec(select(Task))}
    assert first == again and first != other_seed
    assert {k: len(v) for k, v in first.items()} == {"add": 4, "remove": 4}
    for stratum, ids in first.items():
        assert all(tasks[i].direction == stratum and tasks[i].outcome == "success" for i in ids)


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


def test_repeat_reads_come_after_the_first_reads(demo_engine: Engine) -> None:
    readers, admin = people(demo_engine, 1)
    with Session(demo_engine) as s:
        create_study(session=s, plan=plan(readers, repeat_fraction=0.25), created_by=admin)
        worklist = s.exec(select(Assignment).order_by(col(Assignment.sequence))).all()
    assert len(worklist) == 10
    assert [a.repeat_of is not None for a in worklist] == [False] * 8 + [True] * 2
    firsts = {a.id: a.item_id for a in worklist[:8]}
    assert all(firsts[a.repeat_of] == a.item_id for a in worklist[8:])  # type: ignore[index]


def test_failed_rounds_can_be_read_too(demo_engine: Engine) -> None:
    readers, admin = people(demo_engine, 1)
    with Session(demo_engine) as s:
        study = create_study(session=s, created_by=admin, plan=plan(
            readers, case_filter=CaseFilter(modality=("fundus",)), strata_facet=None,
            per_stratum={}, total=6, include_failed_rounds=True))
        items = s.exec(select(StudyItem).where(StudyItem.study_id == study.id)).all()
    assert len(items) > 6  # tasks with failed rounds add one item per round with an image


@pytest.mark.parametrize("overrides, message", [
    ({"per_stratum": {"add": 500, "remove": 4}}, "has"),
    ({"strata_facet": "colour"}, "strata can be"),
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
