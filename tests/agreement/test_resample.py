"""The cluster bootstrap: source images resampled, seeded, robust to degenerate resamples."""

import random

import numpy as np
import pytest
from scipy import stats

from app.agreement.bca import bca_interval, bca_intervals, expanded_tail, row_percentiles
from app.agreement.resample import FEW_CLUSTERS, ClusterBootstrap
from app.agreement.two_raters import compare, compare_many


def pairs(n: int = 120, seed: int = 5) -> tuple[list[bool], list[bool]]:
    rng = random.Random(seed)
    a = [rng.random() < 0.7 for _ in range(n)]
    return a, [x if rng.random() < 0.85 else not x for x in a]


def test_resamples_source_images_and_repeats_exactly() -> None:
    a, b = pairs()
    clusters = [i // 4 for i in range(len(a))]
    first = compare(a, b, ClusterBootstrap(clusters, resamples=500)).figures["agreement"]
    again = compare(a, b, ClusterBootstrap(clusters, resamples=500)).figures["agreement"]
    assert first == again and first.clusters == 30 and first.warning is None
    assert first.low is not None and first.high is not None and first.low < first.value < first.high  # type: ignore[operator]


def test_clustering_widens_the_interval_when_cases_repeat_an_image() -> None:
    a, b = pairs(40)
    naive = compare(a * 3, b * 3, ClusterBootstrap(list(range(120)), resamples=800)).figures["kappa"]
    clustered = compare(a * 3, b * 3, ClusterBootstrap(list(range(40)) * 3, resamples=800)).figures["kappa"]
    assert naive.low is not None and clustered.low is not None
    assert clustered.high - clustered.low > 1.3 * (naive.high - naive.low)  # type: ignore[operator]


def test_degenerate_resamples_are_dropped_and_counted_not_fatal() -> None:
    """Once, one undefined resample in 2,000 removed the whole kappa interval."""
    reference = [True] * 95 + [False] * 5
    judge = [True] * 94 + [False] + [False] * 5  # rarely fails: some resamples see no fail
    kappa = compare(judge, reference, ClusterBootstrap(list(range(100)))).figures["kappa"]
    assert kappa.value is not None and kappa.low is not None and kappa.high is not None
    assert kappa.dropped > 0 and "left out" in (kappa.warning or "")
    assert -1 <= kappa.low <= kappa.high <= 1


def test_few_source_images_warn_but_still_give_an_interval() -> None:
    a, b = pairs(40)
    figure = compare(a, b, ClusterBootstrap([i % 5 for i in range(40)], resamples=500)).figures["agreement"]
    assert figure.clusters == 5 < FEW_CLUSTERS
    assert figure.low is not None and "few clusters" in (figure.warning or "")


def test_one_source_image_gives_no_interval() -> None:
    a, b = pairs(10)
    figure = compare(a, b, ClusterBootstrap([0] * 10, resamples=200)).figures["agreement"]
    assert figure.value is not None and figure.low is None


def test_the_expanded_tail_follows_hesterberg() -> None:
    t = stats.t.ppf(0.975, 24)
    assert expanded_tail(25) == pytest.approx(stats.norm.sf((25 / 24) ** 0.5 * t))
    assert expanded_tail(10_000) == pytest.approx(0.025, abs=1e-4)


def test_a_figure_counts_only_the_source_images_its_cases_come_from() -> None:
    """A reader who read the cases of five images: once reported as resting on all 30 of the
    slice, with no warning and a tail too narrow for five."""
    a, b = pairs(120)
    clusters = [i // 4 for i in range(120)]
    partial: list[bool | None] = [v if i < 20 else None for i, v in enumerate(b)]
    figure = compare(a, partial, ClusterBootstrap(clusters, resamples=500)).figures["agreement"]
    assert figure.clusters == 5 and figure.n == 20
    assert "few clusters (5 source images)" in (figure.warning or "")


def test_row_percentiles_are_numpys_to_the_last_bit() -> None:
    rng = np.random.default_rng(3)
    for size in (2, 3, 17, 2000):
        rows = np.sort(np.round(rng.normal(size=(40, size)), int(rng.integers(1, 6))), axis=1)
        percent = np.concatenate([[0.0, 100.0, 50.0, 100 / (size - 1), 2.5, 97.5],
                                  rng.random(34) * 100])
        found = row_percentiles(rows, percent)
        assert [float(x) for x in found] == [float(np.percentile(row, q))
                                             for row, q in zip(rows, percent, strict=True)]


def test_the_vectorised_bca_is_the_one_at_a_time_bca() -> None:
    rng = np.random.default_rng(8)
    values = rng.beta(2, 5, size=(30, 2000)).round(3)  # ties at the estimate, too
    jackknife = rng.beta(2, 5, size=(30, 60))
    jackknife[3] = 0.25  # no spread: acceleration 0
    estimates = values[:, 0].copy()
    estimates[4] = 2.0  # every resample below: no bias correction, the percentile interval
    clusters = [int(c) for c in rng.integers(2, 400, size=30)]
    lows, highs = bca_intervals(values, estimates, jackknife, clusters)
    for i in range(30):
        assert (float(lows[i]), float(highs[i])) == bca_interval(
            values[i], float(estimates[i]), jackknife[i], 60, clusters[i])


def test_pairs_compared_together_are_each_compared_alone() -> None:
    rng = random.Random(4)
    clusters = [i // 3 for i in range(90)]
    raters = [[rng.choice([True, False, None]) for _ in clusters] for _ in range(4)]
    raters.append([True] * 89 + [False])  # resamples without a fail: kappa undefined in some
    pairs = [(raters[i], raters[j]) for i in range(5) for j in range(i + 1, 5)]
    boot = ClusterBootstrap(clusters, resamples=400)
    assert [p.as_dict() for p in compare_many(pairs, boot)] == [
        compare(a, b, boot).as_dict() for a, b in pairs]


def test_pairs_over_no_cases_have_no_figures() -> None:
    """A slice without cases (round 5 of a study that has none) once failed to reshape."""
    found = compare_many([([], []), ([], [])], ClusterBootstrap([]))
    assert [p.table.n for p in found] == [0, 0]
    assert all(p.figures["agreement"].value is None for p in found)


def test_a_signed_figure_equal_on_every_resample_has_no_interval() -> None:
    # Two raters who agree on every one of 30 cases from 15 images: kappa is 1 on every
    # resample. [1, 1] cannot be right, and unlike a share there is no exact interval.
    votes = [i % 3 == 0 for i in range(30)]
    pair = compare(votes, votes, ClusterBootstrap([i // 2 for i in range(30)], resamples=300))
    kappa = pair.figures["kappa"]
    assert kappa.value == 1.0 and kappa.low is None and kappa.high is None
    assert kappa.warning == "every resample equal: no interval"
    share = pair.figures["agreement"]  # a share keeps its Clopper-Pearson interval
    assert share.value == 1.0 and share.low is not None and share.low < 1.0 and share.high == 1.0
