"""The reference standard: the readers' consensus, case by case. The judge never votes.

"Cannot assess" and missing reads do not vote. A strict majority decides; a tie (two readers
who disagree, or an even split) is settled by the adjudicator's decision, and stays
unresolved until there is one.
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
    """The readers decide when they can; an adjudication settles only what they left open."""
    cast = [v for v in votes if v is not None]
    passes = sum(cast)
    if cast and passes in (0, len(cast)):
        return cast[0], Decided.unanimous
    if cast and passes * 2 != len(cast):
        return passes * 2 > len(cast), Decided.majority
    if adjudicated is not None:
        return adjudicated, Decided.adjudicated
    return None, Decided.unresolved


def leave_one_out(votes: Sequence[Vote], left_out: int, adjudicated: Vote = None) -> Vote:
    """The consensus without one reader, for comparing that reader with the others."""
    return consensus([v for i, v in enumerate(votes) if i != left_out], adjudicated)[0]
