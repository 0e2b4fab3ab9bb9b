"""The reference standard: the readers' consensus, case by case. The judge never votes.

"Cannot assess" and missing reads do not vote. A strict majority decides. A tie (two readers
who disagree, or an even split) is settled by the adjudicator's decision, and stays out of the
comparison until there is one. A reference that rests on one vote (the only other reader
could not assess, or never read the case) is counted apart from a unanimous one.

The same rules, with ties or "cannot assess" counted one way or the other, give the
sensitivity analyses of the report (``Policy``).
"""

from collections.abc import Sequence
from dataclasses import dataclass
from enum import StrEnum
from functools import lru_cache

from app.agreement.stats import Vote


class Decided(StrEnum):
    unanimous = "unanimous"  # two or more votes, all alike
    single_vote = "single_vote"  # one vote only
    majority = "majority"
    adjudicated = "adjudicated"  # a tie settled by the adjudicator
    tie = "tie"  # votes split evenly, not (yet) adjudicated
    no_vote = "no_vote"  # nobody could assess it, or nobody read it yet

    @property
    def resolved(self) -> bool:
        return self not in (Decided.tie, Decided.no_vote)


@dataclass(frozen=True)
class Policy:
    """How the reference treats what the readers left open; the primary analysis is the
    default: "cannot assess" is no vote, a tie goes to the adjudicator or stays out."""

    ties: Vote = None  # True / False: an unadjudicated tie counts as pass / fail
    cannot_assess: Vote = None  # True / False: "cannot assess" counts as that vote
    use_adjudication: bool = True


PRIMARY = Policy()


def consensus(votes: Sequence[Vote], adjudicated: Vote = None,
              policy: Policy = PRIMARY) -> tuple[Vote, Decided]:
    """The readers decide when they can; an adjudication settles only what they left tied."""
    return _consensus(tuple(votes), adjudicated, policy.ties, policy.use_adjudication)


# A report takes the consensus of every case under several policies (50,000 calls for a
# 1,000-case study), and three readers' votes make a few dozen distinct inputs. Keyed by
# the two parts of a policy that matter here ("cannot assess" is counted before the votes
# come in): hashing the policy itself took half the time of the look-up.
@lru_cache(maxsize=4096)
def _consensus(votes: tuple[Vote, ...], adjudicated: Vote, ties: Vote,
               use_adjudication: bool) -> tuple[Vote, Decided]:
    cast = [v for v in votes if v is not None]
    passes = sum(cast)
    if len(cast) == 1:
        return cast[0], Decided.single_vote
    if cast and passes in (0, len(cast)):
        return cast[0], Decided.unanimous
    if cast and passes * 2 != len(cast):
        return passes * 2 > len(cast), Decided.majority
    if cast and ties is not None:
        return ties, Decided.tie
    # The adjudicator settles a tie, or a case every reader found impossible to assess.
    if use_adjudication and adjudicated is not None:
        return adjudicated, Decided.adjudicated
    return None, Decided.tie if cast else Decided.no_vote


def leave_one_out(votes: Sequence[Vote], left_out: int, adjudicated: Vote = None) -> Vote:
    """The consensus without one reader, for comparing that reader with the others."""
    others = tuple(votes)
    return _consensus(others[:left_out] + others[left_out + 1:], adjudicated, PRIMARY.ties,
                      PRIMARY.use_adjudication)[0]
