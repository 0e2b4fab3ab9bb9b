"""The reference standard: the readers' consensus, case by case. The judge never votes.

"Cannot assess" and missing reads do not vote. An adjudicator's decision, when there is one,
is the reference. Otherwise a strict majority decides; a tie (two readers who disagree, or an
even split) stays unresolved until adjudicated.
"""

from collections.abc import Sequence
from enum import StrEnum

from app.agreement.stats import Vote


class Decided(StrEnum):
    unanimous = "unanimous"
    majority = "majority"
    adjudicated = "adjudicated"
    unresolved = "unresolved"


def consensus(votes: Sequence[Vote], adjudicated: Vote = None) -> tuple[Vote, Decided]:
    if adjudicated is not None:
        return adjudicated, Decided.adjudicated
    cast = [v for v in votes if v is not None]
    passes = sum(cast)
    if not cast or passes * 2 == len(cast):
        return None, Decided.unresolved
    if passes in (0, len(cast)):
        return cast[0], Decided.unanimous
    return passes * 2 > len(cast), Decided.majority


def leave_one_out(votes: Sequence[Vote], left_out: int, adjudicated: Vote = None) -> Vote:
    """The consensus without one reader, for comparing that reader with the others."""
    return consensus([v for i, v in enumerate(votes) if i != left_out], adjudicated)[0]
