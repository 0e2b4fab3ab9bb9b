"""The sample-size engine held to RJafroc's own test values on Van Dyke et al. (1993)
(RJafroc tests/testthat/test-SsSampleSizeRoc.R: SsPowerGivenJK and SsSampleSizeKGivenJ,
OR method, Wilcoxon AUC), through both shapes of pilot: two modalities, and the single
analysis of each reader's difference."""

from pathlib import Path

import pytest

from app.mrmc.auc import auc_and_jackknife
from app.mrmc.data import read_csv
from app.mrmc.orh import analyse
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
