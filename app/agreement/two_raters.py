"""Two raters on one pass / fail question: every figure of their 2x2 table, with intervals.

Rater A (the judge, say) against rater B (the reference). Each case where both answered is one
cell of the table: [A pass B pass, A pass B fail, A fail B pass, A fail B fail]. Every figure
is a function of the four cell counts, written over any stack of tables, so the cluster
bootstrap (app/agreement/resample.py) computes it on all resamples at once.

Cohen's kappa equals statsmodels' ``cohens_kappa`` and irrCAC's published values (tests);
PABAK is Byrt, Bishop and Carlin's (1993), with their prevalence and bias indices; AC1 is
Gwet's (2008). McNemar's exact test (statsmodels) ignores clustering, so beside it stands the
clustered McNemar test of Durkalski et al. (2003), which reduces to the uncorrected
McNemar statistic when every source image holds one case; that one is Holm-adjusted.
"""

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from scipy import stats
from statsmodels.stats.contingency_tables import mcnemar

from app.agreement.resample import ClusterBootstrap, Figure, Share, Statistic
from app.agreement.stats import Table2x2, Vote

PP, PF, FP, FF = range(4)


_CODE = {True: 0, False: 1, None: -1}  # pass, fail, no answer


def cells(a: Sequence[Vote], b: Sequence[Vote]) -> np.ndarray:
    """Cases x 4: a one-hot row for each case both raters answered, zeros otherwise."""
    if len(a) != len(b):
        raise ValueError("both raters must rate the same cases")
    x = np.fromiter((_CODE[v] for v in a), dtype=np.int64, count=len(a))
    y = np.fromiter((_CODE[v] for v in b), dtype=np.int64, count=len(b))
    both = np.flatnonzero((x >= 0) & (y >= 0))
    out = np.zeros((len(a), 4))
    out[both, 2 * x[both] + y[both]] = 1  # PP, PF, FP, FF
    return out


def _n(t: np.ndarray) -> np.ndarray:
    # The four cells added in turn, not t.sum(axis=-1): a reduction over an axis of four is a
    # tenth of the speed over thousands of resamples. The counts are whole numbers, so the
    # order of adding cannot change a bit.
    return t[..., PP] + t[..., PF] + t[..., FP] + t[..., FF]


def ratio(top: np.ndarray, bottom: np.ndarray) -> np.ndarray:
    """top / bottom where bottom > 0, NaN (undefined) elsewhere, for any stack of sums."""
    with np.errstate(all="ignore"):
        return np.where(bottom > 0, top / np.where(bottom > 0, bottom, 1), np.nan)


def agreement(t: np.ndarray) -> np.ndarray:
    return ratio(t[..., PP] + t[..., FF], _n(t))


def kappa(t: np.ndarray) -> np.ndarray:
    """Cohen's kappa; undefined where either rater used one category only. Then the formula
    gives 0 (or 0/0), which would read as "agreement no better than chance" about a rater
    who made no distinction at all."""
    n = _n(t)
    a_pass = ratio(t[..., PP] + t[..., PF], n)
    b_pass = ratio(t[..., PP] + t[..., FP], n)
    chance = a_pass * b_pass + (1 - a_pass) * (1 - b_pass)
    constant = (a_pass <= 0) | (a_pass >= 1) | (b_pass <= 0) | (b_pass >= 1)
    with np.errstate(all="ignore"):
        return np.where(constant | np.isclose(chance, 1.0), np.nan,
                        (agreement(t) - chance) / (1 - chance))


def pabak(t: np.ndarray) -> np.ndarray:
    return 2 * agreement(t) - 1


def ac1(t: np.ndarray) -> np.ndarray:
    """Gwet's AC1 for two raters and two categories."""
    n = _n(t)
    share = ratio(2 * t[..., PP] + t[..., PF] + t[..., FP], 2 * n)
    chance = 2 * share * (1 - share)
    with np.errstate(all="ignore"):
        return np.where(np.isclose(chance, 1.0), np.nan, (agreement(t) - chance) / (1 - chance))


