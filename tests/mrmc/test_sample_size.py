"""The sample-size engine held to RJafroc's own test values on Van Dyke et al. (1993)
(RJafroc tests/testthat/test-SsSampleSizeRoc.R: SsPowerGivenJK and SsSampleSizeKGivenJ,
OR method, Wilcoxon AUC), through both shapes of pilot: two modalities, and the single
analysis of each reader's difference."""

from pathlib import Path

import pytest

from app.mrmc.auc import auc_and_jackknife
from app.mrmc.data import read_csv
from app.mrmc.orh import OrResult, analyse
from app.mrmc.sample_size import Pilot, cases_for_power, cases_for_width, power, table

REFERENCE = Path(__file__).resolve().parents[3] / "shared" / "reference" / "mrmc"
EFFECT = -0.043800322


@pytest.fixture(scope="module", params=["two modalities", "differences"])
def pilot(request: pytest.FixtureRequest) -> Pilot:
    data = read_csv(REFERENCE / "vandyke.csv")
    if request.param == "two modalities":
        return Pilot.from_or(analyse(data))
    auc, jack = auc_and_jackknife(data.ratings, data.truth)
    return Pilot.single(auc[0] - auc[1], jack[0] - jack[1])


@pytest.mark.parametrize(("analysis", "readers", "cases", "expected"), [
    ("rrrc", 10, 165, 0.80541995), ("frrc", 10, 131, 0.80091813), ("rrfc", 10, 53, 0.80496663)])
def test_power_matches_rjafroc(pilot: Pilot, analysis: str, readers: int, cases: int,
                               expected: float) -> None:
    assert power(pilot, readers, cases, EFFECT, analysis).power == pytest.approx(expected, abs=1e-8)


def test_the_pilots_own_effect_by_default(pilot: Pilot) -> None:
    assert power(pilot, 6, 111).power == pytest.approx(0.5526116, abs=5e-8)


def test_cases_for_eighty_per_cent_power_with_six_readers(pilot: Pilot) -> None:
    found = cases_for_power(pilot, 6)
    assert found is not None and found.cases == 251
    assert power(pilot, 6, 250).power < 0.8 <= found.power


def test_a_target_no_number_of_cases_reaches_says_so(pilot: Pilot) -> None:
    # With two readers the readers' own variance is most of the error: no K gives 99 %.
    assert cases_for_power(pilot, 2, target=0.99) is None
    assert cases_for_width(pilot, 2, 0.001) is None


def test_width_shrinks_with_readers_and_the_table_says_where_none_suffices(pilot: Pilot) -> None:
    rows = table(pilot, half_width=0.04)
    needed = [found.cases for _, found in rows if found is not None]
    assert needed == sorted(needed, reverse=True)
    for readers, found in rows:
        if found is not None:
            assert found.half_width <= 0.04
            assert power(pilot, readers, found.cases - 1, 0.0).half_width > 0.04


def test_an_unknown_analysis_is_refused(pilot: Pilot) -> None:
    with pytest.raises(ValueError, match="no analysis"):
        power(pilot, 5, 100, analysis="fixed")


def test_a_pilot_whose_readers_never_differ_gives_no_table_and_no_error() -> None:
    """A report once failed (500) on a study whose readers' differences from the judge did not
    vary: the predicted readers' mean square was 0 and Hillis's df divided by it."""
    flat = Pilot(k_star=8, var_tr=0.0, var=0.01, cov=0.01, effect=0.1)
    found = power(flat, 3, 50, 0.0)
    assert found.ddf == float("inf") and found.half_width > 0
    assert table(Pilot(k_star=8, var_tr=0.0, var=0.0, cov=0.0, effect=0.0), half_width=0.05) == []


@pytest.mark.parametrize("analysis", ["rrrc", "frrc", "rrfc"])
def test_no_effect_has_the_tests_size_for_power(pilot: Pilot, analysis: str) -> None:
    """SciPy's non-central F gives -0.95 at a non-centrality of 0; RJafroc gives 0.05."""
    assert power(pilot, 5, 100, 0.0, analysis).power == pytest.approx(0.05, abs=1e-12)
    widest = cases_for_width(pilot, 5, 0.1, analysis)
    assert widest is not None and widest.power == pytest.approx(0.05, abs=1e-12)


def _pilot_with_cov2_below_cov3() -> tuple[Pilot, OrResult]:
    import numpy as np

    from app.mrmc.data import MrmcData

    rng = np.random.default_rng(0)
    truth = np.arange(40) >= 20
    case = rng.normal(size=40) + truth * 1.0
    ratings = np.stack([np.stack([case + rng.normal(size=40) + 0.3 * m * truth for _ in range(4)])
                        for m in range(2)])
    result = analyse(MrmcData(("A", "B"), tuple("abcd"), tuple(map(str, range(40))), truth, ratings))
    return Pilot.from_or(result), result


def test_a_pilot_with_cov2_below_cov3_follows_hillis_2011_equation_9() -> None:
    """Hillis, Obuchowski & Berbaum 2011 (eq. 9) and RJafroc keep max(Cov2 - Cov3, 0) in
    Var(T*R); the Iowa software, which the analysis page reproduces, does not. The size took
    the Iowa figure while citing Hillis 2011 (power 0.19170 where RJafroc gives 0.18850)."""
    pilot, result = _pilot_with_cov2_below_cov3()
    c = result.covariances
    assert c.cov2 < c.cov3
    assert pilot.var_tr == pytest.approx(result.ms_tr - c.var + c.cov1, rel=1e-12)
    assert result.components["var_tr"] == pytest.approx(
        result.ms_tr - c.var + c.cov1 + c.cov2 - c.cov3, rel=1e-12)  # the report keeps Iowa's
    assert pilot.var_tr > result.components["var_tr"]


def test_readers_alike_but_for_rounding_have_no_spread() -> None:
    """Three identical areas summed in different orders gave a spread of 1.85e-32, df 9.6e54
    and a size table that promised 2 cases for 2-20 readers; RJafroc gives 0 and df infinite."""
    import numpy as np

    from app.mrmc.orh import spread
    from app.mrmc.standalone import compare

    values = np.array([0.1 + 0.2, 0.3, 0.3])  # 0.30000000000000004, 0.3, 0.3
    assert float(values.var(ddof=1)) > 0 and spread(values) == 0.0
    rng = np.random.default_rng(1)
    jack = 0.3 + rng.normal(scale=0.01, size=(3, 30))
    versus = compare("judge", ("a", "b", "c"), values, jack, np.full(3, 0.25),
                     np.repeat((0.25 + rng.normal(scale=0.01, size=30))[None, :], 3, axis=0))
    assert versus.var_r == 0.0 and versus.df == float("inf")
