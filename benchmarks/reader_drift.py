"""Flagging a reader whose accuracy drops: the drift test of app/readers/drift.py on seeded
simulated readers (not part of the tests).

Each simulated reader answers the QUESTIONS questions of a study's known-answer cases, the
answers of one case sharing a random effect (a hard case is hard on every question). A
steady reader keeps their accuracy for the whole study; a dropping reader loses DROP points
after BEFORE known-answer cases. The baseline starts from the reader's PRACTICE qualification
cases and learns from their known-answer cases as the study goes (a self-starting CUSUM).
For each true accuracy the script reports:
- the share of dropping readers flagged within 20 known-answer cases of the drop (goal: at
  least 90 %), and the median cases to the flag;
- the share of steady readers flagged at any point of the whole study (goal: at most 5 %).
It then does the same for the time-per-case test (a reader who starts clicking through).

    .venv/bin/python benchmarks/reader_drift.py [--runs 2000]
"""

import argparse
import os
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from app.readers.drift import DROP, drift, steady_answers
from app.readers.pace import SPREAD, pace

QUESTIONS = 5  # four rubric questions and the overall verdict
BEFORE, AFTER = 20, 40  # known-answer cases before the drop, and after it
# Qualification cases the baseline starts from (PRACTICE=40 in the environment to vary it).
PRACTICE = int(os.environ.get("PRACTICE", "20"))
ACCURACIES = (0.8, 0.85, 0.9, 0.95)


def run(accuracy: float, runs: int, rng: np.random.Generator) -> tuple[float, float, float]:
    horizon = BEFORE + AFTER
    asked = np.full(horizon, QUESTIONS, dtype=float)
    practice = steady_answers(rng, accuracy, PRACTICE, QUESTIONS, runs).sum(axis=1)
    steady = steady_answers(rng, accuracy, horizon, QUESTIONS, runs)
    before = steady_answers(rng, accuracy, BEFORE, QUESTIONS, runs)
    after = steady_answers(rng, accuracy - DROP, AFTER, QUESTIONS, runs)
    dropping = np.concatenate([before, after], axis=1)
    caught, delays, false = 0, [], 0
    def flag(answers: np.ndarray, r: int) -> int | None:
        return drift(answers[r], asked, practice[r], PRACTICE * QUESTIONS, horizon, QUESTIONS,
                     PRACTICE).flagged_at

    for r in range(runs):
        if flag(steady, r) is not None:
            false += 1
        at = flag(dropping, r)
        if at is not None and BEFORE < at <= BEFORE + 20:
            caught += 1
            delays.append(at - BEFORE)
    return caught / runs, float(np.median(delays)) if delays else float("nan"), false / runs


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=2000)
    parser.add_argument("--seed", type=int, default=41)
    args = parser.parse_args()
    rng = np.random.default_rng(args.seed)
    print(f"{args.runs} simulated readers per row; {QUESTIONS} questions a case; a drop of "
          f"{DROP:.0%} after {BEFORE} known-answer cases; {BEFORE + AFTER} known-answer cases "
          f"in the study; baseline from {PRACTICE} practice cases")
    print(f"{'accuracy':>9}{'flagged within 20 of the drop':>31}{'median cases':>14}"
          f"{'steady readers flagged':>24}")
    for accuracy in ACCURACIES:
        caught, delay, false = run(accuracy, args.runs, rng)
        print(f"{accuracy:>9.2f}{caught:>31.1%}{delay:>14.0f}{false:>24.1%}")
    print()
    print(f"Time per case (app/readers/pace.py): {PACE_READS} reads at a median of 30 s, log "
          f"times Student t (4 df, spread {SPREAD}); a dropping reader goes to {FASTER:.0%} of "
          f"their time after read {PACE_BEFORE}")
    caught, false = run_pace(args.runs, rng)
    print(f"  flagged within 20 reads of the drop: {caught:.1%}; steady readers flagged: {false:.1%}")


PACE_READS, PACE_BEFORE, FASTER = 200, 100, 0.4


def run_pace(runs: int, rng: np.random.Generator) -> tuple[float, float]:
    def times(n: int, scale: float) -> list[int]:
        return [int(t) for t in np.exp(np.log(30_000 * scale)
                                       + SPREAD * rng.standard_t(4, n) / np.sqrt(2))]

    caught = false = 0
    for _ in range(runs):
        if pace(times(PACE_READS, 1.0), PACE_READS).flagged_at is not None:
            false += 1
        at = pace(times(PACE_BEFORE, 1.0) + times(PACE_READS - PACE_BEFORE, FASTER),
                  PACE_READS).flagged_at
        caught += at is not None and PACE_BEFORE < at <= PACE_BEFORE + 20
    return caught / runs, false / runs


if __name__ == "__main__":
    main()
