"""PPI++ as written here, held to ``ppi_py`` (the package's own code) on fixed data."""

import numpy as np
import pytest
from ppi_py import ppi_mean_ci, ppi_mean_pointestimate, ppi_mean_power

from app.quality.ppi import classical_mean, labels_needed, ppi_correlation, ppi_mean


def fixed_data(seed: int, n: int = 200, big_n: int = 5000) -> tuple[np.ndarray, ...]:
    rng = np.random.default_rng(seed)
    truth_all = rng.random(big_n) < 0.7
    judge_all = np.where(rng.random(big_n) < 0.85, truth_all, ~truth_all).astype(float)
    labelled = rng.choice(big_n, n, replace=False)
    y = truth_all[labelled].astype(float)
    return y, judge_all[labelled], judge_all, rng.uniform(0.5, 3.0, n), rng.uniform(0.5, 2.0, big_n)


@pytest.mark.parametrize("seed", [1, 2, 3])
@pytest.mark.parametrize("alpha", [0.05, 0.1])
def test_the_interval_is_ppi_mean_ci(seed: int, alpha: float) -> None:
    y, judge, judge_all, _, _ = fixed_data(seed)
    low, high = ppi_mean_ci(y, judge, judge_all, alpha=alpha)
    mine = ppi_mean(y, judge, judge_all, alpha=alpha)
    assert mine.low == pytest.approx(float(low[0]), abs=1e-9)
    assert mine.high == pytest.approx(float(high[0]), abs=1e-9)
    assert mine.value == pytest.approx(float(ppi_mean_pointestimate(y, judge, judge_all)[0]), abs=1e-9)
    assert 0 < mine.lam <= 1


@pytest.mark.parametrize("seed", [4, 5])
def test_weighted_interval_is_ppi_mean_ci_with_weights(seed: int) -> None:
    y, judge, judge_all, w, w_all = fixed_data(seed)
    low, high = ppi_mean_ci(y, judge, judge_all, alpha=0.05, w=w, w_unlabeled=w_all)
    mine = ppi_mean(y, judge, judge_all, weights=w, weights_all=w_all)
    assert (mine.low, mine.high) == (pytest.approx(float(low[0]), abs=1e-9),
                                     pytest.approx(float(high[0]), abs=1e-9))
    point = ppi_mean_pointestimate(y, judge, judge_all, w=w, w_unlabeled=w_all)
    assert mine.value == pytest.approx(float(np.ravel(point)[0]), abs=1e-9)


@pytest.mark.parametrize("lam", [0.0, 0.4, 1.0])
def test_a_fixed_lambda_is_ppi_mean_ci_with_that_lambda(lam: float) -> None:
    y, judge, judge_all, w, _ = fixed_data(6)
    low, high = ppi_mean_ci(y, judge, judge_all, alpha=0.05, lam=lam, w=w)
    mine = ppi_mean(y, judge, judge_all, weights=w, lam=lam)
    assert (mine.low, mine.high) == (pytest.approx(float(low[0]), abs=1e-9),
                                     pytest.approx(float(high[0]), abs=1e-9))


def test_one_edit_per_cluster_and_one_stratum_change_nothing() -> None:
    y, judge, judge_all, w, _ = fixed_data(7)
    plain = ppi_mean(y, judge, judge_all, weights=w)
    same = ppi_mean(y, judge, judge_all, weights=w, clusters=list(range(len(y))),
                    clusters_all=list(range(len(judge_all))), strata=["all"] * len(y))
    assert same.se == pytest.approx(plain.se, abs=1e-12)


def test_edits_of_one_image_widen_the_interval() -> None:
    """The same answers, each image holding four identical edits: four times the data, but
    no more information, so the interval must not shrink as if it were independent."""
    y, judge, judge_all, _, _ = fixed_data(8, n=100, big_n=2000)
    quadrupled = ppi_mean(np.repeat(y, 4), np.repeat(judge, 4), np.repeat(judge_all, 4))
    clustered = ppi_mean(np.repeat(y, 4), np.repeat(judge, 4), np.repeat(judge_all, 4),
                         clusters=np.repeat(np.arange(100), 4),
                         clusters_all=np.repeat(np.arange(2000), 4))
    single = ppi_mean(y, judge, judge_all)
    assert clustered.se == pytest.approx(2 * quadrupled.se, rel=1e-9)
    assert clustered.se == pytest.approx(single.se, rel=0.02)


def test_strata_take_out_the_variance_between_them() -> None:
    y = np.array([1.0] * 50 + [0.0] * 50)
    judge = y.copy()
    strata = ["pass"] * 50 + ["fail"] * 50
    flat = classical_mean(y)
    stratified = classical_mean(y, strata=strata)
    assert flat.se > 0 and stratified.se == pytest.approx(0.0, abs=1e-12)
    assert ppi_mean(y, judge, np.concatenate([judge, judge])).value == pytest.approx(0.5)


def test_the_classical_mean_is_lambda_zero() -> None:
    y, judge, judge_all, w, _ = fixed_data(9)
    low, high = ppi_mean_ci(y, judge, judge_all, alpha=0.05, lam=0, w=w)
    mine = classical_mean(y, weights=w)
    assert (mine.low, mine.high) == (pytest.approx(float(low[0]), abs=1e-9),
                                     pytest.approx(float(high[0]), abs=1e-9))


def test_a_judge_that_never_varies_leaves_the_readers_alone() -> None:
    y = np.array([1.0, 0.0, 1.0, 1.0])
    estimate = ppi_mean(y, np.ones(4), np.ones(40))
    assert estimate.lam == 0 and estimate.value == pytest.approx(0.75)


@pytest.mark.parametrize("seed", [10, 11])
def test_the_planner_is_ppi_mean_power_with_the_data_set_as_its_limit(seed: int) -> None:
    y, judge, judge_all, w, _ = fixed_data(seed)
    rho = ppi_correlation(y, judge, w)
    for effective in (300, 900, 2500):
        reference = ppi_mean_power(y, judge, cost_Y=1.0, cost_Yhat=1e-6, effective_n=effective,
                                   n_max=len(judge_all), w=w)
        assert rho == pytest.approx(reference["ppi_corr"], abs=1e-9)
        assert labels_needed(effective, rho, len(judge_all)) == reference["n"]


def test_a_census_of_the_judge_drops_its_term_from_the_variance() -> None:
    """The judge answered for every edit of the data set: its mean is known exactly."""
    y, judge, judge_all, w, _ = fixed_data(12)
    sampled = ppi_mean(y, judge, judge_all, weights=w)
    census = ppi_mean(y, judge, judge_all, weights=w, census=True)
    imputed_var = float((sampled.lam * judge_all).std() ** 2 / len(judge_all))
    assert census.value == sampled.value and census.lam == sampled.lam
    assert census.se == pytest.approx(np.sqrt(sampled.se ** 2 - imputed_var), rel=1e-9)


def test_reading_every_edit_leaves_nothing_to_estimate() -> None:
    """A census read whole: the finite population correction takes the variance to zero."""
    y, judge, _, _, _ = fixed_data(13, n=50, big_n=50)
    everything = ppi_mean(y, judge, judge, census=True, drawn=np.ones(50))
    assert everything.se == 0 and everything.value == pytest.approx(y.mean())
    half = classical_mean(y, drawn=np.full(50, 0.5))
    assert half.se == pytest.approx(classical_mean(y).se * np.sqrt(0.5))
