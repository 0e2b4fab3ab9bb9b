"""Agreement among many readers with missing ratings, against published values."""

import numpy as np
import pytest
from statsmodels.stats.inter_rater import fleiss_kappa

from app.agreement.multirater import (
    ac1_from_sums,
    alpha_from_coincidences,
    coincidences,
    fleiss_from_sums,
    fleiss_generalised,
    gwet_ac1_multi,
    nominal_alpha,
    subject_features,
)
from app.agreement.readers import among_readers
from app.agreement.resample import ClusterBootstrap

NAN = np.nan
# Gwet's cac.raw4raters (irrCAC): 12 subjects, 4 raters, no rater rated every subject.
RAW_4RATERS = np.array([[1, 1, NAN, 1], [2, 2, 3, 2], [3, 3, 3, 3], [3, 3, 3, 3], [2, 2, 2, 2],
                        [1, 2, 3, 4], [4, 4, 4, 4], [1, 1, 2, 1], [2, 2, 2, 2], [NAN, 5, 5, 5],
                        [NAN, NAN, 1, 1], [NAN, NAN, 3, NAN]])
# Fleiss (1971), Table 1: 30 patients, 6 psychiatrists each, 5 diagnoses (counts per category).
FLEISS_1971 = np.array([
    [0, 0, 0, 6, 0], [0, 3, 0, 0, 3], [0, 1, 4, 0, 1], [0, 0, 0, 0, 6], [0, 3, 0, 3, 0],
    [2, 0, 4, 0, 0], [0, 0, 4, 0, 2], [2, 0, 3, 1, 0], [2, 0, 0, 4, 0], [0, 0, 0, 0, 6],
    [1, 0, 0, 5, 0], [1, 1, 0, 4, 0], [0, 3, 3, 0, 0], [1, 0, 0, 5, 0], [0, 2, 0, 3, 1],
    [0, 0, 5, 0, 1], [3, 0, 0, 1, 2], [5, 1, 0, 0, 0], [0, 2, 0, 4, 0], [1, 0, 2, 0, 3],
    [0, 0, 0, 0, 6], [0, 1, 0, 5, 0], [0, 2, 0, 1, 3], [2, 0, 0, 4, 0], [1, 0, 0, 4, 1],
    [0, 5, 0, 1, 0], [4, 0, 0, 0, 2], [0, 2, 0, 4, 0], [1, 0, 5, 0, 0], [0, 0, 0, 0, 6]], dtype=float)


def counts_of(raw: np.ndarray) -> np.ndarray:
    return np.stack([(raw == c).sum(axis=1) for c in range(1, 6)], axis=1).astype(float)


def test_gwet_generalised_fleiss_matches_irrcac_raw_4raters() -> None:
    result = fleiss_generalised(counts_of(RAW_4RATERS))
    # irrCAC: fleiss.kappa.raw(cac.raw4raters): pa 0.8181818, pe 0.2387153, 0.76117, se 0.15302
    assert result.value == pytest.approx(0.7612, abs=1e-4)
    assert result.value == pytest.approx(0.76117, abs=1e-5)
    assert result.observed == pytest.approx(0.8181818, abs=1e-7)
    assert result.chance == pytest.approx(0.2387153, abs=1e-7)
    assert result.se == pytest.approx(0.15302, abs=1e-5)


def test_gwet_multi_rater_ac1_matches_irrcac_raw_4raters() -> None:
    result = gwet_ac1_multi(counts_of(RAW_4RATERS))
    # irrCAC: gwet.ac1.raw(cac.raw4raters): pe 0.1903212, 0.77544, se 0.14295
    assert result.value == pytest.approx(0.7754, abs=1e-4)
    assert result.chance == pytest.approx(0.1903212, abs=1e-7)
    assert result.se == pytest.approx(0.14295, abs=1e-5)


def test_the_first_fifteen_patients_match_irrcac_distrib_6raters() -> None:
    counts = FLEISS_1971[:15]
    fleiss, ac1 = fleiss_generalised(counts), gwet_ac1_multi(counts)
    # irrCAC: fleiss.kappa.dist 0.4139265 (se 0.08119291); gwet.ac1.dist 0.4448007 (0.08418757)
    assert fleiss.value == pytest.approx(0.4139265, abs=1e-7)
    assert fleiss.se == pytest.approx(0.08119291, abs=1e-7)
    assert ac1.value == pytest.approx(0.4448007, abs=1e-7)
    assert ac1.se == pytest.approx(0.08418757, abs=1e-7)


def test_fleiss_1971_gives_its_published_kappa() -> None:
    assert fleiss_generalised(FLEISS_1971).value == pytest.approx(0.430, abs=5e-4)
    # With every subject fully rated, Gwet's form is Fleiss' own (statsmodels).
    assert fleiss_generalised(FLEISS_1971).value == pytest.approx(fleiss_kappa(FLEISS_1971), abs=1e-12)


def test_krippendorff_published_example_from_coincidence_sums() -> None:
    # Krippendorff (2011), "Computing Krippendorff's alpha-reliability", section C: 0.743.
    summed = coincidences(counts_of(RAW_4RATERS)).sum(axis=0)
    assert alpha_from_coincidences(summed) == pytest.approx(0.7434, abs=1e-4)
    assert alpha_from_coincidences(summed) == pytest.approx(nominal_alpha(RAW_4RATERS.T), abs=1e-12)


def test_sums_give_the_same_coefficients_as_the_estimators() -> None:
    counts = counts_of(RAW_4RATERS)
    sums = subject_features(counts).sum(axis=0)
    assert fleiss_from_sums(sums) == pytest.approx(fleiss_generalised(counts).value)
    assert ac1_from_sums(sums) == pytest.approx(gwet_ac1_multi(counts).value)


def test_a_reader_who_answered_nothing_leaves_fleiss_defined() -> None:
    """Once undefined: statsmodels' Fleiss needs every reader on every case."""
    rng = np.random.default_rng(3)
    truth = rng.random(40) < 0.6
    a = [bool(t) if rng.random() < 0.9 else not t for t in truth]
    b = [bool(t) if rng.random() < 0.85 else not t for t in truth]
    silent: list[bool | None] = [None] * 40
    result = among_readers([a, b, silent], ClusterBootstrap([i // 2 for i in range(40)], resamples=300))
    assert result["fleiss_kappa"]["value"] is not None and result["ac1"]["value"] is not None
    assert result["fleiss_kappa"]["low"] is not None and result["n_rated_twice"] == 40
    assert result["krippendorff_alpha"]["value"] == pytest.approx(
        nominal_alpha(np.array([a, b], dtype=float)), abs=1e-12)
