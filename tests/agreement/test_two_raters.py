"""The two-rater figures: published values, statsmodels, and the clustered McNemar test."""

import numpy as np
import pytest
from statsmodels.stats.contingency_tables import mcnemar
from statsmodels.stats.inter_rater import cohens_kappa

from app.agreement.multirater import category_counts, gwet_ac1_multi
from app.agreement.resample import ClusterBootstrap
from app.agreement.two_raters import FIGURES, clustered_mcnemar, compare


def expand(both_pass: int, lenient: int, strict: int, both_fail: int) -> tuple[list[bool], list[bool]]:
    """Judge and reference votes for a 2x2: judge pass / ref fail is lenient, the reverse strict."""
    judge = [True] * (both_pass + lenient) + [False] * (strict + both_fail)
    reference = [True] * both_pass + [False] * lenient + [True] * strict + [False] * both_fail
    return judge, reference


def singletons(n: int) -> ClusterBootstrap:
    return ClusterBootstrap(list(range(n)), resamples=500)


@pytest.mark.parametrize("cells, kappa", [((40, 7, 12, 41), 0.62), ((76, 7, 12, 5), 0.24)])
def test_the_papers_pilot_gives_its_kappa_at_two_pass_rates(cells: tuple[int, ...], kappa: float) -> None:
    """81 % agreement, judge too strict in 12 and too lenient in 7 of 100: kappa 0.62 when
    about half the edits pass, 0.24 when most do (the paradox that makes kappa alone mislead)."""
    judge, reference = expand(*cells)
    result = compare(judge, reference, singletons(100))
    assert result.figures["agreement"].value == pytest.approx(0.81)
    assert result.figures["a_stricter"].value == pytest.approx(0.12)
    assert result.figures["a_more_lenient"].value == pytest.approx(0.07)
    assert result.figures["kappa"].value == pytest.approx(kappa, abs=0.005)


def test_kappa_is_statsmodels_kappa() -> None:
    rng = np.random.default_rng(8)
    for _ in range(20):
        table = rng.integers(1, 40, size=4)
        judge, reference = expand(*table)
        ours = compare(judge, reference, singletons(len(judge))).figures["kappa"].value
        assert ours == pytest.approx(cohens_kappa(table.reshape(2, 2).astype(float)).kappa, abs=1e-12)


def test_two_rater_ac1_is_gwets_with_two_raters() -> None:
    judge, reference = expand(30, 5, 9, 16)
    ours = compare(judge, reference, singletons(60)).figures["ac1"].value
    both = category_counts(list(zip(judge, reference, strict=True)))
    assert ours == pytest.approx(gwet_ac1_multi(both).value)


def test_shares_conditional_figures_and_indices() -> None:
    judge, reference = expand(40, 4, 6, 10)
    result = compare(judge, reference, singletons(60)).figures
    assert result["a_stricter_given_b_pass"].value == pytest.approx(6 / 46)
    assert result["a_more_lenient_given_b_fail"].value == pytest.approx(4 / 14)
    assert result["b_fail_given_a_pass"].value == pytest.approx(4 / 44)
    assert result["prevalence_index"].value == pytest.approx((40 - 10) / 60)
    assert result["bias_index"].value == pytest.approx((4 - 6) / 60)
    assert result["prevalence_index"].low is None  # descriptive: no interval
    assert result["pabak"].value == pytest.approx(2 * 50 / 60 - 1)


def test_clustered_mcnemar_reduces_to_mcnemar_with_one_case_per_image() -> None:
    judge, reference = expand(30, 4, 11, 15)
    result = compare(judge, reference, singletons(60))
    plain = mcnemar(np.array([[30, 4], [11, 15]]), exact=False, correction=False).pvalue
    assert result.mcnemar_clustered_p == pytest.approx(plain, abs=1e-12)
    assert result.mcnemar_exact_p == pytest.approx(mcnemar(np.array([[30, 4], [11, 15]]), exact=True).pvalue)
    assert clustered_mcnemar(np.zeros(5)) is None


def test_cannot_assess_is_left_out_never_a_fail() -> None:
    result = compare([True, None, False, True], [True, False, None, False], singletons(4))
    assert result.table.n == 2 and result.left_out == 2 and result.table.both_fail == 0


def test_undefined_figures_say_so() -> None:
    same = compare([True] * 5, [True] * 5, singletons(5))
    assert same.figures["kappa"].value is None and same.mcnemar_exact_p is None
    assert same.figures["agreement"].value == 1
    empty = compare([None], [True], singletons(1))
    assert all(empty.figures[name].value is None for name in FIGURES)


