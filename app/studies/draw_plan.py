"""What a study drawn as reading goes recorded about its draws, as its figures read it: the
unit it draws, its budget and batch, and the draws its anytime-valid sequence is tuned to
(the design that draws them is app/designs/adaptive/)."""

import json
from dataclasses import dataclass

from app.studies.models import Design, Study
from app.studies.targets import units_to_meet

UNIT = "edit"  # what a new adaptive study draws (its selection's "unit")


def draws_edits(study: Study) -> bool:
    """Whether the study's draws are edits (every adaptive study made since), not images."""
    return json.loads(study.selection).get("unit") == UNIT


@dataclass(frozen=True)
class DrawPlan:
    budget: int  # the most draws the study may make
    batch: int  # draws per batch


def draw_plan(study: Study) -> DrawPlan:
    """An adaptive study's budget and batch, in draws (of edits, or of images for a study
    made before edits were the unit)."""
    raw = json.loads(study.selection)
    return DrawPlan(int(raw.get("budget_draws", raw.get("budget_images", 0))),
                    int(raw.get("batch_draws", raw.get("batch_images", 1))))


def anticipated_agreement(study: Study) -> float | None:
    """The agreement the study's planner anticipated, if its form's planner was filled in."""
    planned = json.loads(study.plan) if study.plan else {}
    value = planned.get("agreement")
    return float(value) if isinstance(value, int | float) else None


def tuned_draws(study: Study, targets: dict[str, float]) -> int | None:
    """The draws the study's sequence tunes its bets to: those at which every target is
    expected to be met, at the planner's anticipated agreement (else the paper's figures),
    never past the budget; None without a target (the bets are tuned to the budget)."""
    needed = units_to_meet(targets, anticipated_agreement=anticipated_agreement(study))
    return None if needed is None else min(needed, max(1, draw_plan(study).budget))


CASE_UNIT = "case"  # a fixed study whose sequence takes each case, weighted to its pool


def case_weights(study: Study) -> dict[str, float] | None:
    """Each stratum's case weight to the pool, for a fixed study made to estimate the data
    set's share (app/studies/allocation.py); None for a study whose figures are its sample's."""
    raw = json.loads(study.selection)
    if raw.get("sequence_unit") != CASE_UNIT:
        return None
    return {str(k): float(v) for k, v in raw.get("weights", {}).items()}


def weighted_to_pool(study: Study) -> bool:
    """Whether the study's figures estimate its pool (weighted), not its sample: an adaptive
    study's always do, a fixed study's when it was made so."""
    return Design(study.design).draws_in_batches or case_weights(study) is not None


def figure_scope(weighted: bool, adaptive: bool = False) -> str:
    """One plain sentence on what the study's agreement figure is."""
    if adaptive:
        return ("Its figures are the data set's agreement: each read is weighted by the inverse "
                "of its draw's probability, so they estimate the whole pool the edits were drawn "
                "from, not the cases read.")
    if weighted:
        return ("Its figures are the data set's agreement: each stratum's cases are weighted to "
                "the stratum's share of the pool, so they estimate the whole pool, not this "
                "sample's mix of strata.")
    return ("Its figures are this sample's agreement: every case counts alike, so a stratum read "
            "more than its share of the pool counts more than it does in the data set.")


def scope_of(study: Study) -> str | None:
    """The sentence ``figure_scope`` says of this study; None where no agreement is figured
    (a design that reads no judge, or a practice)."""
    design = Design(study.design)
    if not design.traits.compares_judge or design.pairs or study.practice:
        return None
    return figure_scope(weighted_to_pool(study), adaptive=design.draws_in_batches)
