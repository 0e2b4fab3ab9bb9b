"""What an adaptive study's budget means in reads.

Its budget is a number of source image draws, but a drawn image brings every judged edit it
holds, and each edit is read by every reader (or by the study's readers per case). So "30
source images" was 117 cases for each reader on the demo: the form and the study page say
the reads a budget implies, not only the images.

Two figures, both honest about what they are: *about*, the budget's draws at the first
batch's probabilities, which favour images with more edits (their agreement residual spreads
more); later batches move with what is read, and an image drawn again reads nothing new, so
this is a guide, not a promise; and *at most*, the budget's largest images drawn once each,
which no run of the study can exceed.
"""

from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import ArrayLike


@dataclass(frozen=True)
class Budget:
    images: int  # the most source image draws
    pool_images: int
    edits_about: float
    edits_most: int
    readers: int  # readers in the study
    readers_per_case: int | None  # None: every reader reads every case

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
        return {"images": self.images, "pool_images": self.pool_images,
                "edits_about": round(self.edits_about, 2), "edits_most": self.edits_most}


def budget_of(sizes: ArrayLike, chances: ArrayLike, images: int, readers: int,
              readers_per_case: int | None) -> Budget:
    """``sizes``: the judged edits of each source image in the pool; ``chances``: each
    image's probability in one draw of the first batch."""
    size = np.asarray(sizes, dtype=float)
    ordered = np.sort(size)[::-1]
    per_draw = float(np.dot(size, np.asarray(chances, dtype=float))) if len(size) else 0.0
    return Budget(images=images, pool_images=len(size),
                  edits_about=min(images * per_draw, float(size.sum())),
                  edits_most=int(ordered[:images].sum()), readers=readers,
                  readers_per_case=readers_per_case)


def recorded_budget(recorded: dict[str, Any], readers: int,
                    readers_per_case: int | None) -> Budget | None:
    """The budget a study recorded at creation, with its readers now; None for a study made
    before budgets were recorded."""
    if not recorded:
        return None
    return Budget(int(recorded["images"]), int(recorded["pool_images"]),
                  float(recorded["edits_about"]), int(recorded["edits_most"]), readers,
                  readers_per_case)
