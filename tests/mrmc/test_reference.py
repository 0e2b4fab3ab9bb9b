"""The MRMC engine held to the reference software's own output on the published data sets
(../shared/reference/mrmc/): OR-DBM MRMC 2.51 on Van Dyke et al. (1993), two modalities and
one, to every printed digit; and RJafroc's single-treatment comparison of a CAD algorithm
with nine radiologists, to 1e-8."""

from decimal import Decimal
from pathlib import Path

import pytest

from app.mrmc.data import read_csv
from app.mrmc.orh import OrResult, analyse
from app.mrmc.standalone import versus_panel

REFERENCE = Path(__file__).resolve().parents[3] / "shared" / "reference" / "mrmc"


def printed(value: float, text: str) -> None:
    """``value`` rounded to the digits ``text`` prints is ``text``."""
    digits = -Decimal(text).as_tuple().exponent  # type: ignore[operator]
    assert f"{value:.{digits}f}" == text, (value, text)


@pytest.fixture(scope="module")
def vandyke() -> OrResult:
    return analyse(read_csv(REFERENCE / "vandyke.csv"))


@pytest.fixture(scope="module")
def one_modality() -> OrResult:
    data = read_csv(REFERENCE / "vandyke.csv")
    from app.mrmc.data import MrmcData

    return analyse(MrmcData(data.modalities[:1], data.readers, data.cases, data.truth,
                            data.ratings[:1]))


READER_AUC = [("0.91964573", "0.94782609"), ("0.85877617", "0.90531401"),
              ("0.90386473", "0.92173913"), ("0.97310789", "0.99935588"),
              ("0.82979066", "0.92995169")]


def test_reader_aucs_means_and_their_difference(vandyke: OrResult) -> None:
    for r, row in enumerate(READER_AUC):
        for t, text in enumerate(row):
            printed(float(vandyke.auc[t, r]), text)
    printed(float(vandyke.auc[0].mean()), "0.89703704")
    printed(float(vandyke.auc[1].mean()), "0.94083736")
    printed(float(vandyke.auc[0].mean() - vandyke.auc[1].mean()), "-0.04380032")
    assert (vandyke.cases, vandyke.normal, vandyke.abnormal) == (114, 69, 45)


def test_anova_of_the_aucs(vandyke: OrResult) -> None:
    printed(vandyke.ms_t, "0.00479617")
    printed(vandyke.ms_r, "0.00383620")
    printed(vandyke.ms_tr, "0.00055103")
    printed(vandyke.ms_r_single[0], "0.00308263")
    printed(vandyke.ms_r_single[1], "0.00130460")


def test_or_and_dbm_components(vandyke: OrResult) -> None:
    c, k = vandyke.covariances, vandyke.components
    printed(k["var_r"], "0.00153500")
    printed(k["var_tr"], "0.00020040")
    printed(c.cov1, "0.00034661")
    printed(c.cov2, "0.00034407")
    printed(c.cov3, "0.00023903")
    printed(c.var, "0.00080229")
    printed(k["corr1"], "0.43203138")
    printed(k["corr2"], "0.42886683")
    printed(k["corr3"], "0.29793328")
    for name, text in [("var_r", "0.00153500"), ("var_c", "0.02724923"), ("var_tr", "0.00020040"),
                       ("var_tc", "0.01197530"), ("var_rc", "0.01226473"),
                       ("var_trc_error", "0.03997160")]:
        printed(vandyke.dbm[name], text)


def test_random_readers_and_random_cases(vandyke: OrResult) -> None:
    a = vandyke.rrrc
    assert a.test is not None
    printed(a.test.statistic, "4.46")
    printed(a.test.ddf or 0.0, "15.26")
    printed(a.test.p, "0.0517")
    printed(vandyke.ms_tr + 5 * max(vandyke.covariances.cov2 - vandyke.covariances.cov3, 0),
            "0.00107626")  # the error term
    [d] = a.differences
    printed(d.difference, "-0.04380")
    printed(d.se, "0.02075")
    printed(d.df or 0.0, "15.26")
    printed(d.statistic, "-2.11")
    printed(d.p, "0.0517")
    printed(d.ci[0], "-0.08796")
    printed(d.ci[1], "0.00036")
    for single, (auc, se, df, low, high) in zip(a.single, [
            ("0.89703704", "0.03317360", "12.74", "0.82522360", "0.96885048"),
            ("0.94083736", "0.02156637", "12.71", "0.89413783", "0.98753689")], strict=True):
        printed(single.auc, auc)
        printed(single.se, se)
        printed(single.df or 0.0, df)
        printed(single.ci[0], low)
        printed(single.ci[1], high)
    printed(vandyke.single_covariances[0][1], "0.00048396")
    printed(vandyke.single_covariances[1][1], "0.00020419")


