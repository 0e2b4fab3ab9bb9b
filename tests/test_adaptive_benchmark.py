"""benchmarks/adaptive_design.py measures the app's designs, not copies of them: its default
is the form's, and a seeded simulation on a small pool holds the intervals' coverage (the
benchmark itself reports the reads)."""

import numpy as np

from app.studies.design_traits import default_design
from app.studies.forms import StudyForm
from app.studies.targets import PLANNED_AGREEMENT, PLANNED_HALF_WIDTH, units_to_meet
from benchmarks import adaptive_design as bench


def test_the_benchmarks_default_is_the_forms() -> None:
    """The design, its counts' rule, the batch and the bets' tuning /studies/new starts from."""
    assert default_design() == bench.DEFAULT and bench.DEFAULT.traits.estimates_pool
    assert bench.BATCHES[0] == StudyForm.model_fields["batch_images"].default
    planned = units_to_meet({"agreement": PLANNED_HALF_WIDTH},
                            anticipated_agreement=PLANNED_AGREEMENT)
    assert (PLANNED_HALF_WIDTH, planned) == (bench.TARGET, bench.PLANNED)


def test_every_design_holds_its_coverage_at_every_look_on_a_small_pool() -> None:
    """25 source images (about 90 edits), three pools, 40 studies each: the share of studies
    whose interval held the pool's agreement at every look over the whole budget."""
    model = next(m for m in bench.MODELS if m.images == 25)
    held: dict[str, list[bool]] = {"default": [], "uniform": [], "adaptive": []}
    for pool_seed in range(3):
        data = bench.synthetic(model, 500 + pool_seed)
        rng = np.random.default_rng(pool_seed)
        for _ in range(40):
            seed = int(rng.integers(2**31))
            held["default"].append(bench.default_study(data, seed, budget=300).held_budget)
            held["uniform"].append(bench.drawn_study(data, seed, 10, False, budget=300).held_budget)
            held["adaptive"].append(bench.drawn_study(data, seed, 10, True, budget=300).held_budget)
    coverage = {design: float(np.mean(found)) for design, found in held.items()}
    assert all(c >= 0.93 for c in coverage.values()), coverage