def test_a_share_at_one_or_zero_gets_a_clopper_pearson_interval_not_zero_width() -> None:
    """18 of 18 readers' passes, the judge lenient in none: every resample gives the same
    share, so a bootstrap interval would be [1, 1] and [0, 0]. Clopper-Pearson over the
    source images gives the published 18/18 interval [0.8147, 1] (statsmodels' "beta")."""
    from statsmodels.stats.proportion import proportion_confint

    judge, reference = expand(18, 0, 0, 0)
    figures = compare(judge, reference, singletons(18)).figures
    low, high = proportion_confint(18, 18, alpha=0.05, method="beta")
    assert figures["agreement"].value == 1.0
    assert figures["agreement"].low == pytest.approx(0.814698, abs=1e-6) == pytest.approx(low)
    assert figures["agreement"].high == 1.0 == pytest.approx(high)
    lenient = figures["a_more_lenient"]
    assert lenient.value == 0.0 and lenient.low == 0.0
    assert lenient.high == pytest.approx(proportion_confint(0, 18, alpha=0.05, method="beta")[1])
    assert "Clopper-Pearson" in (lenient.warning or "")


def test_clustered_cases_count_once_per_source_image_at_the_bound() -> None:
    """36 agreeing cases on 9 source images: no more evidence than 9 observations."""
    judge, reference = expand(36, 0, 0, 0)
    figures = compare(judge, reference, ClusterBootstrap([i // 4 for i in range(36)],
                                                         resamples=500)).figures
    assert figures["agreement"].low == pytest.approx(0.025 ** (1 / 9))


def test_kappa_is_undefined_when_one_rater_is_constant() -> None:
    """A judge that passed every edit made no distinction: its kappa is undefined, not 0."""
    judge, reference = expand(30, 10, 0, 0)  # the judge passes all 40
    assert compare(judge, reference, singletons(40)).figures["kappa"].value is None


def test_every_figure_of_a_pair_counts_the_same_source_images() -> None:
    """An image whose one case the reference left open holds no compared case: the indices
    counted it (51 images) where agreement and kappa did not (50). A share given one
    rater's verdict counts the images holding that verdict."""
    judge, reference = expand(40, 5, 3, 10)
    judge, reference = [*judge, True], [*reference, None]
    result = compare(judge, reference, ClusterBootstrap([i // 2 for i in range(58)] + [99],
                                                         resamples=200)).figures
    counted = {name: f.clusters for name, f in result.items() if "_given_" not in name}
    assert set(counted.values()) == {29}, counted
    # B fails the cases 40-44 and 48-57 (images 20-22 and 24-28); B passes 0-39 and 45-47
    assert result["a_more_lenient_given_b_fail"].clusters == 8
    assert result["a_more_lenient_given_b_fail"].n == 15
    assert result["a_stricter_given_b_pass"].clusters == 22


def test_a_conditional_share_at_one_rests_on_its_own_cases_and_images() -> None:
    # Four source images; B fails one case only (image 3), and A passes it.
    judge = [True, True, False, True, False, True]
    reference = [True, True, True, True, True, False]
    boot = ClusterBootstrap([0, 0, 1, 1, 2, 3], resamples=500)
    figure = compare(judge, reference, boot).figures["a_more_lenient_given_b_fail"]
    assert figure.value == 1.0 and figure.n == 1 and figure.clusters == 1
    assert figure.low == pytest.approx(0.025, abs=1e-9) and figure.high == 1.0
    # Given B's pass: 5 cases on 3 images (0, 1, 2), a share of 2 / 5 (A fails two)
    stricter = compare(judge, reference, boot).figures["a_stricter_given_b_pass"]
    assert stricter.n == 5 and stricter.clusters == 3


def test_a_conditional_share_at_zero_is_exact_on_the_images_of_its_condition() -> None:
    # B fails three cases on two of ten images; A fails them all: 0 of 3, on 2 images.
    judge = [True] * 10 + [False] * 3
    reference = [True] * 10 + [False] * 3
    boot = ClusterBootstrap([*range(10), 8, 8, 9], resamples=500)
    figure = compare(judge, reference, boot).figures["a_more_lenient_given_b_fail"]
    assert figure.value == 0.0 and figure.n == 3 and figure.clusters == 2
    assert figure.low == 0.0
    assert figure.high == pytest.approx(1 - 0.025 ** (1 / 2), abs=1e-9)


def test_a_kappa_undefined_in_many_resamples_gets_no_interval() -> None:
    # A fails the edits of one image of eight: every resample without it (about a third)
    # leaves A with one answer and kappa undefined. The rest described only resamples
    # that drew that image, and their interval excluded 0.
    judge = [True] * 14 + [False, False]
    reference = [True] * 12 + [False, False, False, False]
    boot = ClusterBootstrap([i // 2 for i in range(16)], resamples=2000)
    kappa = compare(judge, reference, boot).figures["kappa"]
    assert kappa.value is not None and kappa.dropped > 100
    assert kappa.low is None and kappa.high is None
    assert kappa.warning is not None and "no interval" in kappa.warning