def test_fixed_readers_and_random_cases(vandyke: OrResult) -> None:
    a = vandyke.frrc
    assert a.test is not None
    printed(a.test.statistic, "5.47595")
    printed(a.test.p, "0.0193")
    [d] = a.differences
    printed(d.se, "0.01872")
    printed(d.statistic, "-2.34")
    printed(d.p, "0.0193")
    printed(d.ci[0], "-0.08049")
    printed(d.ci[1], "-0.00711")
    for single, (se, low, high) in zip(a.single, [("0.02428971", "0.84943008", "0.94464399"),
                                                  ("0.01677632", "0.90795637", "0.97371835")],
                                       strict=True):
        printed(single.se, se)
        printed(single.ci[0], low)
        printed(single.ci[1], high)
    printed(vandyke.single_covariances[0][0], "0.00101410")
    printed(vandyke.single_covariances[1][0], "0.00059047")
    readers = [("-0.02818", "0.02551", "-1.10", "0.2693", "-0.07818", "0.02182", "0.00069890", "0.00037347"),
               ("-0.04654", "0.02630", "-1.77", "0.0768", "-0.09809", "0.00501", "0.00110605", "0.00076016"),
               ("-0.01787", "0.03121", "-0.57", "0.5668", "-0.07904", "0.04330", "0.00084234", "0.00035532"),
               ("-0.02625", "0.01729", "-1.52", "0.1290", "-0.06014", "0.00764", "0.00015058", "0.00000108"),
               ("-0.10016", "0.04406", "-2.27", "0.0230", "-0.18651", "-0.01381", "0.00121357", "0.00024304")]
    for row, (diff, se, z, p, low, high, var, cov1) in zip(a.per_reader, readers, strict=True):
        [d] = row["differences"]  # type: ignore[misc]
        for value, text in [(d["difference"], diff), (d["se"], se), (d["z"], z), (d["p"], p),
                            (d["ci"][0], low), (d["ci"][1], high), (row["var_error"], var),
                            (row["cov1"], cov1)]:
            printed(float(value), text)  # type: ignore[arg-type]


def test_random_readers_and_fixed_cases(vandyke: OrResult) -> None:
    a = vandyke.rrfc
    assert a.test is not None
    printed(a.test.statistic, "8.70")
    printed(a.test.p, "0.0420")
    assert a.test.ddf == 4
    [d] = a.differences
    printed(d.se, "0.01485")
    printed(d.statistic, "-2.95")
    printed(d.ci[0], "-0.08502")
    printed(d.ci[1], "-0.00258")
    for single, (se, low, high) in zip(a.single, [("0.02482994", "0.82809808", "0.96597599"),
                                                  ("0.01615303", "0.89598936", "0.98568536")],
                                       strict=True):
        printed(single.se, se)
        printed(single.ci[0], low)
        printed(single.ci[1], high)


def test_one_modality_alone(one_modality: OrResult) -> None:
    """vandyke-single-treatment-or-dbm-mrmc.txt: no test and no difference, every
    single-modality interval, and each reader's error variance."""
    assert one_modality.rrrc.test is None and not one_modality.rrrc.differences
    [rrrc], [frrc], [rrfc] = one_modality.rrrc.single, one_modality.frrc.single, one_modality.rrfc.single
    printed(one_modality.ms_r, "0.00308263")
    printed(one_modality.covariances.cov2, "0.00048396")
    printed(one_modality.components["corr2"], "0.47723151")
    printed(one_modality.covariances.var, "0.00101410")
    printed(rrrc.se, "0.03317360")
    printed(rrrc.ci[0], "0.82522360")
    printed(rrrc.ci[1], "0.96885048")
    printed(frrc.se, "0.02428971")
    printed(frrc.ci[0], "0.84943008")
    printed(frrc.ci[1], "0.94464399")
    printed(rrfc.ci[0], "0.82809808")
    printed(rrfc.ci[1], "0.96597599")
    for row, text in zip(one_modality.frrc.per_reader,
                         ["0.00090755", "0.00132316", "0.00079859", "0.00030064", "0.00174057"],
                         strict=True):
        printed(float(row["var_error"]), text)  # type: ignore[arg-type]


def test_the_algorithm_against_the_radiologists_as_rjafroc_stcadvsrad() -> None:
    found = versus_panel(read_csv(REFERENCE / "cadlroc-roc.csv"), "1")
    expected = {"algorithm_auc": 0.8169270833, "panel_auc": 0.8486631944,
                "difference": 0.03173611111, "t": 0.9928688834, "p": 0.3210474343,
                "var_r": 0.0008777926975, "var_error": 0.001399549092,
                "cov2": 0.0009241680013}
    for name, value in expected.items():
        assert getattr(found, name) == pytest.approx(value, abs=1e-8), name
    printed(found.df, "877.8863783")  # printed to 7 decimals
    assert found.ci == pytest.approx((-0.03099876877, 0.09447099100), abs=1e-8)
    assert found.panel_ci_rjafroc == pytest.approx((0.7859283146, 0.9113980743), abs=1e-8)
    assert found.reader_auc == pytest.approx(
        [0.8415625000, 0.8411979167, 0.8997395833, 0.8381250000, 0.8563541667, 0.8786979167,
         0.8583854167, 0.7970312500, 0.8268750000], abs=1e-8)
