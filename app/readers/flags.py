"""Flags on a reader for the study's organiser: their agreement with the other readers fell, or
their time per case did. Information, never a pause (app/readers/pause.py): disagreeing with
the others may mean the others are wrong, and a fast reader may be a good one.

Both use the rank change-point test of the known-answer pause (app/readers/changepoint.py),
each at FLAG_ALPHA per study shared by the readers, so a flag on a steady reader is as rare as
a pause.

- Agreement, on complete cases only: an ordinary case enters a reader's statistic once every
  other reader assigned to it has answered it, scored by the share of questions on which the
  reader agrees with the strict majority of those others. A case the others have only partly
  read would be held to a "majority" of one, and such cases gather at the recent end of every
  list (readers go through the images in the same block order), which looks like a drop. A
  reader far ahead waits for the others; the page says how many of their cases wait.
- Time per case, clipped to 1 s - 10 min (a coffee break is not a slow read): a drop flags a
  reader who starts clicking through.
"""

import random
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from app.agreement.reads import vote
from app.readers.changepoint import Changepoint
from app.readers.changepoint import test as changepoint_test
from app.readers.reads import ReaderRead
from pipeline.vocabulary import QUESTIONS

FLAG_ALPHA = 0.05
CLIP_MS = (1_000, 600_000)


@dataclass(frozen=True)
class Flag:
    statistic: float  # G when it crossed
    threshold: float  # c
    cases: int  # scores behind it
    reason: str


@dataclass(frozen=True)
class ReaderFlags:
    user_id: int
    agreement: Flag | None
    pace: Flag | None
    compared: int  # ordinary cases in the agreement statistic (every other reader has read them)
    waiting: int  # ordinary cases read that wait for another reader


Assigned = dict[int, set[int]]  # item id -> the readers with a first read of it in their list


def complete_consensus(reads: Sequence[ReaderRead],
                       assigned: Assigned) -> dict[tuple[int, int], dict[str, bool]]:
    """(user id, item id) -> question -> the strict majority of the other assigned readers'
    first reads, for the cases every one of them has answered; a question they split evenly
    on, or left open, is absent."""
    by_item: dict[int, dict[int, ReaderRead]] = {}
    for read in reads:
        if not read.repeat and not read.known:
            by_item.setdefault(read.item_id, {})[read.user_id] = read
    found: dict[tuple[int, int], dict[str, bool]] = {}
    for item_id, given in by_item.items():
        for user_id in given:
            others = assigned.get(item_id, set()) - {user_id}
            if not others or not others <= given.keys():
                continue
            settled: dict[str, bool] = {}
            for q in QUESTIONS:
                votes = [v for o in others if (v := vote(given[o].answers[q])) is not None]
                if votes and sum(votes) * 2 != len(votes):
                    settled[q] = sum(votes) * 2 > len(votes)
            found[(user_id, item_id)] = settled
    return found


def _ties(secret: str, label: str, user_id: int, count: int) -> np.ndarray:
    draw = random.Random(f"{secret}:{label}:{user_id}")
    return np.array([draw.random() for _ in range(count)])


def reader_flags(reads: Sequence[ReaderRead], assigned: Assigned, listed: dict[int, int],
                 secret: str) -> dict[int, ReaderFlags]:
    """Every reader's flags; ``listed``: user id -> the reads in their list (what the rate
    holds over)."""
    consensus = complete_consensus(reads, assigned)
    readers = max(1, len(listed))
    alpha = FLAG_ALPHA / readers
    by_reader: dict[int, list[ReaderRead]] = {}
    for read in reads:
        by_reader.setdefault(read.user_id, []).append(read)
    found = {}
    for user_id, own in by_reader.items():
        own.sort(key=lambda r: r.sequence)
        first = [r for r in own if not r.known and not r.repeat]
        scored = [(r, consensus[(user_id, r.item_id)]) for r in first
                  if (user_id, r.item_id) in consensus]
        scored = [(r, c) for r, c in scored if c]
        shares = [sum(vote(r.answers[q]) == v for q, v in c.items()) / len(c) for r, c in scored]
        agreement = None
        if shares:
            test = changepoint_test(np.array(shares), _ties(secret, "agree-ties", user_id, len(shares)),
                                    listed.get(user_id, len(own)), alpha)
            agreement = _flag(test, "Agreement with the other readers fell: {recent} of the "
                                    "last {n} complete cases' answers agreed with the others' "
                                    "majority, {all} over all {cases}.", shares)
        times = [float(np.clip(r.time_ms, *CLIP_MS)) for r in own if r.time_ms]
        pace = None
        if times:
            test = changepoint_test(np.log(times), _ties(secret, "pace-ties", user_id, len(times)),
                                    listed.get(user_id, len(own)), alpha)
            pace = _pace_flag(test, times)
        waiting = sum(1 for r in first if (user_id, r.item_id) not in consensus
                      and assigned.get(r.item_id, set()) - {user_id})
        found[user_id] = ReaderFlags(user_id, agreement, pace, len(scored), waiting)
    return found


def _flag(test: Changepoint, words: str, shares: list[float]) -> Flag | None:
    at = test.flagged_at
    if at is None:
        return None
    recent = shares[max(0, at - 10):at]
    what = words.format(recent=f"{np.mean(recent):.0%}", n=len(recent),
                        all=f"{np.mean(shares[:at]):.0%}", cases=at)
    return Flag(float(test.statistic[at - 1]), test.threshold, at,
                f"{what} Rank change-point test: G = {test.statistic[at - 1]:.2f} against "
                f"c = {test.threshold:.2f}.")


def _pace_flag(test: Changepoint, times: list[float]) -> Flag | None:
    at = test.flagged_at
    if at is None:
        return None
    recent = times[max(0, at - 10):at]
    earlier = times[:max(0, at - 10)] or recent
    return Flag(float(test.statistic[at - 1]), test.threshold, at,
                f"Time per case fell: median {np.median(recent) / 1000:.0f} s over the last "
                f"{len(recent)} reads against {np.median(earlier) / 1000:.0f} s before. Rank "
                f"change-point test: G = {test.statistic[at - 1]:.2f} against "
                f"c = {test.threshold:.2f}.")
