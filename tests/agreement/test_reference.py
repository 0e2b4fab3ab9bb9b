"""How the reference standard is decided, and the policies of the sensitivity analysis."""

from app.agreement.reference import Decided, Policy, consensus, leave_one_out


def test_unanimous_single_vote_majority_and_ties() -> None:
    assert consensus([True, True]) == (True, Decided.unanimous)
    assert consensus([True, False, True]) == (True, Decided.majority)
    assert consensus([False, False, True]) == (False, Decided.majority)
    assert consensus([True, False]) == (None, Decided.tie)  # two who disagree
    assert consensus([True, False, True, False]) == (None, Decided.tie)
    assert consensus([]) == (None, Decided.no_vote)


def test_a_reference_resting_on_one_vote_is_not_called_unanimous() -> None:
    """Once counted as unanimous: one reader's yes while the other could not assess."""
    assert consensus([True, None]) == (True, Decided.single_vote)
    assert consensus([None, None, False]) == (False, Decided.single_vote)


def test_cannot_assess_does_not_vote() -> None:
    assert consensus([True, True, None]) == (True, Decided.unanimous)
    assert consensus([True, None, False]) == (None, Decided.tie)


def test_an_adjudication_settles_only_what_the_readers_left_open() -> None:
    assert consensus([True, False], adjudicated=False) == (False, Decided.adjudicated)
    assert consensus([None, None], adjudicated=True) == (True, Decided.adjudicated)
    assert consensus([True, True, False], adjudicated=False) == (True, Decided.majority)


def test_sensitivity_policies_count_ties_one_way_or_the_other() -> None:
    assert consensus([True, False], False, Policy(ties=True)) == (True, Decided.tie)
    assert consensus([True, False], True, Policy(ties=False)) == (False, Decided.tie)
    assert consensus([True, False], True, Policy(use_adjudication=False)) == (None, Decided.tie)
    assert Decided.tie.resolved is False and Decided.single_vote.resolved is True


def test_leave_one_out_drops_the_reader_compared() -> None:
    assert leave_one_out([True, False, False], 0) is False
    assert leave_one_out([True, False], 1) is True
