"""Flagging a reader whose accuracy drops: the tests of app/readers/pause.py on seeded
simulated studies (not part of the tests).

Each simulated study gives the reader KNOWN known-answer cases, one in every 20 reads (a 5 %
share), and 19 ordinary cases between them, which two other steady readers (accuracy
OTHERS) read too. Every case has five questions whose answers share a random effect (a hard
case is hard on every question, for every reader). A steady reader keeps their accuracy; a
dropping one loses DROP points from their BEFORE-th known-answer case on, on every case.
Their baseline starts from PRACTICE qualification cases. The study page looks after every
answer; here each test looks at every known-answer case (every 20 reads), as often as the
goal counts. For each true accuracy the script reports the share of dropping readers
flagged within 20 known-answer cases of the drop (goal: at least 90 %) by the known-answer
test alone and by it with the agreement test, and the share of steady readers flagged at
any point of the whole study by any of the three tests, pace included (goal: at most 5 %).

    .venv/bin/python benchmarks/reader_drift.py [--runs 2000]
"""

import argparse
import os
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from app.readers.drift import CASE_EFFECT, DROP, MIN_CASES, _cusum, baseline, threshold
from app.readers.pace import SPREAD
from app.readers.pace import _statistic as pace_statistic
from app.readers.pace import threshold as pace_threshold

from app.readers.pause import AGREEMENT_ALPHA, KNOWN_ALPHA, PACE_ALPHA

QUESTIONS = 5
KNOWN, EVERY = 60, 20  # known-answer cases, and reads per known-answer case
BEFORE = 20  # known-answer cases before the drop
OTHERS = 0.9
PRACTICE = int(os.environ.get("PRACTICE", "20"))
ACCURACIES = (0.8, 0.85, 0.9, 0.95)


def _right(rng: np.random.Generator, effect: np.ndarray, accuracy: np.ndarray) -> np.ndarray:
    """Right or wrong per question (runs x cases x questions), the case's effect shared."""
    logit = np.log(accuracy / (1 - accuracy))[..., None]
    p = 1 / (1 + np.exp(-(logit + effect[..., None])))
    return rng.random((*effect.shape, QUESTIONS)) < p


def study(rng: np.random.Generator, runs: int, accuracy: float, drop: bool) -> dict[str, np.ndarray]:
    reads = KNOWN * EVERY
    effect = rng.normal(0.0, CASE_EFFECT, (runs, reads))
    level = np.full((runs, reads), accuracy)
    if drop:
        level[:, BEFORE * EVERY:] -= DROP
    mine = _right(rng, effect, level)
    known_at = np.arange(EVERY - 1, reads, EVERY)
    ordinary = np.setdiff1d(np.arange(reads), known_at)
    a = _right(rng, effect[:, ordinary], np.full((runs, len(ordinary)), OTHERS))
    b = _right(rng, effect[:, ordinary], np.full((runs, len(ordinary)), OTHERS))
    settled = a == b  # two others: a strict majority only where they agree
    agree = (mine[:, ordinary] == a) & settled  # binary answers: agree with them both
    practice = _right(rng, rng.normal(0.0, CASE_EFFECT, (runs, PRACTICE)),
                      np.full((runs, PRACTICE), accuracy)).sum(axis=(1, 2))
    return {"known": mine[:, known_at].sum(axis=2).astype(float),
            "agree": agree.sum(axis=2).astype(float), "asked": settled.sum(axis=2).astype(float),
            "practice": practice.astype(float)}


def first_flags(s: dict[str, np.ndarray]) -> tuple[np.ndarray, np.ndarray]:
    """Per run: the known-answer case at whose look the known-answer test first fires, and
    the same for either accuracy test (KNOWN + 1: never)."""
    runs = len(s["practice"])
    known_asked = np.full_like(s["known"], QUESTIONS)
    known_s = _cusum(s["known"], known_asked, s["practice"], np.full(runs, PRACTICE * QUESTIONS), DROP)
    agree_s = _cusum(s["agree"], s["asked"], np.zeros(runs), np.zeros(runs), DROP)
    ordinary = s["agree"].shape[1]
    never = KNOWN + 1
    known_at = np.full(runs, never)
    either_at = np.full(runs, never)
    for r in range(runs):
        for look in range(MIN_CASES, KNOWN + 1):
            h = threshold(baseline(s["known"][r, :look], known_asked[r, :look], s["practice"][r],
                                   PRACTICE * QUESTIONS), KNOWN, QUESTIONS, PRACTICE, KNOWN_ALPHA)
            if known_s[r, MIN_CASES - 1:look].max() >= h:
                known_at[r] = look
                break
        for look in range(1, KNOWN + 1):
            t = look * (EVERY - 1)  # ordinary reads by this look
            if t < MIN_CASES:
                continue
            asked = s["asked"][r, :t]
            q = max(1, round(float(np.median(asked))))
            h = threshold(baseline(s["agree"][r, :t], asked, 0.0, 0.0), ordinary, q, 0,
                          AGREEMENT_ALPHA)
            if agree_s[r, MIN_CASES - 1:t].max() >= h:
                either_at[r] = look
                break
        either_at[r] = min(either_at[r], known_at[r])
    return known_at, either_at


