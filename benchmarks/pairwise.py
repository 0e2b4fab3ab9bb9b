"""Benchmark: a pairwise study's strengths (not part of the test suite).

    .venv/bin/python benchmarks/pairwise.py [--reads 2000] [--images 500] [--rounds 5]

Reads of consecutive rounds drawn from Davidson's model (a tie propensity of 0.5, one read in
twenty both unacceptable), clustered by source image; times the strengths with their
cluster-bootstrap intervals (2,000 resamples, each refitted) and the two shares, as the
figures page computes them on its first view (it keeps them until an answer is added).
"""

import argparse
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from app.agreement.pairwise import (
    EQUAL,
    FIRST,
    NEITHER,
    SECOND,
    PairRead,
    later_preferred,
    left_preferred,
    strength_figures,
)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--reads", type=int, default=2000)
    parser.add_argument("--images", type=int, default=500)
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    rng = np.random.default_rng(7)
    truth = np.linspace(0.0, 1.2, args.rounds)
    reads = []
    for n in range(args.reads):
        first = int(rng.integers(0, args.rounds - 1))
        a, b = np.exp(truth[first]), np.exp(truth[first + 1])
        both = 0.5 * np.sqrt(a * b)
        choice = str(rng.choice([FIRST, SECOND, EQUAL], p=np.array([a, b, both]) / (a + b + both)))
        if rng.random() < 0.05:
            choice = NEITHER
        reads.append(PairRead(first, first + 1, choice, bool(rng.random() < 0.5),
                              int(n % args.images)))
    start = time.perf_counter()
    found = strength_figures(args.rounds, reads)
    strengths = time.perf_counter() - start
    start = time.perf_counter()
    later, left = later_preferred(reads), left_preferred(reads)
    shares = time.perf_counter() - start
    print(f"{args.reads} reads of {args.rounds} rounds over {args.images} source images")
    print(f"strengths with intervals (2,000 resamples, each refitted): {strengths:6.2f} s")
    print(f"later round preferred and position bias:                {shares:6.2f} s")
    for k, figure in enumerate(found.log_strength):
        print(f"  round {k + 1}: {figure.value} [{figure.low}, {figure.high}] (truth {truth[k]:.2f})")
    print(f"  tie propensity: {found.tie}; later preferred {later.value:.3f}; left {left.value:.3f}")


if __name__ == "__main__":
    main()
