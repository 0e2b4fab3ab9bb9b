"""The data set's acceptable rate with an interval valid at every look."""

import numpy as np
import pytest
from sqlalchemy.engine import Engine
from sqlmodel import Session

from app.confidence_sequence import ratio_sequence
from app.quality.anytime import anytime_rate
from app.quality.report import quality_report
from tests.quality.conftest import read_study, validation_study


def test_images_in_the_order_read_weighted_and_scaled_by_the_largest_image() -> None:
    consensus = np.array([1.0, 0.0, 1.0, np.nan, 1.0, 1.0])
    inclusion = np.array([0.5, 0.5, 0.25, 0.25, 0.0, 0.5])
    drawn = np.array([True, True, True, True, False, False])
    clusters = np.array([0, 0, 1, 1, 2, 3])
    answered = np.array([20.0, 10.0, 5.0, np.nan, 1.0, np.nan])
    found = anytime_rate(consensus, inclusion, drawn, clusters, answered, np.arange(6))
    assert found is not None
    # Image 1 (read at 5) before image 0 (read at 20); image 2's edit is outside the sampled
    # strata; image 3 is unread. The largest image weighs 2 + 2 (image 0) or 4 + 4 (image 1).
    sequence = ratio_sequence(np.array([4.0, 2.0]) / 8, np.array([4.0, 4.0]) / 8, planned=2)
    assert (found.low, found.high) == (sequence.low[-1], sequence.high[-1])
    assert found.value == pytest.approx(6 / 8) and (found.edits, found.images) == (3, 2)


def test_quality_shows_it_under_each_population(demo_engine: Engine) -> None:
    study = validation_study(demo_engine)
    read_study(demo_engine, study)
    with Session(demo_engine) as session:
        report = quality_report(session, study.id)
    for population in report.populations:
        rate = population.anytime
        assert rate is not None and 0 <= rate.low <= rate.value <= rate.high <= 1
        fixed = population.parts[0].rows["overall"].readers
        assert fixed is not None and rate.high - rate.low > fixed.high - fixed.low
