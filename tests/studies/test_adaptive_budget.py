"""An adaptive study's budget in reads: 30 source images was 117 cases for each reader on the
demo, while the form and the study page spoke of 30."""

import numpy as np
import pytest
from sqlalchemy.engine import Engine
from sqlmodel import Session

from app.cases.filters import CaseFilter
from app.studies.adaptive import Pool, probabilities
from app.studies.adaptive_batches import planned_budget, pool_images
from app.studies.adaptive_budget import budget_of, recorded_budget


def test_the_reads_are_the_drawn_edits_times_the_readers_of_each() -> None:
    sizes = [1, 2, 3, 6]
    uniform = [0.25] * 4
    budget = budget_of(sizes, uniform, images=2, readers=3, readers_per_case=None)
    assert budget.edits_about == pytest.approx(2 * 3.0)  # two draws at the mean size
    assert budget.edits_most == 9  # the two largest images
    assert budget.reads_about == pytest.approx(18) and budget.reads_most == 27
    assert budget.per_reader_about == pytest.approx(6)
    overlapping = budget_of(sizes, uniform, images=2, readers=3, readers_per_case=2)
    assert overlapping.reads_about == pytest.approx(12) and overlapping.per_reader_about == pytest.approx(4)
    # Draws that favour the large image read more; a budget past the pool reads the pool.
    favoured = budget_of(sizes, [0.1, 0.1, 0.1, 0.7], images=2, readers=1, readers_per_case=None)
    assert favoured.edits_about == pytest.approx(2 * (0.1 * 6 + 0.7 * 6))
    whole = budget_of(sizes, uniform, images=50, readers=1, readers_per_case=None)
    assert whole.edits_about == whole.edits_most == 12
    again = recorded_budget(budget.as_dict(), readers=4, readers_per_case=None)
    assert again is not None and again.reads_about == pytest.approx(24)
    assert recorded_budget({}, readers=4, readers_per_case=None) is None


def test_the_first_batch_draw_on_the_demo_reads_what_the_budget_says(demo_engine: Engine) -> None:
    """The 'about' figure is the first batch's expected edits: checked by drawing it."""
    with Session(demo_engine) as session:
        budget = planned_budget(session, CaseFilter(), 30, readers=3, readers_per_case=None)
        pool = Pool(pool_images(session, CaseFilter()))
    assert budget is not None
    q = probabilities(pool, [])
    rng = np.random.default_rng(7)
    drawn = [pool.sizes[rng.choice(len(pool), size=30, p=q)].sum() for _ in range(400)]
    assert budget.edits_about == pytest.approx(float(np.mean(drawn)), rel=0.05)
    assert budget.edits_about > 30  # more edits than images: what the form failed to say
    assert budget.edits_most >= max(drawn)
