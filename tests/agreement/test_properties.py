"""Properties that must hold for any ratings (hypothesis), and the paper's own figures."""

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from app.agreement.resample import ClusterBootstrap
from app.agreement.two_raters import compare

votes = st.lists(st.sampled_from([True, False, None]), min_size=1, max_size=60)
pairs = st.lists(st.tuples(st.sampled_from([True, False, None]), st.sampled_from([True, False, None])),
                 min_size=1, max_size=60)


def boot(n: int) -> ClusterBootstrap:
    return ClusterBootstrap([i // 3 for i in range(n)], resamples=100)


@settings(deadline=None)
@given(votes)
def test_identical_raters_agree_fully(ratings: list[bool | None]) -> None:
    result = compare(ratings, ratings, boot(len(ratings))).figures
    answered = [r for r in ratings if r is not None]
    if answered:
        assert result["agreement"].value == 1.0
    if True in answered and False in answered:
        assert result["kappa"].value == pytest.approx(1.0)


@settings(deadline=None)
@given(pairs)
def test_swapping_raters_leaves_symmetric_figures_alone(rows: list[tuple[bool | None, bool | None]]) -> None:
    a, b = [x for x, _ in rows], [y for _, y in rows]
    ab, ba = compare(a, b, boot(len(a))), compare(b, a, boot(len(a)))
    for name in ("agreement", "pabak"):
        assert ab.figures[name] == ba.figures[name]
    for name in ("kappa", "ac1"):
        mine, theirs = ab.figures[name].value, ba.figures[name].value
        assert (mine is None and theirs is None) or mine == pytest.approx(theirs)
    assert ab.mcnemar_clustered_p == ba.mcnemar_clustered_p
    assert ab.figures["a_stricter"].value == ba.figures["a_more_lenient"].value


@settings(deadline=None)
@given(pairs)
def test_intervals_hold_their_value_and_bounds(rows: list[tuple[bool | None, bool | None]]) -> None:
    result = compare([x for x, _ in rows], [y for _, y in rows], boot(len(rows)))
    for name, figure in result.figures.items():
        if figure.low is not None and figure.high is not None:
            assert figure.low <= figure.high, name
            lower = -1.0 if name in ("kappa", "pabak", "ac1") else 0.0
            assert lower <= figure.low and figure.high <= 1.0, name
    if result.table.n:
        total = sum(result.figures[k].value or 0 for k in ("a_stricter", "a_more_lenient", "agreement"))
        assert total == pytest.approx(1.0)
