"""The Rogan-Gladen correction of the judge's pass rate (Rogan and Gladen 1978, "Estimating
prevalence from the results of a screening test", Am J Epidemiol 107:71), as ``judgy`` applies
it to an LLM judge:

    true rate = (judge's rate on the data set + specificity - 1) / (sensitivity + specificity - 1)

with the judge's sensitivity (passes among the edits the readers passed) and specificity
(fails among those they failed) from the study's sample. Unlike ``judgy``, the sample is
weighted (a stratified study reads the judge's failures more often than the data set holds
them) and its interval is the cluster bootstrap over source images that every study figure
uses; the data set's rate is a count over every edit, not resampled. The tests hold the
point estimate to ``judgy``'s.
"""

from collections.abc import Hashable, Sequence

import numpy as np

from app.agreement.resample import ClusterBootstrap, Figure


def rogan_gladen(reader: Sequence[bool], judge: Sequence[bool], judge_rate: float, *,
                 weights: Sequence[float] | None = None,
                 clusters: Sequence[Hashable] | None = None) -> Figure:
    """The corrected rate with its interval; value None where the judge is no better than
    chance on the sample (sensitivity + specificity <= 1) or the readers used one answer."""
    y = np.asarray(reader, dtype=float)
    j = np.asarray(judge, dtype=float)
    w = np.ones(len(y)) if weights is None else np.asarray(weights, dtype=float)
    features = np.column_stack([w * y * j, w * y, w * (1 - y) * (1 - j), w * (1 - y)])

    def corrected(sums: np.ndarray) -> np.ndarray:
        with np.errstate(all="ignore"):
            sensitivity = sums[:, 0] / sums[:, 1]
            specificity = sums[:, 2] / sums[:, 3]
            denominator = sensitivity + specificity - 1
            value = (judge_rate + specificity - 1) / denominator
        return np.where(denominator > 0, np.clip(value, 0.0, 1.0), np.nan)

    boot = ClusterBootstrap(list(clusters) if clusters is not None else list(range(len(y))))
    return boot.figure(features, corrected, n=len(y), bounds=(0.0, 1.0))
