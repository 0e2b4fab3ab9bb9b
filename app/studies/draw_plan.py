"""What a study drawn as reading goes recorded about its draws, as its figures read it: the
unit it draws, its budget and batch, and the draws its anytime-valid sequence is tuned to
(the design that draws them is app/designs/adaptive/)."""

import json
from dataclasses import dataclass

from app.studies.models import Study
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