FIGURES: dict[str, Statistic] = {
    "agreement": agreement,
    "kappa": kappa,
    "pabak": pabak,
    "ac1": ac1,
    "a_pass_rate": lambda t: ratio(t[..., PP] + t[..., PF], _n(t)),
    "b_pass_rate": lambda t: ratio(t[..., PP] + t[..., FP], _n(t)),
    # A fails what B passes: for the judge against the reference, the judge is "too strict".
    "a_stricter": lambda t: ratio(t[..., FP], _n(t)),
    "a_more_lenient": lambda t: ratio(t[..., PF], _n(t)),
    # Conditional shares rest on the cases of their condition (their n and source images).
    "a_stricter_given_b_pass": Share(lambda t: t[..., FP], lambda t: t[..., PP] + t[..., FP]),
    "a_more_lenient_given_b_fail": Share(lambda t: t[..., PF], lambda t: t[..., PF] + t[..., FF]),
    # Given A's verdict: of what A passed, the share B fails (the figure an accepted-only
    # study can estimate), and of what A failed, the share B passes.
    "b_fail_given_a_pass": Share(lambda t: t[..., PF], lambda t: t[..., PP] + t[..., PF]),
    "b_pass_given_a_fail": Share(lambda t: t[..., FP], lambda t: t[..., FP] + t[..., FF]),
}
SIGNED = {"kappa", "pabak", "ac1"}
BOUNDS = {name: ((-1.0, 1.0) if name in SIGNED else (0.0, 1.0)) for name in FIGURES}
# Byrt et al. (1993): how far the table leans to "pass", and how far the raters' pass rates
# differ. They are descriptive indices that explain a kappa, shown without an interval: the
# bias index's bootstrap interval covered only 92-93 % in benchmarks/coverage.py (a near-zero
# difference of two small shares), and the clustered McNemar test is the inference on bias.
INDICES: dict[str, Statistic] = {
    "prevalence_index": lambda t: ratio(t[..., PP] - t[..., FF], _n(t)),
    "bias_index": lambda t: ratio(t[..., PF] - t[..., FP], _n(t)),
}


@dataclass(frozen=True)
class PairAgreement:
    table: Table2x2
    left_out: int  # cases where either answer was missing or "cannot assess"
    figures: dict[str, Figure]
    mcnemar_exact_p: float | None
    mcnemar_clustered_p: float | None

    def as_dict(self) -> dict[str, object]:
        return {"table": self.table.as_dict(), "n": self.table.n, "left_out": self.left_out,
                **{name: f.as_dict() for name, f in self.figures.items()},
                "mcnemar_exact_p": self.mcnemar_exact_p,
                "mcnemar_clustered_p": self.mcnemar_clustered_p}


def clustered_mcnemar(discordant: np.ndarray) -> float | None:
    """Durkalski et al. (2003): per cluster, (A pass B fail) - (A fail B pass); the statistic
    (sum of differences)^2 / sum of squared differences is chi-square with one degree of freedom."""
    squares = float((discordant**2).sum())
    if squares == 0:
        return None
    statistic = float(discordant.sum()) ** 2 / squares
    return float(stats.chi2.sf(statistic, df=1))


# What a subgroup (one disease) reports: every figure of ~23 diseases x 5 questions took a
# third of a report's time, and the rest are the whole slice's business.
SUBGROUP_FIGURES = ("agreement", "kappa", "a_stricter", "a_more_lenient")


def compare(a: Sequence[Vote], b: Sequence[Vote], boot: ClusterBootstrap,
            names: Sequence[str] = tuple(FIGURES)) -> PairAgreement:
    """The figures ``names`` (all by default) of A against B over the cases ``boot`` was built
    on (same order)."""
    return compare_many([(a, b)], boot, names)[0]


def compare_many(pairs: Sequence[tuple[Sequence[Vote], Sequence[Vote]]], boot: ClusterBootstrap,
                 names: Sequence[str] = tuple(FIGURES)) -> list[PairAgreement]:
    """``compare`` of several pairs of raters over the same cases, from one resampling."""
    if any(len(a) != len(boot.index) or len(b) != len(boot.index) for a, b in pairs):
        raise ValueError("both raters must rate the bootstrap's cases, in its order")
    if not pairs:
        return []
    one_hot = np.stack([cells(a, b) for a, b in pairs], axis=1)  # cases x pairs x 4
    counts = one_hot.sum(axis=0).astype(int)
    tables = [Table2x2(*(int(c) for c in row)) for row in counts]
    figures = boot.figures_of_many(one_hot, {name: FIGURES[name] for name in names},
                                   ns=[t.n for t in tables], bounds=BOUNDS)
    per_cluster = boot.cluster_sums(one_hot.reshape(len(one_hot), len(pairs) * 4)).reshape(
        boot.k, len(pairs), 4)
    return [_pair(table, len(pairs[p][0]) - table.n, figures[p], per_cluster[:, p])
            for p, table in enumerate(tables)]


def _pair(table: Table2x2, left_out: int, figures: dict[str, Figure],
          per_cluster: np.ndarray) -> PairAgreement:
    counts = np.array(table.array()).ravel()
    # The source images holding a compared case, as every other figure of the pair counts them
    # (not every image of the slice: 51 against 50 for the same 94 cases).
    clusters = int(per_cluster.any(axis=1).sum())
    for name, index in INDICES.items():
        with np.errstate(all="ignore"):
            value = float(index(counts[None, :].astype(float))[0])
        figures[name] = Figure(value if np.isfinite(value) else None, n=table.n, clusters=clusters,
                               warning="descriptive index: no interval")
    discordant = table.a_pass_b_fail + table.a_fail_b_pass
    exact = float(mcnemar(table.array(), exact=True).pvalue) if discordant else None
    clustered = clustered_mcnemar(per_cluster[:, PF] - per_cluster[:, FP]) if discordant else None
    return PairAgreement(table, left_out, figures, exact, clustered)
