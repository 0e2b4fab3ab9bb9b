"""The Obuchowski-Rockette analysis of reader AUCs with Hillis's degrees of freedom, as the
University of Iowa's OR-DBM MRMC 2.51 reports it (trapezoidal AUC, jackknife covariances).

References: Obuchowski & Rockette (1995); Hillis, Obuchowski, Schartz & Berbaum (2005) for the
DBM equivalents; Hillis (2007) for ddf_H; Hillis, Berbaum & Metz (2008). Three analyses:
random readers and random cases (the population of readers and cases), fixed readers and
random cases (these readers only), random readers and fixed cases (these cases only).
"""

from dataclasses import asdict, dataclass, field
from itertools import combinations

import numpy as np
from scipy import stats

from app.mrmc.auc import auc_and_jackknife
from app.mrmc.data import MrmcData, MrmcInputError

ALPHA = 0.05
# What an interval is when its SE is 0: none can be right, rather than one of zero width.
NO_INTERVAL = (float("nan"), float("nan"))
ONE_READER = ("not computed: one reader; how readers differ needs two or more, so only the "
              "fixed-reader analysis (these readers, cases random) is given")
NO_ERROR_TERM = ("the modalities' AUCs differ by exactly the same amount for every reader and on "
                 "every case left out: the test's error term is zero, so it cannot be computed")


# Figures equal but for their last bits (the same area summed in another order) are equal:
# three readers with identical areas gave a spread of 1.85e-32, Hillis's df 9.6e54, and a
# size table built on a spread that is not there.
ROUNDING = 64 * float(np.finfo(float).eps)


def alike(values: np.ndarray) -> bool:
    """Every value the same, to within rounding."""
    return bool(np.ptp(values) <= ROUNDING * max(1.0, float(np.abs(values).max())))


def spread(values: np.ndarray) -> float:
    """The values' variance (ddof 1), 0 when they are alike."""
    return 0.0 if alike(values) else float(values.var(ddof=1))


@dataclass(frozen=True)
class Covariances:
    """The error variance and the three OR covariances, from the jackknife."""

    var: float  # Var(Error)
    cov1: float  # same reader, different modalities
    cov2: float  # different readers, same modality
    cov3: float  # different readers, different modalities


def jackknife_covariances(jack: np.ndarray) -> tuple[np.ndarray, Covariances]:
    """The (t*r) x (t*r) jackknife covariance matrix of the AUCs, and its OR averages."""
    t, r, k = jack.shape
    flat = jack.reshape(t * r, k)
    centred = flat - flat.mean(axis=1, keepdims=True)
    matrix = (k - 1) / k * centred @ centred.T
    mod = np.repeat(np.arange(t), r)
    rdr = np.tile(np.arange(r), t)
    same_m = mod[:, None] == mod[None, :]
    same_r = rdr[:, None] == rdr[None, :]

    def mean(mask: np.ndarray) -> float:
        return float(matrix[mask].mean()) if mask.any() else float("nan")

    return matrix, Covariances(mean(same_m & same_r), mean(~same_m & same_r),
                               mean(same_m & ~same_r), mean(~same_m & ~same_r))


@dataclass(frozen=True)
class Difference:
    a: str
    b: str
    difference: float
    se: float
    df: float | None  # None: a z interval
    statistic: float
    p: float
    ci: tuple[float, float]


@dataclass(frozen=True)
class Single:
    modality: str
    auc: float
    se: float
    df: float | None  # None: a z interval; inf: Hillis's df unbounded (readers' spread zero)
    ci: tuple[float, float]  # NO_INTERVAL (nan, nan) when SE is 0


@dataclass(frozen=True)
class Test:
    statistic: float  # F (random readers) or chi-square (fixed readers)
    ndf: float
    ddf: float | None
    p: float


@dataclass(frozen=True)
class Analysis:
    """One of the three analyses: what it generalises to, its test, differences and
    single-modality intervals."""

    name: str
    generalises: str
    test: Test | None  # None with one modality
    differences: list[Difference]
    single: list[Single]
    per_reader: list[dict[str, object]] = field(default_factory=list)


