"""The confidence sequences against ``confseq`` (Waudby-Smith & Ramdas's own package), and
their guarantee where the package has no counterpart (units holding several cases)."""

import numpy as np
import pytest

from app.confidence_sequence import mean_sequence, ratio_sequence


@pytest.fixture(scope="module")
def betting():
    # confseq 0.0.11 annotates with np.float_, which NumPy 2 removed; its import needs the alias.
    if not hasattr(np, "float_"):
        np.float_ = np.float64  # type: ignore[attr-defined]
    from confseq import betting as module
    return module


@pytest.mark.parametrize(("seed", "share", "n"), [(1, 0.81, 60), (2, 0.5, 200), (3, 0.97, 120),
                                                  (4, 0.8, 1200)])  # many chunks
def test_one_case_per_image_is_the_packages_hedged_betting_sequence(betting, seed, share, n):
    x = (np.random.default_rng(seed).random(n) < share).astype(float)
    ours = mean_sequence(x, running_intersection=True)
    low, high = betting.betting_cs(x, alpha=0.05, breaks=1000, running_intersection=True)
    np.testing.assert_allclose(ours.low, low, atol=1e-12)
    np.testing.assert_allclose(ours.high, high, atol=1e-12)


def test_bounded_values_not_only_zeros_and_ones_match_too(betting):
    x = np.random.default_rng(7).beta(2, 5, 150)
    ours = mean_sequence(x, running_intersection=False)
    low, high = betting.betting_cs(x, alpha=0.05, breaks=1000)
    np.testing.assert_allclose(ours.low, low, atol=1e-12)
    np.testing.assert_allclose(ours.high, high, atol=1e-12)


def test_eighteen_of_eighteen_is_never_a_zero_width_interval():
    sequence = mean_sequence(np.ones(18))
    assert sequence.high[-1] == 1.0
    assert sequence.low[-1] < 0.9  # wider than Clopper-Pearson's .815: it holds at every look
    assert (sequence.high > sequence.low).all()


def test_the_interval_only_narrows_and_always_holds_the_estimate():
    rng = np.random.default_rng(11)
    sizes = rng.integers(1, 5, 300)
    hits = rng.binomial(sizes, 0.8)
    sequence = ratio_sequence(hits / 4, sizes / 4)
    assert (np.diff(sequence.low) >= 0).all() and (np.diff(sequence.high) <= 0).all()
    estimate = np.cumsum(hits) / np.cumsum(sizes)
    assert ((sequence.low <= estimate + 1e-3) & (estimate - 1e-3 <= sequence.high)).all()


def test_images_of_several_cases_keep_the_guarantee_at_every_look():
    """200 studies of 150 images, 1-4 cases each, whose cases of one image agree together
    (ICC near 0.5): the share of studies whose true share ever leaves the sequence stays
    within alpha. The image effect makes a case-level sequence too narrow; the image as the
    unit does not."""
    rng = np.random.default_rng(2024)
    truth_per_image = np.clip(rng.normal(0.8, 0.25, 200_000), 0, 1)
    truth = truth_per_image.mean()
    missed = 0
    for _ in range(200):
        chosen = rng.choice(truth_per_image, 150)
        sizes = rng.integers(1, 5, 150)
        hits = rng.binomial(sizes, chosen)
        sequence = ratio_sequence(hits / 4, sizes / 4)
        missed += bool(((sequence.low > truth) | (sequence.high < truth)).any())
    assert missed / 200 <= 0.05


@pytest.mark.parametrize(("a", "b"), [([0.5], [0.4]), ([-0.1], [0.2]), ([0.5], [1.5]), ([0.1, 0.2], [0.3])])
def test_values_that_break_the_bound_are_refused(a, b):
    with pytest.raises(ValueError):
        ratio_sequence(np.array(a), np.array(b))


def test_no_units_give_an_empty_sequence():
    assert len(mean_sequence(np.zeros(0))) == 0


@pytest.mark.parametrize("planned", [100, 400])
def test_bets_tuned_to_a_planned_size_are_the_packages_fixed_n_bets(betting, planned):
    from confseq.betting_strategies import lambda_predmix_eb

    x = (np.random.default_rng(planned).random(300) < 0.8).astype(float)
    ours = mean_sequence(x, planned=planned)
    tuned = lambda data, m: lambda_predmix_eb(data, alpha=0.025, fixed_n=planned)  # noqa: E731
    low, high = betting.betting_cs(x, lambdas_fns_positive=tuned, lambdas_fns_negative=tuned,
                                   alpha=0.05, breaks=1000, running_intersection=True)
    np.testing.assert_allclose(ours.low, low, atol=1e-12)
    np.testing.assert_allclose(ours.high, high, atol=1e-12)
    at = min(planned, 300) - 1
    assert ours.half_width[at] < mean_sequence(x).half_width[at]  # narrower where planned


