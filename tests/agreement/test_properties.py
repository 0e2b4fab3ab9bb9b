"""Properties that must hold for any ratings (hypothesis), and the paper's own figures."""

import pytest
from hypothesis import given
from hypothesis import strategies as st

from app.agreement.stats import compare

votes = st.lists(st.sampled_from([True, False, None]), min_size=1, max_size=60)
pairs = st.lists(st.tuples(st.sampled_from([True, False, None]), st.sampled_from([True, False, None])),
                 min_size=1, max_size=60)


@given(votes)
def test_identical_raters_agree_fully(ratings: list[bool | None]) -> None:
    result = compare(ratings, ratings)
    answered = [r for r in ratings if r is not None]
    if answered:
        assert result.agreement.value == 1.0
    if True in answered and False in answered:
        assert result.kappa.value == pytest.approx(1.0)


@given(pairs)
def test_swapping_raters_leaves_symmetric_figures_alone(rows: list[tuple[bool | None, bool | None]]) -> None:
    a, b = [x for x, _ in rows], [y for _, y in rows]
    ab, ba = compare(a, b), compare(b, a)
    assert ab.agreement == ba.agreement and ab.pabak == ba.pabak
    for mine, theirs in ((ab.kappa.value, ba.kappa.value), (ab.ac1, ba.ac1)):
        assert (mine is None and theirs is None) or mine == pytest.approx(theirs)
    assert ab.mcnemar_p == ba.mcnemar_p
    assert ab.a_stricter == ba.a_more_lenient


@given(pairs)
def test_strict_lenient_and_agreement_add_up_to_one(rows: list[tuple[bool | None, bool | None]]) -> None:
    result = compare([x for x, _ in rows], [y for _, y in rows])
    if result.table.n:
        total = (result.a_stricter.value or 0) + (result.a_more_lenient.value or 0) + (
            result.agreement.value or 0)
        assert total == pytest.approx(1.0)


def test_the_papers_counts_give_its_figures() -> None:
    """100 pilot cases: 81 agree, the judge too strict in 12 and too lenient in 7."""
    judge = [True] * 60 + [False] * 21 + [False] * 12 + [True] * 7
    reference = [True] * 60 + [False] * 21 + [True] * 12 + [False] * 7
    result = compare(judge, reference)
    assert result.agreement.value == pytest.approx(0.81)
    assert result.a_stricter.value == pytest.approx(0.12)
    assert result.a_more_lenient.value == pytest.approx(0.07)
    assert result.agreement.low is not None and result.agreement.low < 0.81 < (result.agreement.high or 0)