@dataclass(frozen=True)
class OrResult:
    modalities: tuple[str, ...]
    readers: tuple[str, ...]
    cases: int
    normal: int
    abnormal: int
    auc: np.ndarray  # modalities x readers
    ms_t: float
    ms_r: float
    ms_tr: float
    ms_r_single: list[float]
    covariances: Covariances
    single_covariances: list[tuple[float, float]]  # per modality: (Var(Error), Cov2)
    components: dict[str, float]
    dbm: dict[str, float]
    rrrc: Analysis
    frrc: Analysis
    rrfc: Analysis

    @property
    def one_reader(self) -> bool:
        """With one reader, nothing that treats readers as random can be computed: their
        spread needs two or more. The fixed-reader analysis stands."""
        return len(self.readers) < 2

    def as_dict(self) -> dict[str, object]:
        def analysis(a: Analysis) -> dict[str, object] | None:
            if self.one_reader and a.name != "frrc":
                return None
            found: dict[str, object] = {"name": a.name, "generalises": a.generalises,
                                        "differences": [_diff(d) for d in a.differences],
                                        "single": [_single(s) for s in a.single]}
            if a.test is not None:
                found |= {"f" if a.test.ddf is not None else "chi2": a.test.statistic,
                          "ndf": a.test.ndf, "ddf": a.test.ddf, "p": a.test.p}
            if a.per_reader:
                found["per_reader"] = a.per_reader
            return found

        return {
            "modalities": list(self.modalities), "readers": list(self.readers),
            "cases": self.cases, "normal": self.normal, "abnormal": self.abnormal,
            "auc": {m: dict(zip(self.readers, map(float, self.auc[i]), strict=True))
                    for i, m in enumerate(self.modalities)},
            "mean_auc": {m: float(self.auc[i].mean()) for i, m in enumerate(self.modalities)},
            "anova": {"ms_t": self.ms_t, "ms_r": self.ms_r, "ms_tr": self.ms_tr,
                      "ms_r_single": dict(zip(self.modalities, self.ms_r_single, strict=True))},
            "or": {**asdict(self.covariances), **self.components},
            "dbm": self.dbm,
            "rrrc": analysis(self.rrrc), "frrc": analysis(self.frrc), "rrfc": analysis(self.rrfc),
            **({"random_readers": ONE_READER} if self.one_reader else {}),
        }


def _diff(d: Difference) -> dict[str, object]:
    return {"a": d.a, "b": d.b, "difference": d.difference, "se": d.se, "df": d.df,
            "statistic": d.statistic, "p": d.p, "ci": list(d.ci)}


def _single(s: Single) -> dict[str, object]:
    return {"modality": s.modality, "auc": s.auc, "se": s.se, "ddf": s.df, "ci": list(s.ci)}


def _t_interval(value: float, se: float, df: float) -> tuple[tuple[float, float], float, float]:
    if not se > 0:  # nothing varies (cases fixed, every reader's AUC the same): no interval
        return NO_INTERVAL, float("nan"), float("nan")
    half = float(stats.t.ppf(1 - ALPHA / 2, df)) * se
    statistic = value / se if se > 0 else float("nan")
    p = float(2 * stats.t.sf(abs(statistic), df)) if se > 0 else float("nan")
    return (value - half, value + half), statistic, p


def _z_interval(value: float, se: float) -> tuple[tuple[float, float], float, float]:
    if not se > 0:
        return NO_INTERVAL, float("nan"), float("nan")
    half = float(stats.norm.ppf(1 - ALPHA / 2)) * se
    statistic = value / se if se > 0 else float("nan")
    p = float(2 * stats.norm.sf(abs(statistic))) if se > 0 else float("nan")
    return (value - half, value + half), statistic, p


