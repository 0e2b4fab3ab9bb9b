"""The settled pool: filled from a locked study's unanimous and adjudicated edits, and by an
admin's marks; a study draws its known-answer cases from it."""

import json
from collections import Counter

import pytest
from sqlalchemy.engine import Engine
from sqlmodel import Session, col, select

from app.agreement.reads import load
from app.cases.filters import CaseFilter
from app.errors import Invalid
from app.readers.settled import mark, retire, settle_from, settled_answers
from app.studies.design import StudyError, StudyPlan, create_study
from app.studies.known_answers import known_count, pool_size, settled_pool
from app.studies.models import Assignment, Design, Study, StudyItem
from app.studies.reader_models import KnownAnswer
from tests.reference_study import Reference


def _locked(engine: Engine, reference: Reference) -> Study:
    with Session(engine) as session:
        study = session.get(Study, reference.study_id)
        assert study is not None
        return study


def test_a_locked_studys_unanimous_edits_join_the_pool_once(demo_engine: Engine,
                                                            reference: Reference) -> None:
    with Session(demo_engine) as session:
        study = session.get(Study, reference.study_id)
        assert study is not None
        settled = settled_answers(session, study)
        cases = len(load(session, study).cases)
        added = settle_from(session, study)
        again = settle_from(session, study)
        rows = list(session.scalars(select(KnownAnswer)))
    # Both readers answered as the fair judge would: every case is unanimous on every question.
    assert added == len(settled) == cases == 16
    assert again == 0
    assert {r.source for r in rows} == {"unanimous"}
    assert all(set(r.settled()) == {"compliance", "structure", "realism", "fidelity", "overall"}
               for r in rows)


def test_a_split_case_is_not_settled_unless_adjudicated(demo_engine: Engine,
                                                        reference: Reference) -> None:
    """A case two readers split on accept / reject is left out, until the adjudicator decides."""
    from app.studies.models import Adjudication, Answer

    with Session(demo_engine) as session:
        study = session.get(Study, reference.study_id)
        assert study is not None
        first = session.scalars(select(StudyItem).where(col(StudyItem.study_id) == study.id)
                                .order_by(col(StudyItem.id))).first()
        assert first is not None
        # One reader's answer on the first case changes its accept / reject (a new version).
        read = session.scalars(select(Assignment).where(col(Assignment.item_id) == first.id)
                               .order_by(col(Assignment.user_id))).first()
        assert read is not None
        given = session.scalars(select(Answer).where(col(Answer.assignment_id) == read.id)).one()
        flipped = "reject" if given.overall == "accept" else "accept"
        session.add(Answer(**{**given.model_dump(exclude={"id", "created_at"}), "version": 2,
                              "submission_id": "flip", "overall": flipped}))
        session.commit()
        assert first.id not in settled_answers(session, study)
        session.add(Adjudication(study_id=study.id or 0, item_id=first.id or 0,
                                 user_id=reference.setup.admin.id or 0, version=1,
                                 submission_id="adj", compliance="yes", structure="yes",
                                 realism="yes", fidelity="yes", overall="reject"))
        session.commit()
        how, answers = settled_answers(session, study)[first.id or 0]
    assert how == "adjudicated"
    assert answers["overall"] == "reject"


def test_an_admin_marks_an_edit_and_can_retire_it(demo_engine: Engine, reference: Reference) -> None:
    admin = reference.setup.admin
    with Session(demo_engine) as session:
        item = session.scalars(select(StudyItem)).first()
        assert item is not None
        with pytest.raises(Invalid) as refused:
            mark(session, item.attempt_id, {"realism": "no"}, admin)
        assert refused.value.field == "overall"
        with pytest.raises(Invalid) as wrong:
            mark(session, item.attempt_id, {"overall": "yes"}, admin)
        assert wrong.value.field == "overall"
        first = mark(session, item.attempt_id, {"overall": "reject", "realism": "no"}, admin,
                     note="an obvious artefact")
        second = mark(session, item.attempt_id, {"overall": "accept"}, admin)
        in_force = settled_pool(session)
        assert [k.id for k in in_force] == [second.id]
        session.refresh(first)
        assert first.retired_at is not None
        retire(session, second.id or 0)
        assert pool_size(session) == 0


@pytest.mark.parametrize(("share", "reads", "count"), [(0.05, 16, 1), (0.05, 100, 5),
                                                       (0.2, 16, 4), (0.5, 10, 10), (0, 50, 0)])
def test_the_share_is_of_each_readers_reads(share: float, reads: int, count: int) -> None:
    assert known_count(share, reads) == count


def _plan(reference: Reference, share: float, name: str = "") -> StudyPlan:
    return StudyPlan(name=name or f"with checks {share}", case_filter=CaseFilter(modality=("chest_xray",)),
                     design=Design.validation, reader_ids=[r.id or 0 for r in reference.setup.readers],
                     seed=3, strata_facets=("verdict",), per_stratum={"pass": 8, "fail": 8},
                     known_share=share)


