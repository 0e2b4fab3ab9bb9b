"""References: a locked study's, or a sentinel set drawn from several locked studies, kept as
drawn, scored on like a study, each answer stored under the study its edit belongs to."""

import pytest
from sqlalchemy import func
from sqlalchemy.engine import Engine
from sqlmodel import Session, col, select

from app.errors import Conflict, Invalid
from app.judges.board import leaderboard
from app.judges.models import CandidateVerdict, SentinelItem
from app.judges.reference import Ref, SentinelPlan, create_sentinel, load_reference
from app.judges.scoring import offline_judge, plan, score
from app.studies.models import StudyItem
from tests import aio
from tests.reference_study import Reference, candidate, second_study


def test_a_sentinel_set_draws_a_seeded_sample_of_each_studys_settled_edits(
        demo_engine: Engine, reference: Reference) -> None:
    other = second_study(demo_engine, reference)
    studies = [reference.study_id, other]
    with Session(demo_engine) as session:
        one = create_sentinel(session, SentinelPlan("sentinels a", studies, per_study=5, seed=3), None)
        again = create_sentinel(session, SentinelPlan("sentinels b", studies, per_study=5, seed=3), None)
        every = create_sentinel(session, SentinelPlan("sentinels c", studies), None)

        def drawn(sentinel_id: int | None) -> list[tuple[int, int]]:
            return list(session.execute(select(col(SentinelItem.study_id), col(SentinelItem.item_id))
                                        .where(col(SentinelItem.sentinel_id) == sentinel_id)
                                        .order_by(col(SentinelItem.item_id))))

        assert [i for _, i in drawn(one.id)] == [i for _, i in drawn(again.id)]  # the seed decides
        assert sorted({s for s, _ in drawn(one.id)}) == sorted(studies)
        assert [sum(1 for s, _ in drawn(one.id) if s == study) for study in sorted(studies)] == [5, 5]
        # Every settled edit, each edit once although some were read in both studies.
        attempts = dict(session.execute(select(col(StudyItem.id), col(StudyItem.attempt_id))).all())
        in_every = [attempts[i] for _, i in drawn(every.id)]
        assert len(in_every) == len(set(in_every)) == len({attempts[i] for i in attempts
                                                            if i in _items(session, studies)})
        loaded = load_reference(session, Ref("sentinel", every.id or 0))
        assert loaded.study_ids == tuple(sorted(studies))
        assert set(loaded.settled) == {i for _, i in drawn(every.id)}
        assert {c.item_id for c in loaded.data.cases} == set(loaded.settled)


def _items(session: Session, studies: list[int]) -> set[int]:
    return set(session.scalars(select(col(StudyItem.id)).where(col(StudyItem.study_id).in_(studies))))


def test_a_sentinel_set_is_scored_like_a_study(demo_engine: Engine, reference: Reference) -> None:
    other = second_study(demo_engine, reference)
    lenient = candidate(demo_engine, "lenient", "lenient")
    # Answers given on the first study count on the sentinel set too: never asked again.
    aio.run(score(demo_engine, lenient.id or 0, reference.study_id, offline_judge))
    with Session(demo_engine) as session:
        sentinel = create_sentinel(session, SentinelPlan("both", [reference.study_id, other]), None)
        ref = Ref("sentinel", sentinel.id or 0)
        size = len(load_reference(session, ref).settled)
        from_first = sum(1 for e, _, _ in plan(session, lenient, ref) if e.study_id == reference.study_id)
        assert from_first == 0 and len(plan(session, lenient, ref)) > 0
    done = aio.run(score(demo_engine, lenient.id or 0, ref, offline_judge))
    with Session(demo_engine) as session:
        assert plan(session, lenient, ref) == []
        per_study = dict(session.execute(
            select(col(CandidateVerdict.study_id), func.count()).group_by(col(CandidateVerdict.study_id))
        ).all())
        assert set(per_study) == {reference.study_id, other} and per_study[other] == done.asked
        board = leaderboard(session, ref, resamples=200, questions=("overall",))["overall"]
    rows = {r.name: r for r in board.rows}
    assert rows["lenient"].n == rows["judge of record"].n == size


def test_a_sentinel_set_needs_two_locked_studies_and_a_new_name(demo_engine: Engine,
                                                                reference: Reference) -> None:
    open_study = second_study(demo_engine, reference, locked=False)
    with Session(demo_engine) as session:
        with pytest.raises(Invalid, match="at least two"):
            create_sentinel(session, SentinelPlan("one", [reference.study_id, reference.study_id]), None)
        with pytest.raises(Conflict, match="not locked"):
            create_sentinel(session, SentinelPlan("open", [reference.study_id, open_study]), None)
        with pytest.raises(Invalid, match="edits per study"):
            create_sentinel(session, SentinelPlan("zero", [reference.study_id, open_study],
                                                  per_study=0), None)
        with pytest.raises(Invalid, match="name"):
            create_sentinel(session, SentinelPlan("<b>", [reference.study_id, open_study]), None)
        assert session.scalar(select(func.count()).select_from(SentinelItem)) == 0