def analyse(data: MrmcData) -> OrResult:
    auc, jack = auc_and_jackknife(data.ratings, data.truth)
    t, r = auc.shape
    _, cov = jackknife_covariances(jack)
    grand = auc.mean()
    by_t, by_r = auc.mean(axis=1), auc.mean(axis=0)
    ms_t = r * spread(by_t) if t > 1 else float("nan")
    ms_r = t * spread(by_r) if r > 1 else float("nan")
    resid = auc - by_t[:, None] - by_r[None, :] + grand
    if t > 1 and r > 1:
        ms_tr = 0.0 if alike(resid) else float((resid ** 2).sum()) / ((t - 1) * (r - 1))
    else:
        ms_tr = float("nan")
    ms_r_single = [spread(auc[i]) if r > 1 else float("nan") for i in range(t)]
    single_cov = [jackknife_covariances(jack[i:i + 1])[1] for i in range(t)]
    if cov.var <= 0 or min(c.var for c in single_cov) <= 0:
        raise MrmcInputError("no reader's AUC moves when any one case is left out (a constant "
                             "or perfectly separating rating): the case variance is zero, so "
                             "no interval or test can be computed")
    components = {
        "var_r": (ms_r - ms_tr) / t - cov.cov1 + cov.cov3 if t > 1 else float("nan"),
        "var_tr": ms_tr - cov.var + cov.cov1 + cov.cov2 - cov.cov3 if t > 1 else float("nan"),
        "corr1": cov.cov1 / cov.var, "corr2": cov.cov2 / cov.var, "corr3": cov.cov3 / cov.var}
    k = len(data.cases)
    dbm = {"var_r": components["var_r"], "var_c": k * cov.cov3, "var_tr": components["var_tr"],
           "var_tc": k * (cov.cov2 - cov.cov3), "var_rc": k * (cov.cov1 - cov.cov3),
           "var_trc_error": k * (cov.var - cov.cov1 - cov.cov2 + cov.cov3)}
    names = data.modalities
    pairs = list(combinations(range(t), 2))
    return OrResult(
        names, data.readers, k, data.normal, data.abnormal, auc, ms_t, ms_r, ms_tr, ms_r_single,
        cov, [(c.var, c.cov2) for c in single_cov], components, dbm,
        _rrrc(names, by_t, pairs, r, ms_t, ms_tr, cov, auc, ms_r_single, single_cov)
        if r > 1 else Analysis("rrrc", ONE_READER, None, [], []),
        _frrc(names, by_t, pairs, r, ms_t, cov, auc, jack, single_cov),
        _rrfc(names, by_t, pairs, r, ms_t, ms_tr, auc, ms_r_single)
        if r > 1 else Analysis("rrfc", ONE_READER, None, [], []))


def _f_test(names: tuple[str, ...], by_t: np.ndarray, pairs: list[tuple[int, int]], r: int,
            ms_t: float, denominator: float, ddf: float) -> tuple[Test, list[Difference]]:
    """The F test of equal modalities over ``denominator`` (the error term) with ``ddf``, and
    each pairwise difference with its t interval (SE sqrt(2/r x error term))."""
    t = len(names)
    if denominator <= 0:
        raise MrmcInputError(NO_ERROR_TERM)
    f = ms_t / denominator
    se = float(np.sqrt(2 / r * denominator))
    differences = []
    for a, b in pairs:
        value = float(by_t[a] - by_t[b])
        ci, statistic, p = _t_interval(value, se, ddf)
        differences.append(Difference(names[a], names[b], value, se, ddf, statistic, p, ci))
    return Test(f, t - 1, ddf, float(stats.f.sf(f, t - 1, ddf))), differences


