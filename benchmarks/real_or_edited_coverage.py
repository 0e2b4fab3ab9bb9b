"""Coverage of a real-or-edited study's ROC-area intervals (app/designs/real_or_edited/figures.py) on
simulated studies with a known true area (not part of the test suite).

Each simulation draws CASES images, half edits and half originals, each its own source image
as the study draws them. Readers see a latent "how edited it looks" that is N(0, 1) for an
original and N(SEPARATION, 1) for an edit, plus a case effect they share (some images fool
everyone) and their own noise, and answer on the app's 1-10 scale (real or edited, confidence
1-5) by fixed thresholds. The true area of each reader and of the readers' mean is that of the
same process on 400,000 cases. The intervals are computed exactly as the results page computes
them (app.agreement.roc.reader_areas, the cases as clusters), and their coverage is counted.

    .venv/bin/python benchmarks/real_or_edited_coverage.py [--simulations 500] [--cases 100] [--separation 1]
"""

import argparse
import sys
import time
from pathlib import Path

import numpy as np
from sklearn.metrics import roc_auc_score

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from app.agreement.roc import reader_areas

READERS = 3
SEPARATION = 1.0
CASE_SD, READER_SD = 0.6, 0.6
# Reader-specific cut points on the latent scale for ratings 1..10 (some readers call
# "edited" more readily than others).
SHIFTS = (-0.3, 0.0, 0.4)
CUTS = np.linspace(-1.6, 2.4, 9)


def ratings(rng: np.random.Generator, cases: int,
            separation: float = SEPARATION) -> tuple[np.ndarray, np.ndarray]:
    truth = np.arange(cases) % 2 == 1
    latent = rng.normal(0, 1, cases) + separation * truth
    shared = latent + rng.normal(0, CASE_SD, cases)
    out = np.empty((READERS, cases))
    for r in range(READERS):
        seen = shared + rng.normal(0, READER_SD, cases)
        out[r] = 1 + np.searchsorted(CUTS + SHIFTS[r], seen)
    return truth, out


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--simulations", type=int, default=500)
    parser.add_argument("--cases", type=int, default=100)
    parser.add_argument("--separation", type=float, default=SEPARATION,
                        help="edits' latent mean (0: readers cannot tell)")
    args = parser.parse_args()
    rng = np.random.default_rng(20261125)
    truth, big = ratings(rng, 400_000, args.separation)
    true = {f"r{r}": roc_auc_score(truth, big[r]) for r in range(READERS)}
    true["readers' mean"] = float(np.mean(list(true.values())))
    covered = dict.fromkeys(true, 0)
    widths: dict[str, list[float]] = {name: [] for name in true}
    start = time.perf_counter()
    for _ in range(args.simulations):
        y, scored = ratings(rng, args.cases, args.separation)
        figures = reader_areas(y, {f"r{r}": scored[r] for r in range(READERS)},
                               clusters=np.arange(args.cases))
        for name, figure in figures.items():
            assert figure.low is not None and figure.high is not None
            covered[name] += figure.low <= true[name] <= figure.high
            widths[name].append(figure.high - figure.low)
    print(f"{args.simulations} simulated studies of {args.cases} cases x {READERS} readers, "
          f"separation {args.separation:g} "
          f"({time.perf_counter() - start:.0f} s)")
    print("| area | true value | coverage | mean width |")
    print("|---|---|---|---|")
    for name in true:
        print(f"| {name} | {true[name]:.3f} | {100 * covered[name] / args.simulations:.1f} % "
              f"| {np.mean(widths[name]):.3f} |")


if __name__ == "__main__":
    main()
