"""An adaptive study's budget in reads: 30 source images was 117 cases for each reader on the
demo, while the form and the study page spoke of 30. Its draws are edits now, each read by
every reader (or the readers per case)."""

import numpy as np
import pytest
from sqlalchemy.engine import Engine
from sqlmodel import Session

from app.cases.filters import CaseFilter
from app.designs.adaptive.batches import planned_budget, pool_images
from app.designs.adaptive.budget import budget_of, recorded_budget
from app.designs.adaptive.draws import EditPool
from app.designs.adaptive.edits import draw_edits, edit_probabilities


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


def test_a_budget_of_edit_draws_reads_about_as_many_edits_on_the_demo(demo_engine: Engine) -> None:
    """An adaptive study draws edits: 30 draws read at most 30 edits, and about 30 (a repeat
    draw reads nothing new), as the first batch's draws show."""
    with Session(demo_engine) as session:
        budget = planned_budget(session, CaseFilter(), 30, readers=3, readers_per_case=None)
        edits = EditPool.of(pool_images(session, CaseFilter()))
    assert budget is not None
    assert budget.edits_most == 30 and budget.edits_about == pytest.approx(30)
    assert budget.reads_about == pytest.approx(90) and budget.per_reader_about == pytest.approx(30)
    q = edit_probabilities(edits.features, np.zeros(0, np.int64), np.zeros(0))
    distinct = [len(set(draw_edits(q, 30, seed, 0))) for seed in range(200)]
    assert 0.9 * budget.edits_about <= np.mean(distinct) <= budget.edits_about
