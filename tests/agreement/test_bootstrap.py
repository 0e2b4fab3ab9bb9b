"""The cluster bootstrap resamples source images, is seeded, and falls back when it must."""

import random

from app.agreement.bootstrap import agreement_of, cluster_interval, kappa_of


def pairs(n: int = 120) -> tuple[list[bool], list[bool]]:
    rng = random.Random(5)
    a = [rng.random() < 0.7 for _ in range(n)]
    return a, [x if rng.random() < 0.85 else not x for x in a]


def test_resamples_source_images_and_repeats_exactly() -> None:
    a, b = pairs()
    clusters = [i // 4 for i in range(len(a))]  # four tasks per source image
    first = cluster_interval(a, b, clusters, agreement_of, resamples=500)
    again = cluster_interval(a, b, clusters, agreement_of, resamples=500)
    assert first == again and first.clusters == 30 and first.resamples == 500
    point = sum(x == y for x, y in zip(a, b, strict=True)) / len(a)
    assert first.low is not None and first.high is not None and first.low < point < first.high
    assert first.method in ("BCa", "percentile")


def test_clustering_widens_the_interval_when_cases_repeat_an_image() -> None:
    a, b = pairs(40)
    # The same 40 pairs, each seen three times: as independent cases the interval shrinks,
    # as three tasks of one image it must not.
    tripled_a, tripled_b = a * 3, b * 3
    naive = cluster_interval(tripled_a, tripled_b, list(range(120)), kappa_of, resamples=500)
    clustered = cluster_interval(tripled_a, tripled_b, list(range(40)) * 3, kappa_of, resamples=500)
    assert naive.low is not None and clustered.low is not None
    assert naive.high is not None and clustered.high is not None
    assert clustered.high - clustered.low > 1.3 * (naive.high - naive.low)


def test_too_few_images_and_undefined_statistics_give_no_interval() -> None:
    few = cluster_interval([True, False], [True, True], [1, 2], agreement_of)
    assert few.low is None and "too few" in few.method
    constant = cluster_interval([True] * 20, [True] * 20, list(range(20)), kappa_of, resamples=200)
    assert constant.low is None


def test_a_constant_rater_gives_no_kappa_interval() -> None:
    reference = [i % 4 != 0 for i in range(100)]
    interval = cluster_interval([True] * 100, reference, [i // 2 for i in range(100)], kappa_of,
                                resamples=200)
    assert interval.low is None and interval.high is None