def _rrrc(names: tuple[str, ...], by_t: np.ndarray, pairs: list[tuple[int, int]], r: int,
          ms_t: float, ms_tr: float, cov: Covariances, auc: np.ndarray, ms_r_single: list[float],
          single_cov: list[Covariances]) -> Analysis:
    t = len(names)
    test: Test | None = None
    differences: list[Difference] = []
    if t > 1:
        denominator = ms_tr + r * max(cov.cov2 - cov.cov3, 0.0)
        # Readers who differ between modalities by exactly the same amount: Hillis's df is
        # then unbounded.
        ddf = denominator ** 2 / (ms_tr ** 2 / ((t - 1) * (r - 1))) if ms_tr > 0 else float("inf")
        test, differences = _f_test(names, by_t, pairs, r, ms_t, denominator, ddf)
    single = []
    for i in range(t):
        term = ms_r_single[i] + r * max(single_cov[i].cov2, 0.0)
        df = term ** 2 / (ms_r_single[i] ** 2 / (r - 1)) if ms_r_single[i] > 0 else float("inf")
        se = float(np.sqrt(term / r))
        ci, _, _ = _t_interval(float(by_t[i]), se, df)
        single.append(Single(names[i], float(by_t[i]), se, df, ci))
    return Analysis("rrrc", "the population of readers and of cases", test, differences, single)


def _others(r: int, covariance: float) -> float:
    """(r - 1) max(covariance, 0): what the other readers add; none with one reader, whose
    covariance with the others is undefined (NaN) rather than zero."""
    return (r - 1) * max(covariance, 0.0) if r > 1 else 0.0


def _frrc(names: tuple[str, ...], by_t: np.ndarray, pairs: list[tuple[int, int]], r: int,
          ms_t: float, cov: Covariances, auc: np.ndarray, jack: np.ndarray,
          single_cov: list[Covariances]) -> Analysis:
    t = len(names)
    test = None
    differences = []
    if t > 1:
        denominator = cov.var - cov.cov1 + _others(r, cov.cov2 - cov.cov3)
        if denominator <= 0:
            raise MrmcInputError(NO_ERROR_TERM)
        chi2 = (t - 1) * ms_t / denominator
        test = Test(chi2, t - 1, None, float(stats.chi2.sf(chi2, t - 1)))
        se = float(np.sqrt(2 / r * denominator))
        for a, b in pairs:
            value = float(by_t[a] - by_t[b])
            ci, statistic, p = _z_interval(value, se)
            differences.append(Difference(names[a], names[b], value, se, None, statistic, p, ci))
    single = []
    for i in range(t):
        se = float(np.sqrt((single_cov[i].var + _others(r, single_cov[i].cov2)) / r))
        ci, _, _ = _z_interval(float(by_t[i]), se)
        single.append(Single(names[i], float(by_t[i]), se, None, ci))
    per_reader: list[dict[str, object]] = []
    for j in range(jack.shape[1]):
        _, own = jackknife_covariances(jack[:, j:j + 1])
        per_reader.append({"reader_index": j, "var_error": own.var, "cov1": own.cov1})
        if t > 1:
            se = float(np.sqrt(2 * (own.var - own.cov1)))
            for a, b in pairs:
                value = float(auc[a, j] - auc[b, j])
                ci, statistic, p = _z_interval(value, se)
                per_reader[-1].setdefault("differences", []).append(  # type: ignore[attr-defined]
                    {"a": names[a], "b": names[b], "difference": value, "se": se, "z": statistic,
                     "p": p, "ci": list(ci)})
    return Analysis("frrc", "these readers, and the population of cases", test, differences,
                    single, per_reader)


def _rrfc(names: tuple[str, ...], by_t: np.ndarray, pairs: list[tuple[int, int]], r: int,
          ms_t: float, ms_tr: float, auc: np.ndarray, ms_r_single: list[float]) -> Analysis:
    t = len(names)
    test: Test | None = None
    differences: list[Difference] = []
    if t > 1:
        test, differences = _f_test(names, by_t, pairs, r, ms_t, ms_tr, (t - 1) * (r - 1))
    single = []
    for i in range(t):
        se = float(np.sqrt(ms_r_single[i] / r))
        ci, _, _ = _t_interval(float(by_t[i]), se, r - 1)
        single.append(Single(names[i], float(by_t[i]), se, r - 1, ci))
    return Analysis("rrfc", "the population of readers, and these cases", test, differences, single)
