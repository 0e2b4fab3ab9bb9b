"""Judge self-consistency over attempts judged more than once."""

import pytest
from sqlalchemy.engine import Engine
from sqlmodel import Session, select

from app.agreement.consistency import consistency, differences, judge_consistency
from app.models import JudgeVerdict

PASS = {"compliance": True, "structure": True, "realism": True, "fidelity": True, "qualified": True}


def test_differences_compare_only_what_both_scored() -> None:
    imported = PASS | {"fidelity": None}
    assert differences(imported, PASS) == (0, False)
    assert differences(PASS, PASS | {"realism": False, "qualified": False}) == (1, True)


def test_shares_of_identical_one_and_more() -> None:
    result = consistency([
        [PASS, PASS, PASS],                                   # two identical re-judgements
        [PASS, PASS | {"realism": False}],                    # one dimension
        [PASS, PASS | {"realism": False, "structure": False, "qualified": False}],
        [PASS],                                               # judged once: not counted
    ])
    assert (result.attempts, result.pairs) == (3, 4)
    assert result.identical.value == pytest.approx(0.5)
    assert result.one_dimension.value == pytest.approx(0.25)
    assert result.more.value == pytest.approx(0.25)
    assert result.qualified_flips.value == pytest.approx(0.25)


def test_from_the_database_with_inserted_rejudgements(demo_engine: Engine) -> None:
    with Session(demo_engine) as session:
        assert judge_consistency(session).pairs == 0  # the demo has one verdict per attempt
        originals = session.exec(select(JudgeVerdict).where(JudgeVerdict.error == None)  # noqa: E711
                                 .limit(4)).all()
        for n, original in enumerate(originals):
            session.add(JudgeVerdict(attempt_id=original.attempt_id, compliance=original.compliance,
                                     structure=original.structure, qualified=original.qualified,
                                     realism=original.realism if n else not original.realism,
                                     fidelity=True))
        session.add(JudgeVerdict(attempt_id=originals[0].attempt_id, error="JSON parse error"))
        session.commit()
        everything = judge_consistency(session)
        one = judge_consistency(session, [originals[1].attempt_id])
    assert (everything.attempts, everything.pairs) == (4, 4)  # the unreadable one left out
    assert everything.identical.value == pytest.approx(0.75)
    assert one.pairs == 1 and one.identical.value == 1.0
