"""Holm's adjusted p-values, held to statsmodels' multipletests and to Holm's own example."""

import numpy as np
import pytest
from statsmodels.stats.multitest import multipletests

from app.agreement.multiplicity import holm_adjusted


@pytest.mark.parametrize("seed", range(20))
def test_the_same_as_statsmodels(seed: int) -> None:
    rng = np.random.default_rng(seed)
    p = rng.beta(0.5, 2, size=int(rng.integers(1, 9)))
    if seed % 4 == 0:
        p[: len(p) // 2] = p[0]  # ties
    expected = multipletests(p, method="holm")[1]
    found = holm_adjusted({f"q{i}": float(v) for i, v in enumerate(p)})
    assert [found[f"q{i}"] for i in range(len(p))] == pytest.approx(list(expected), abs=1e-15)


def test_a_worked_example_and_untested_questions() -> None:
    # Four p-values 0.01, 0.04, 0.03, 0.005: sorted 0.005, 0.01, 0.03, 0.04 times 4, 3, 2, 1
    # gives 0.02, 0.03, 0.06, 0.04 -> monotone 0.02, 0.03, 0.06, 0.06.
    found = holm_adjusted({"a": 0.01, "b": 0.04, "c": 0.03, "d": 0.005, "e": None})
    assert found == pytest.approx({"a": 0.03, "b": 0.06, "c": 0.06, "d": 0.02, "e": None})
    assert holm_adjusted({"a": 0.6, "b": 0.7}) == {"a": 1.0, "b": 1.0}
