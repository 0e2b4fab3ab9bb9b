"""A standalone reader (an algorithm: the judge, a candidate) against a panel of readers, one
modality, readers and cases random: RJafroc's ``StCadVsRad`` single-treatment random-reader
random-case analysis (Chakraborty, "Observer Performance Methods for Diagnostic Imaging", 2017;
Hillis 2007 for the degrees of freedom).

The algorithm is a fixed reader: each panel reader j gives a difference psi_j = AUC_j -
AUC_algorithm, and the single-treatment OR analysis of those differences (their mean square
across readers, and their jackknife error variance and covariance across cases) gives the
interval of the panel's mean advantage over the algorithm.
"""

from dataclasses import dataclass

import numpy as np
from scipy import stats

from app.mrmc.auc import auc_and_jackknife
from app.mrmc.data import MrmcData, MrmcInputError
from app.mrmc.orh import ALPHA, NO_INTERVAL, jackknife_covariances, spread


@dataclass(frozen=True)
class VersusPanel:
    algorithm: str
    readers: tuple[str, ...]
    algorithm_auc: float
    reader_auc: list[float]
    panel_auc: float
    panel_ci: tuple[float, float]  # the panel's own single-modality OR interval
    # RJafroc's CIAvgRad: the panel's mean with the difference's half-width, as it prints it.
    panel_ci_rjafroc: tuple[float, float]
    difference: float  # the panel's mean AUC minus the algorithm's
    ci: tuple[float, float]
    t: float
    df: float
    p: float
    var_r: float  # RJafroc's varR: the mean square of the differences across readers
    var_error: float
    cov2: float
    # Readers fixed, cases random: these readers only; a z interval (Obuchowski & Rockette
    # 1995 with the readers' term dropped).
    fixed_se: float = float("nan")
    fixed_ci: tuple[float, float] = (float("nan"), float("nan"))
    fixed_p: float = float("nan")
    # The algorithm's own mean with its readers-random interval: it has one value per reader
    # when each is scored against a reference that leaves that reader out.
    algorithm_ci: tuple[float, float] = (float("nan"), float("nan"))

    def as_dict(self) -> dict[str, object]:
        return {"algorithm": self.algorithm, "readers": list(self.readers),
                "algorithm_auc": self.algorithm_auc, "reader_auc": self.reader_auc,
                "panel_auc": self.panel_auc, "panel_ci": list(self.panel_ci),
                "panel_ci_rjafroc": list(self.panel_ci_rjafroc),
                "difference": self.difference, "ci": list(self.ci), "t": self.t, "df": self.df,
                "p": self.p, "var_r": self.var_r, "var_error": self.var_error, "cov2": self.cov2,
                "fixed_readers": {"se": self.fixed_se, "ci": list(self.fixed_ci), "p": self.fixed_p}}


def _single(values: np.ndarray, jack: np.ndarray) -> tuple[float, float, float, float, float]:
    """The single-treatment OR interval of the readers' mean: (mean, se, df, ms_r, cov2), from
    values per reader and their leave-one-case-out values (readers x cases)."""
    readers = len(values)
    _, cov = jackknife_covariances(jack[None, :, :])
    ms_r = spread(values)
    term = ms_r + readers * max(cov.cov2, 0.0)
    # Readers who all agree exactly leave only the cases' term: Hillis's df is then unbounded.
    df = term ** 2 / (ms_r ** 2 / (readers - 1)) if ms_r > 0 else float("inf")
    return float(values.mean()), float(np.sqrt(term / readers)), df, ms_r, cov.cov2


def versus_panel(data: MrmcData, algorithm: str, modality: str | None = None) -> VersusPanel:
    """The algorithm (one of the data's readers) against every other reader, by AUC."""
    if algorithm not in data.readers:
        raise MrmcInputError(f"no reader {algorithm!r} to compare with the others")
    m = data.modalities.index(modality) if modality is not None else 0
    if modality is None and len(data.modalities) != 1:
        raise MrmcInputError("name the modality: the comparison is of one modality")
    panel = [i for i, name in enumerate(data.readers) if name != algorithm]
    if len(panel) < 2:
        raise MrmcInputError("a panel of two readers or more is needed: with one, its variance "
                             "across readers cannot be estimated")
    auc, jack = auc_and_jackknife(data.ratings[m:m + 1], data.truth)
    a = data.readers.index(algorithm)
    return compare(algorithm, tuple(data.readers[i] for i in panel), auc[0, panel], jack[0, panel],
                   np.full(len(panel), auc[0, a]), np.repeat(jack[0, a][None, :], len(panel), axis=0))


def compare(algorithm: str, readers: tuple[str, ...], values: np.ndarray, jack: np.ndarray,
            algorithm_values: np.ndarray, algorithm_jack: np.ndarray) -> VersusPanel:
    """Any figure of merit: each panel reader's value and its leave-one-case-out values
    (readers x cases, or x case clusters for a grouped jackknife), and the algorithm's value
    against the same reference as each reader (one per reader: with a leave-that-reader-out
    reference it differs from reader to reader) with its own leave-one-out values."""
    if len(readers) < 2:
        raise MrmcInputError("a panel of two readers or more is needed: with one, its variance "
                             "across readers cannot be estimated")
    psi = values - algorithm_values
    psi_jack = jack - algorithm_jack
    mean, se, df, ms_r, _ = _single(psi, psi_jack)
    _, cov = jackknife_covariances(psi_jack[None, :, :])
    half = float(stats.t.ppf(1 - ALPHA / 2, df)) * se
    if se <= 0:
        raise MrmcInputError("the readers' values and the algorithm's do not vary: no interval can be right")
    t = mean / se
    p_mean, p_se, p_df, _, _ = _single(values, jack)
    p_half = float(stats.t.ppf(1 - ALPHA / 2, p_df)) * p_se
    if np.ptp(algorithm_values) > 0 or np.ptp(algorithm_jack, axis=0).any():
        a_mean, a_se, a_df, _, _ = _single(algorithm_values, algorithm_jack)
        a_half = float(stats.t.ppf(1 - ALPHA / 2, a_df)) * a_se
    else:  # one value: the algorithm's own jackknife interval, readers play no part in it
        a_mean = float(algorithm_values[0])
        _, own = jackknife_covariances(algorithm_jack[None, :1, :])
        a_half = float(stats.norm.ppf(1 - ALPHA / 2)) * float(np.sqrt(own.var))
    r = len(readers)
    fixed_se = float(np.sqrt((cov.var + (r - 1) * max(cov.cov2, 0.0)) / r))
    z_half = float(stats.norm.ppf(1 - ALPHA / 2)) * fixed_se
    # Every reader (or the algorithm) the same on every resample: no interval of that mean
    # can be right, rather than one of zero width.
    panel_ci = (p_mean - p_half, p_mean + p_half) if p_half > 0 else NO_INTERVAL
    algorithm_ci = (a_mean - a_half, a_mean + a_half) if a_half > 0 else NO_INTERVAL
    return VersusPanel(algorithm, readers, float(algorithm_values.mean()),
                       [float(x) for x in values], p_mean, panel_ci,
                       (p_mean - half, p_mean + half), mean, (mean - half, mean + half), t, df,
                       float(2 * stats.t.sf(abs(t), df)), ms_r, cov.var, cov.cov2,
                       fixed_se, (mean - z_half, mean + z_half),
                       float(2 * stats.norm.sf(abs(mean / fixed_se))) if fixed_se > 0 else float("nan"),
                       algorithm_ci)
