"""What the new-study form says of the counts per stratum: the default, and what the counts
typed estimate and cost (app/studies/allocation.py)."""

from collections.abc import Sequence
from dataclasses import dataclass

from app.studies.allocation import DEFAULT_CASES, design_effect, proportional, unsampled
from app.studies.design_traits import DesignTraits
from app.studies.draw_plan import figure_scope
from app.studies.pool import StratumRow


def default_counts(traits: DesignTraits, rows: Sequence[StratumRow],
                   total: int = DEFAULT_CASES) -> dict[str, int]:
    """The counts the form offers first: ``total`` in proportion to the pool where the
    figures are weighted to it (no stratum read past its share, so none costs reads), else
    the design's count per stratum."""
    if traits.estimates_pool:
        return proportional({r.key: r.pool for r in rows}, total)
    return {r.key: min(traits.default_per_stratum, r.pool) for r in rows}


@dataclass(frozen=True)
class AllocationOutlook:
    scope: str  # the one sentence on what the figures are
    design_effect: float | None  # None: the figures are the sample's, nothing is weighted
    unsampled: list[str]  # strata of the pool with no case asked

    @property
    def extra_reads(self) -> float:
        """The share of reads this allocation needs beyond a proportional one."""
        return (self.design_effect or 1.0) - 1.0


def allocation_outlook(traits: DesignTraits, rows: Sequence[StratumRow],
                       counts: dict[str, int]) -> AllocationOutlook | None:
    """None for a design that draws as it goes, or reads no judge."""
    if traits.draws_in_batches or not traits.compares_judge or traits.pairs:
        return None
    pool = {r.key: r.pool for r in rows}
    if not traits.estimates_pool:
        return AllocationOutlook(figure_scope(False), None, [])
    return AllocationOutlook(figure_scope(True), design_effect(pool, counts),
                             [r.label for r in rows if r.key in set(unsampled(pool, counts))])