def oracle(rng: np.random.Generator, runs: int, accuracy: float) -> float:
    """The known-answer cases alone, by a CUSUM told each reader's true baseline and a
    threshold simulated for it (5 % over the study): the most those cases can give."""
    p0, p1 = accuracy, accuracy - DROP

    def statistic(right: np.ndarray) -> np.ndarray:
        s, out = np.zeros(len(right)), np.zeros(right.shape)
        for t in range(right.shape[1]):
            s = np.maximum(0.0, s + right[:, t] * np.log(p1 / p0)
                           + (QUESTIONS - right[:, t]) * np.log((1 - p1) / (1 - p0)))
            out[:, t] = s
        return out

    def answers(level: np.ndarray) -> np.ndarray:
        return _right(rng, rng.normal(0.0, CASE_EFFECT, level.shape), level).sum(axis=2).astype(float)

    h = np.quantile(statistic(answers(np.full((runs, KNOWN), p0)))[:, MIN_CASES - 1:].max(axis=1), 0.95)
    level = np.full((runs, KNOWN), p0)
    level[:, BEFORE:] = p1
    s = statistic(answers(level))
    early = (s[:, MIN_CASES - 1:BEFORE] >= h).any(axis=1)
    return float(np.mean(~early & (s[:, BEFORE:BEFORE + 20] >= h).any(axis=1)))


def paced(rng: np.random.Generator, runs: int, faster_from: int | None = None) -> np.ndarray:
    """The read at which the pace test first fires (reads + 1: never) over the whole study;
    from read ``faster_from`` on, the reader takes FASTER of their usual time."""
    reads = KNOWN * EVERY
    times = np.log(30_000.0) + SPREAD * rng.standard_t(4, (runs, reads)) / np.sqrt(2)
    if faster_from is not None:
        times[:, faster_from:] += np.log(FASTER)
    over = pace_statistic(times) >= pace_threshold(reads, PACE_ALPHA)
    return np.where(over.any(axis=1), over.argmax(axis=1) + 1, reads + 1)


FASTER = 0.4


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=2000)
    parser.add_argument("--seed", type=int, default=41)
    args = parser.parse_args()
    rng = np.random.default_rng(args.seed)
    print(f"{args.runs} simulated studies per row; {QUESTIONS} questions a case; {KNOWN} "
          f"known-answer cases, one in {EVERY} reads; two other readers at {OTHERS:.0%}; a drop "
          f"of {DROP:.0%} from known-answer case {BEFORE}; baseline from {PRACTICE} practice cases")
    print(f"{'accuracy':>9}{'known-answer test':>19}{'told the baseline':>19}{'with the others':>17}"
          f"{'median cases':>14}{'steady flagged':>16}")
    for accuracy in ACCURACIES:
        known_at, either_at = first_flags(study(rng, args.runs, accuracy, drop=True))
        within = (either_at > BEFORE) & (either_at <= BEFORE + 20)
        known_within = (known_at > BEFORE) & (known_at <= BEFORE + 20)
        _, steady_either = first_flags(study(rng, args.runs, accuracy, drop=False))
        false = (steady_either <= KNOWN) | (paced(rng, args.runs) <= KNOWN * EVERY)
        delays = either_at[within] - BEFORE
        print(f"{accuracy:>9.2f}{known_within.mean():>19.1%}{oracle(rng, args.runs, accuracy):>19.1%}"
              f"{within.mean():>17.1%}"
              f"{(np.median(delays) if len(delays) else float('nan')):>14.0f}{false.mean():>16.1%}")
    start = BEFORE * EVERY
    at = paced(rng, args.runs, faster_from=start)
    print(f"Pace: a reader who goes to {FASTER:.0%} of their time from read {start} is flagged "
          f"within 20 reads in {((at > start) & (at <= start + 20)).mean():.1%} of studies, "
          f"within 100 in {((at > start) & (at <= start + 100)).mean():.1%}")


if __name__ == "__main__":
    main()
