"""How much the source images cluster a study's agreement: the observed design effect and
the intraclass correlation it implies, for the planner of the next study.

The design effect is the variance of the agreement share with the cases clustered by source
image, over its variance were every case independent (Kish 1965): both from statsmodels' OLS
of the agreement indicator on a constant, once with cluster-robust standard errors by source
image and once with the ordinary ones. The ICC is the one that design effect implies by
Kish's formula, deff = 1 + (m - 1) ICC, with m the size-weighted mean number of cases per
source image (sum of m_i^2 over sum of m_i): exactly what the planner
(app/studies/planner.py) multiplies by, so a study planned with it expects the precision this
one got.
"""

from collections.abc import Hashable, Sequence
from dataclasses import asdict, dataclass
from typing import Any

import numpy as np
import statsmodels.api as sm

MIN_IMAGES = 10  # fewer clusters give no usable cluster-robust variance


@dataclass(frozen=True)
class Clustering:
    design_effect: float
    icc: float | None  # None when every image holds one case (m = 1): no ICC is implied
    edits_per_image: float  # size-weighted mean cases per source image
    cases: int
    images: int

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


def observed_clustering(agree: Sequence[bool], clusters: Sequence[Hashable]) -> Clustering | None:
    """None with fewer than MIN_IMAGES source images, or when the share is 0 or 1 (no
    variance to compare)."""
    y = np.asarray(agree, dtype=float)
    codes = np.unique(np.asarray([str(c) for c in clusters]), return_inverse=True)[1]
    images = int(codes.max()) + 1 if len(codes) else 0
    if images < MIN_IMAGES or y.min() == y.max():
        return None
    constant = np.ones((len(y), 1))
    plain = sm.OLS(y, constant).fit()
    robust = sm.OLS(y, constant).fit(cov_type="cluster", cov_kwds={"groups": codes})
    effect = float((robust.bse[0] / plain.bse[0]) ** 2)
    sizes = np.bincount(codes).astype(float)
    weighted = float((sizes**2).sum() / sizes.sum())
    icc = (effect - 1) / (weighted - 1) if weighted > 1 else None
    return Clustering(effect, icc, weighted, len(y), images)
