"""The observed design effect and the ICC it implies, against Kish's design effect."""

import numpy as np
import pytest

from app.agreement.clustering import observed_clustering


def test_independent_cases_have_a_design_effect_near_one() -> None:
    rng = np.random.default_rng(1)
    agree = rng.random(2000) < 0.8
    found = observed_clustering(agree, np.arange(2000) // 4)
    assert found is not None
    assert found.design_effect == pytest.approx(1.0, abs=0.12)
    assert found.edits_per_image == 4.0 and found.images == 500


def test_images_whose_cases_all_agree_alike_have_kish_design_effect_m() -> None:
    """ICC 1: every case of an image is the same, so deff = 1 + (m - 1) = m (Kish), up to
    statsmodels' small-sample factors G / (G - 1) and (N - 1) / N."""
    rng = np.random.default_rng(2)
    per_image = rng.random(300) < 0.8
    agree = np.repeat(per_image, 5)
    found = observed_clustering(agree, np.repeat(np.arange(300), 5))
    assert found is not None
    assert found.design_effect == pytest.approx(5 * 300 / 299 * 1499 / 1500, rel=1e-9)
    assert found.icc == pytest.approx(1.0, abs=0.01)


def test_a_latent_icc_shows_in_the_implied_icc() -> None:
    """Binary cases sharing an image effect: the implied ICC is the correlation of two cases of
    one image (the ANOVA ICC of Fleiss 1981), computed here from the model itself."""
    rng = np.random.default_rng(3)
    p_image = rng.beta(4, 1, 4000)  # mean .8; ICC of the indicators = Var(p) / (.8 * .2)
    agree = rng.random((4000, 3)) < p_image[:, None]
    found = observed_clustering(agree.ravel(), np.repeat(np.arange(4000), 3))
    expected = p_image.var() / (p_image.mean() * (1 - p_image.mean()))
    assert found is not None and found.icc == pytest.approx(expected, abs=0.03)


@pytest.mark.parametrize(("agree", "clusters"), [
    ([True, False] * 5, list(range(5)) * 2),  # 5 images only
    ([True] * 40, list(range(40))),  # no variance
])
def test_too_little_gives_nothing(agree, clusters) -> None:  # type: ignore[no-untyped-def]
    assert observed_clustering(agree, clusters) is None