def test_a_study_mixes_its_share_of_known_answer_cases_through_each_order(
        demo_engine: Engine, reference: Reference) -> None:
    with Session(demo_engine) as session:
        settle_from(session, _locked(demo_engine, reference))
        study = create_study(session=session, plan=_plan(reference, 0.2), created_by=reference.setup.admin)
        items = list(session.scalars(select(StudyItem).where(col(StudyItem.study_id) == study.id)))
        known = {i.id for i in items if i.known_answer_id is not None}
        reads = list(session.scalars(select(Assignment).where(col(Assignment.study_id) == study.id)))
        selection = json.loads(study.selection)
        figures = load(session, study)
    assert len(known) == 4  # 20 % of 20 reads: 4 beside each reader's 16
    # The pool's edits are the locked study's, which these very readers read: the study says so.
    assert selection["known_answers"] == {"share": 0.2, "cases": 4, "seen_before": 4}
    by_reader: dict[int, list[Assignment]] = {}
    for read in reads:
        by_reader.setdefault(read.user_id, []).append(read)
    for own in by_reader.values():
        assert sorted(r.sequence for r in own) == list(range(1, 21))
        assert {r.item_id for r in own if r.item_id in known} == known  # every reader reads each
    # Not all at one end of any reader's order.
    places = [r.sequence for r in reads if r.item_id in known]
    assert min(places) < 17 and max(places) > 4
    # The figures never see them.
    assert {c.item_id for c in figures.cases}.isdisjoint(known)
    assert len(figures.cases) == 16
    # Stored like every other item: a uid of the same form, the verdict of record, the instruction.
    for item in items:
        assert len(item.uid) == 24
        assert item.reader_instruction


def test_known_answer_orders_are_seeded_from_the_studys_secret(demo_engine: Engine,
                                                               reference: Reference) -> None:
    """Two studies of one plan (seed and all) place their known-answer cases differently."""
    with Session(demo_engine) as session:
        settle_from(session, _locked(demo_engine, reference))
        places = []
        for name in ("a", "b"):
            study = create_study(session=session, plan=_plan(reference, 0.2, name=name),
                                 created_by=reference.setup.admin)
            known = set(session.scalars(select(col(StudyItem.id)).where(
                col(StudyItem.study_id) == study.id, col(StudyItem.known_answer_id).is_not(None))))
            places.append(sorted(session.scalars(select(col(Assignment.sequence)).where(
                col(Assignment.study_id) == study.id, col(Assignment.item_id).in_(known)))))
    assert places[0] != places[1]


def test_a_share_the_pool_cannot_fill_is_refused_beside_its_field(demo_engine: Engine,
                                                                  reference: Reference) -> None:
    with Session(demo_engine) as session:
        with pytest.raises(StudyError) as empty:
            create_study(session=session, plan=_plan(reference, 0.05), created_by=reference.setup.admin)
        assert empty.value.field == "known_share"
        assert "0 usable" in str(empty.value)
        with pytest.raises(StudyError) as too_much:
            create_study(session=session, plan=_plan(reference, 0.6), created_by=reference.setup.admin)
        assert too_much.value.field == "known_share"
        assert "50%" in str(too_much.value)
        assert session.scalars(select(Study).where(col(Study.name).like("with checks%"))).first() is None


def test_an_accepted_study_draws_only_edits_the_judge_passed(demo_engine: Engine,
                                                             reference: Reference) -> None:
    with Session(demo_engine) as session:
        settle_from(session, _locked(demo_engine, reference))
        plan = StudyPlan(name="accepted with checks", design=Design.accepted,
                         case_filter=CaseFilter(modality=("chest_xray",), outcome=("success",)),
                         reader_ids=[r.id or 0 for r in reference.setup.readers], seed=3,
                         strata_facets=("direction",), per_stratum={"add": 4, "remove": 4},
                         known_share=0.25)
        study = create_study(session=session, plan=plan, created_by=reference.setup.admin)
        items = list(session.scalars(select(StudyItem).where(
            col(StudyItem.study_id) == study.id, col(StudyItem.known_answer_id).is_not(None))))
        from app.models import JudgeVerdict
        passed = Counter(bool(session.get(JudgeVerdict, i.judge_verdict_id).qualified)  # type: ignore[union-attr]
                         for i in items)
    # The pool holds 8 passed and 8 failed edits; 25 % of 8 reads asks 3, all passed.
    assert passed == Counter({True: 3})


def test_known_answer_cases_are_of_the_studys_own_modalities_and_directions(
        demo_engine: Engine, reference: Reference) -> None:
    """A brain MRI among chest radiographs, or a removal among additions, would give itself
    away: a study of chest additions draws only chest additions."""
    from app.models import Task
    from tests.readers.test_figures_without_known import mark_edits

    mark_edits(demo_engine, 12, modality="brain_mri")
    mark_edits(demo_engine, 60)
    with Session(demo_engine) as session:
        plan = StudyPlan(name="additions", design=Design.validation,
                         case_filter=CaseFilter(modality=("chest_xray",), direction=("add",)),
                         reader_ids=[r.id or 0 for r in reference.setup.readers], seed=9,
                         strata_facets=("verdict",), per_stratum={"pass": 6, "fail": 6},
                         known_share=0.25)
        study = create_study(session=session, plan=plan, created_by=reference.setup.admin)
        kinds = {(t.modality, t.direction) for t in session.scalars(
            select(Task).join(StudyItem, col(StudyItem.task_id) == Task.id).where(
                col(StudyItem.study_id) == study.id, col(StudyItem.known_answer_id).is_not(None)))}
    assert kinds == {("chest_xray", "add")}
