"""Coverage of the data-set quality intervals (app/quality) on simulated data sets with a known
true rate (not part of the test suite).

Each simulation draws a data set: IMAGES source images with 1 to 5 edits each, an image effect
that makes all its edits better or worse (so edits of one image are correlated), the truth
(would a radiologist pass the edit?), the judge's verdict (pass / fail) and the judge's
answer to the question (right 85 % of the time, less on hard images). A validation-style
study then draws READS edits stratified by the verdict, as the app does (half from each
verdict, weights N_h / n_h), and reads their truth. The true rate is the data set's own share
of passing edits. Both intervals are computed exactly as /quality computes them (the same
functions, with the verdict strata and the source images as clusters), and their coverage of
the true rate is counted.

    .venv/bin/python benchmarks/quality_coverage.py [--simulations 1000] [--images 4000] [--reads 1000]
"""

import argparse
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from app.quality.ppi import classical_mean, ppi_mean


def sigmoid(x: np.ndarray) -> np.ndarray:
    return 1 / (1 + np.exp(-x))


def data_set(rng: np.random.Generator, images: int) -> tuple[np.ndarray, ...]:
    edits = rng.integers(1, 6, images)
    image = np.repeat(np.arange(images), edits)
    effect = rng.normal(0, 1.0, images)[image]
    truth = rng.random(len(image)) < sigmoid(0.6 + effect)
    # The judge errs more on hard images: its error rate rises as the image effect falls.
    wrong = rng.random(len(image)) < sigmoid(-1.9 - 0.6 * effect)
    answer = np.where(wrong, ~truth, truth)
    verdict = np.where(rng.random(len(image)) < 0.8, answer, rng.random(len(image)) < 0.66)
    return image, truth.astype(float), answer.astype(float), verdict.astype(int)


def one(rng: np.random.Generator, images: int, reads: int) -> tuple[float, bool, bool, float, float]:
    image, truth, answer, verdict = data_set(rng, images)
    drawn, weights = [], []
    for stratum in (0, 1):
        members = np.flatnonzero(verdict == stratum)
        take = min(reads // 2, len(members))
        chosen = rng.choice(members, take, replace=False)
        drawn.append(chosen)
        weights.append(np.full(take, len(members) / take))
    sample, w = np.concatenate(drawn), np.concatenate(weights)
    chance = 1 / w
    target = float(truth.mean())
    ppi = ppi_mean(truth[sample], answer[sample], answer, weights=w, clusters=image[sample],
                   clusters_all=image, strata=verdict[sample], census=True, drawn=chance)
    alone = classical_mean(truth[sample], weights=w, clusters=image[sample], strata=verdict[sample],
                           drawn=chance)
    return (target, ppi.low <= target <= ppi.high, alone.low <= target <= alone.high,
            ppi.high - ppi.low, alone.high - alone.low)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--simulations", type=int, default=1000)
    parser.add_argument("--images", type=int, default=4000)
    parser.add_argument("--reads", type=int, default=1000)
    parser.add_argument("--seed", type=int, default=20261123)
    args = parser.parse_args()
    rng = np.random.default_rng(args.seed)
    started = time.perf_counter()
    results = [one(rng, args.images, args.reads) for _ in range(args.simulations)]
    seconds = time.perf_counter() - started
    targets, ppi_in, alone_in, ppi_width, alone_width = (np.array(c) for c in zip(*results, strict=True))
    n = args.simulations
    margin = 1.96 * np.sqrt(0.95 * 0.05 / n)
    print(f"{n} simulated data sets of {args.images} source images (about {args.images * 3:,} edits), "
          f"{args.reads} edits read per study, stratified by the judge's verdict; true rates "
          f"{targets.min():.3f}-{targets.max():.3f}; {seconds:.1f} s")
    print(f"PPI++ interval covers the true rate in {ppi_in.mean():.1%} "
          f"(Monte Carlo margin ±{margin:.1%}); mean width {ppi_width.mean() * 100:.2f} points")
    print(f"readers alone: covers in {alone_in.mean():.1%}; mean width {alone_width.mean() * 100:.2f} points")
    print(f"PPI++ narrower than the readers alone in {(ppi_width < alone_width).mean():.0%} of the "
          f"simulations; width ratio {np.mean(ppi_width / alone_width):.3f}")
    ok = 0.93 <= ppi_in.mean() <= 0.97 and ppi_width.mean() < alone_width.mean()
    print("within 93-97 % and narrower: yes" if ok else "within 93-97 % and narrower: NO")
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
