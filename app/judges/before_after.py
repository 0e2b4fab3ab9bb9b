"""Before and after a regeneration, on the same source images: the share of edits the readers
accept in the study that found them wanting, the share they accept of the regenerated edits
in the follow-up, and the difference, paired by task and resampled by source image together."""

from collections.abc import Hashable, Sequence
from dataclasses import dataclass

import numpy as np

from app.agreement.resample import ClusterBootstrap, Figure
from app.agreement.two_raters import ratio


@dataclass(frozen=True)
class BeforeAfter:
    before: Figure  # accepted by the readers' consensus, before
    after: Figure
    difference: Figure  # after minus before, paired by task
    tasks: int  # tasks settled in both studies


def before_after(clusters: Sequence[Hashable], before: Sequence[bool],
                 after: Sequence[bool]) -> BeforeAfter:
    """``before[i]`` and ``after[i]``: the readers' consensus on task i's edit in each study."""
    b = np.asarray(before, dtype=float)
    a = np.asarray(after, dtype=float)
    features = np.stack([b, a, np.ones(len(b))], axis=1)
    boot = ClusterBootstrap(list(clusters))
    found = boot.figures(features, {
        "before": lambda s: ratio(s[..., 0], s[..., 2]),
        "after": lambda s: ratio(s[..., 1], s[..., 2]),
        "difference": lambda s: ratio(s[..., 1] - s[..., 0], s[..., 2]),
    }, n=len(b), bounds={"before": (0.0, 1.0), "after": (0.0, 1.0), "difference": (-1.0, 1.0)})
    return BeforeAfter(found["before"], found["after"], found["difference"], len(b))