def test_the_chunks_do_not_change_a_bit(monkeypatch):
    """The capital is carried into each chunk's first running sum, so the table's slicing (a
    speed setting) never moves an interval, even by the last bit of a capital at the edge."""
    import app.confidence_sequence as module
    rng = np.random.default_rng(12)
    b = rng.integers(1, 5, 700) / 4
    a = np.minimum(b, np.round(b * rng.random(700) * 1.3, 2))
    found = []
    for chunk in (1, 7, 64, 1000):
        monkeypatch.setattr(module, "CHUNK", chunk)
        found.append(module.ratio_sequence(a, b, planned=800))
    for other in found[1:]:
        assert np.array_equal(other.low, found[0].low) and np.array_equal(other.high, found[0].high)


def _clustered(rng: np.random.Generator, images: int, share: float) -> tuple[np.ndarray, np.ndarray]:
    """Images of 1-8 cases whose cases agree together (an image effect), at this share."""
    per_image = np.clip(rng.normal(share, 0.15, images), 0, 1)
    sizes = rng.integers(1, 9, images)
    return rng.binomial(sizes, per_image) / 8, sizes / 8


@pytest.mark.parametrize("images", [400, 1600])
def test_bets_sized_by_the_residual_are_at_least_fifteen_percent_narrower_at_eight_tenths(images):
    """The bets were sized by the variance of the hits, which grows with an image's size,
    not by that of the residual hits - m cases that is bet on: at a share of 0.8 the
    residual's sequence is narrower by a fifth or more. Fails with the bets on the hits."""
    rng = np.random.default_rng(40)
    ratios = []
    for _ in range(8):
        a, b = _clustered(rng, images, 0.8)
        residual = ratio_sequence(a, b, planned=images).half_width[-1]
        hits = ratio_sequence(a, b, planned=images, bets_on="hits").half_width[-1]
        ratios.append(residual / hits)
    assert np.median(ratios) <= 0.85


def test_bets_sized_by_the_residual_keep_the_guarantee_at_every_look():
    """300 studies of 300 clustered images at shares from 0.5 to 0.95: the truth leaves the
    sequence, at any look, in at most alpha of them."""
    rng = np.random.default_rng(2026)
    # The pool's share: an image's size is independent of its share, so it is the mean share.
    truths = {s: float(np.clip(np.random.default_rng(1).normal(s, 0.15, 1_000_000), 0, 1).mean())
              for s in (0.5, 0.8, 0.95)}
    missed = 0
    runs = 300
    for run in range(runs):
        share = list(truths)[run % 3]
        a, b = _clustered(rng, 300, share)
        sequence = ratio_sequence(a, b, planned=300, grid=500)
        missed += bool(((sequence.low > truths[share]) | (sequence.high < truths[share])).any())
    assert missed / runs <= 0.05


def test_the_bets_are_on_the_residual_or_the_hits():
    with pytest.raises(ValueError, match="residual or the hits"):
        ratio_sequence(np.zeros(2), np.ones(2), bets_on="cases")


def test_bets_tuned_to_the_target_reach_it_with_fewer_units_than_bets_tuned_to_the_budget():
    """A study that stops at its target tunes its bets to the units the target needs, not to
    its budget: on 30 seeded studies at 0.81 the stop comes a fifth sooner or more."""
    from app.confidence_sequence import expected_half_width, units_for_target

    needed = units_for_target(0.81, 0.05)
    assert expected_half_width(0.81, needed) <= 0.05
    assert 200 < needed < 600
    rng = np.random.default_rng(5)
    stops = {needed: [], 2000: []}
    for _ in range(30):
        x = (rng.random(2000) < 0.81).astype(float)
        for planned in stops:
            half = mean_sequence(x, planned=planned, grid=500).half_width
            stops[planned].append(int(np.argmax(half <= 0.05)))
    assert np.median(stops[needed]) <= 0.8 * np.median(stops[2000])


def test_units_scaled_by_bounds_that_change_share_one_variance_and_keep_the_guarantee():
    """An adaptive study's batches are scaled by their own largest weight: 200 units at scale
    1, then 300 scaled by 1/2 (their weights doubled, the values are the same draws). Given
    the bounds, the later bets are sized on the unscaled values, so the sequence is as
    narrow as if no scale had changed, and narrower than without them; one bound for all is
    the sequence without bounds; and the truth stays inside at every look."""
    rng = np.random.default_rng(56)
    widths, plain, missed = [], [], 0
    for _ in range(40):
        y = (rng.random(500) < 0.8).astype(float)
        bounds = np.r_[np.ones(200), np.full(300, 2.0)]
        with_bounds = ratio_sequence(y / bounds, 1 / bounds, planned=400, bounds=bounds, grid=500)
        widths.append(with_bounds.half_width[-1])
        plain.append(ratio_sequence(y / bounds, 1 / bounds, planned=400, grid=500).half_width[-1])
        missed += bool(((with_bounds.low > 0.8) | (with_bounds.high < 0.8)).any())
    assert np.median(widths) < 0.97 * np.median(plain)
    assert missed <= 4
    y = (rng.random(100) < 0.7).astype(float)
    same = ratio_sequence(y / 3, np.full(100, 1 / 3), planned=100, bounds=np.full(100, 3.0))
    alone = ratio_sequence(y / 3, np.full(100, 1 / 3), planned=100)
    assert (same.low == alone.low).all() and (same.high == alone.high).all()
    with pytest.raises(ValueError, match="one positive bound per unit"):
        ratio_sequence(y, np.ones(100), bounds=np.zeros(100))
