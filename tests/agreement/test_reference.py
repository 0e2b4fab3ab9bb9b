"""How the reference standard is decided."""

from app.agreement.reference import Decided, consensus, leave_one_out


def test_unanimous_majority_and_ties() -> None:
    assert consensus([True, True]) == (True, Decided.unanimous)
    assert consensus([True, False, True]) == (True, Decided.majority)
    assert consensus([False, False, True]) == (False, Decided.majority)
    assert consensus([True, False]) == (None, Decided.unresolved)  # two who disagree
    assert consensus([True, False, True, False]) == (None, Decided.unresolved)
    assert consensus([]) == (None, Decided.unresolved)


def test_cannot_assess_does_not_vote() -> None:
    assert consensus([True, None, None]) == (True, Decided.unanimous)
    assert consensus([True, None, False]) == (None, Decided.unresolved)


def test_an_adjudication_settles_only_what_the_readers_left_open() -> None:
    assert consensus([True, False], adjudicated=False) == (False, Decided.adjudicated)
    assert consensus([None, None], adjudicated=True) == (True, Decided.adjudicated)
    assert consensus([True, True, False], adjudicated=False) == (True, Decided.majority)


def test_leave_one_out_drops_the_reader_compared() -> None:
    assert leave_one_out([True, False, False], 0) is False
    assert leave_one_out([True, False], 1) is True
