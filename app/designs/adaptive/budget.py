"""What an adaptive study's budget means in reads.

Its budget is a number of draws, and each drawn edit is read by every reader (or by the
study's readers per case): 30 draws are about 90 reads with three readers, and the form and
the study page say so. A study made when whole source images were drawn brought every judged
edit of each drawn image, so "30 source images" was 117 cases for each reader on the demo.

Two figures, both honest about what they are: *about*, the budget's draws at the first
batch's probabilities (for image draws, these favour images with more edits); later batches
move with what is read, and a unit drawn again reads nothing new, so this is a guide, not a
promise; and *at most*, the budget's largest units drawn once each, which no run of the
study can exceed.
"""

from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import ArrayLike


@dataclass(frozen=True)
class Budget:
    draws: int  # the most draws
    pool_units: int  # what the draws are made from: the pool's edits (or source images)
    edits_about: float
    edits_most: int
    readers: int  # readers in the study
    readers_per_case: int | None  # None: every reader reads every case
    unit: str  # what one draw is: an edit, or a source image with all its edits

    @property
    def reads_per_case(self) -> int:
        return min(self.readers_per_case or self.readers, self.readers)

    @property
    def reads_about(self) -> float:
        return self.edits_about * self.reads_per_case

    @property
    def reads_most(self) -> int:
        return self.edits_most * self.reads_per_case

    @property
    def per_reader_about(self) -> float:
        return self.reads_about / self.readers if self.readers else 0.0

    def as_dict(self) -> dict[str, Any]:
        """What the study records at creation (its readers may change after)."""
        return {"draws": self.draws, "pool_units": self.pool_units, "unit": self.unit,
                "edits_about": round(self.edits_about, 2), "edits_most": self.edits_most}


def budget_of(sizes: ArrayLike, chances: ArrayLike, images: int, readers: int,
              readers_per_case: int | None, unit: str = "image") -> Budget:
    """``sizes``: the judged edits of each source image in the pool; ``chances``: each
    image's probability in one draw of the first batch."""
    size = np.asarray(sizes, dtype=float)
    ordered = np.sort(size)[::-1]
    per_draw = float(np.dot(size, np.asarray(chances, dtype=float))) if len(size) else 0.0
    return Budget(draws=images, pool_units=len(size),
                  edits_about=min(images * per_draw, float(size.sum())),
                  edits_most=int(ordered[:images].sum()), readers=readers,
                  readers_per_case=readers_per_case, unit=unit)


def recorded_budget(recorded: dict[str, Any], readers: int,
                    readers_per_case: int | None) -> Budget | None:
    """The budget a study recorded at creation, with its readers now; None for a study made
    before budgets were recorded."""
    if not recorded or "draws" not in recorded:
        return None
    return Budget(int(recorded["draws"]), int(recorded["pool_units"]),
                  float(recorded["edits_about"]), int(recorded["edits_most"]), readers,
                  readers_per_case, str(recorded["unit"]))


def edit_budget(pool_edits: int, draws: int, readers: int, readers_per_case: int | None) -> Budget:
    """A budget of ``draws`` edit draws: each reads one edit (a repeated draw reads nothing new,
    which in a pool of hundreds of edits is rare, so about as many edits as draws)."""
    return budget_of(np.ones(pool_edits), np.full(pool_edits, 1 / max(1, pool_edits)), draws,
                     readers, readers_per_case, unit="edit")
