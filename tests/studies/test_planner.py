"""The study planner: agreement and kappa sample sizes with the clustering design effect."""

import numpy as np
import pytest
from statsmodels.stats.inter_rater import cohens_kappa

from app.studies.planner import PlanError, kappa_variance_unit, plan_cases, sample_edits_per_image


def test_the_issue_numbers_237_and_390() -> None:
    assert plan_cases(0.81, 0.05).cases == 237
    clustered = plan_cases(0.81, 0.05, edits_per_image=4, icc=0.215)
    assert clustered.independent_cases == 237 and clustered.cases == 390
    # Without an ICC each image counts once: the design effect is the edits per image.
    assert plan_cases(0.81, 0.05, edits_per_image=2).cases == 473  # ceil(236.48 x 2)


def test_the_plan_is_rounded_up_once() -> None:
    """236.48 independent cases at a design effect of 1.6 need ceil(378.4) = 379; rounding
    the 236.48 up first asked for 380."""
    plan = plan_cases(0.81, 0.05, edits_per_image=2, icc=0.6)
    assert plan.design_effect == pytest.approx(1.6)
    assert plan.independent_cases == 237 and plan.cases == 379


def test_kappa_variance_is_statsmodels_for_equal_margins() -> None:
    kappa, prevalence, n = 0.6, 0.7, 1000
    share = prevalence * (1 - prevalence)
    table = np.array([[prevalence**2 + kappa * share, (1 - kappa) * share],
                      [(1 - kappa) * share, (1 - prevalence) ** 2 + kappa * share]]) * n
    assert kappa_variance_unit(kappa, prevalence) == pytest.approx(cohens_kappa(table).std_kappa**2 * n)
    plan = plan_cases(0.81, 0.05, kappa=kappa, prevalence=prevalence)
    z = 1.959963984540054
    assert plan.kappa_cases == int(np.ceil(z**2 * kappa_variance_unit(kappa, prevalence) / 0.05**2))


@pytest.mark.parametrize("args, kwargs, message", [
    ((1.2, 0.05), {}, "agreement"), ((0.0, 0.05), {}, "agreement"), ((0.8, 0.0), {}, "half-width"),
    ((0.8, -0.1), {}, "half-width"), ((0.8, 0.05), {"icc": 1.5}, "ICC"),
    ((0.8, 0.05), {"edits_per_image": 0.5}, "edits"), ((0.8, 0.05), {"kappa": 0.5}, "both"),
    ((0.8, 0.05), {"kappa": 0.5, "prevalence": 1.0}, "prevalence"),
])
def test_impossible_values_say_why(args: tuple[float, float], kwargs: dict, message: str) -> None:
    with pytest.raises(PlanError, match=message):
        plan_cases(*args, **kwargs)


def test_the_sample_holds_fewer_edits_per_image_than_a_large_pool() -> None:
    assert sample_edits_per_image([1] * 500, 100) == 1.0  # one edit per image: no clustering
    assert sample_edits_per_image([4] * 25, 100) == 4.0  # the whole pool: every edit of each image
    # 100 of 4,000 edits: about one image in forty gives a second edit to the sample.
    assert sample_edits_per_image([4] * 1000, 100) == pytest.approx(1 - 0.025 + 0.025 * 4)
    assert sample_edits_per_image([], 100) == 1.0
