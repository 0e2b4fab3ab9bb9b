"""The anytime-valid sequence with its bets sized by the residual hits - m cases that is bet
on, against bets sized by the hits (the earlier sizing), on the same simulated studies (not
part of the tests).

Each study reads IMAGES source images of 1-8 edits each; whether the readers agree with the
judge on an edit follows an image effect on the logit scale (ICC 0.2 on the latent scale)
around the share. For each share and number of images the script reports, over STUDIES
studies and for both sizings computed on the same draws:
- the median half-width after the last image (the bets tuned to that many images, as the
  study page tunes them to its plan), and the narrowing;
- the share of studies whose truth stayed inside the sequence at every look;
- the time of one sequence, A and B interleaved, as a ratio.

    .venv/bin/python benchmarks/sequence_bets.py [--studies 200]
"""

import argparse
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from rich.console import Console

from app.cli.progress import progress
from app.confidence_sequence import ratio_sequence

ICC = 0.2
MAX_EDITS = 8
SHARES = (0.5, 0.8, 0.9)
IMAGES = (400, 1600)


def truth_of(share: float, rng: np.random.Generator) -> tuple[float, float]:
    """The logit shift giving this mean share under the image effect, and the share itself
    (the mean of the per-image shares: an image's size is independent of its share)."""
    sigma = np.sqrt(ICC / (1 - ICC) * np.pi**2 / 3)
    effects = rng.normal(0, sigma, 400_000)
    low, high = -10.0, 10.0
    for _ in range(60):  # bisection on the shift
        mid = (low + high) / 2
        if (1 / (1 + np.exp(-(mid + effects)))).mean() < share:
            low = mid
        else:
            high = mid
    return mid, float((1 / (1 + np.exp(-(mid + effects)))).mean())


def study(shift: float, images: int, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    sigma = np.sqrt(ICC / (1 - ICC) * np.pi**2 / 3)
    p = 1 / (1 + np.exp(-(shift + rng.normal(0, sigma, images))))
    sizes = rng.integers(1, MAX_EDITS + 1, images)
    return rng.binomial(sizes, p) / MAX_EDITS, sizes / MAX_EDITS


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--studies", type=int, default=200)
    parser.add_argument("--seed", type=int, default=40)
    args = parser.parse_args()
    rng = np.random.default_rng(args.seed)
    rows = []
    total = len(SHARES) * len(IMAGES) * args.studies
    with progress(Console(stderr=True), "simulated studies") as update:
        done = 0
        for share in SHARES:
            shift, truth = truth_of(share, rng)
            for images in IMAGES:
                width = {"residual": [], "hits": []}
                covered = {"residual": 0, "hits": 0}
                seconds = {"residual": 0.0, "hits": 0.0}
                for n in range(args.studies):
                    a, b = study(shift, images, rng)
                    # A and B interleaved, the first of each pair alternating.
                    order = ("residual", "hits") if n % 2 == 0 else ("hits", "residual")
                    for on in order:
                        started = time.perf_counter()
                        sequence = ratio_sequence(a, b, planned=images, bets_on=on)
                        seconds[on] += time.perf_counter() - started
                        width[on].append(sequence.half_width[-1])
                        covered[on] += bool(((sequence.low <= truth) & (truth <= sequence.high)).all())
                    done += 1
                    update(done, total)
                rows.append((share, images, np.median(width["hits"]), np.median(width["residual"]),
                             covered["hits"] / args.studies, covered["residual"] / args.studies,
                             seconds["residual"] / seconds["hits"]))
    print(f"{args.studies} studies per row; images of 1-{MAX_EDITS} edits, image effect ICC {ICC}")
    print(f"{'share':>6}{'images':>8}{'half-width (hits)':>19}{'(residual)':>12}{'narrower':>10}"
          f"{'coverage (hits)':>17}{'(residual)':>12}{'time ratio':>12}")
    for share, images, hits, residual, cover_h, cover_r, ratio in rows:
        print(f"{share:>6.2f}{images:>8}{hits:>19.4f}{residual:>12.4f}{1 - residual / hits:>10.1%}"
              f"{cover_h:>17.1%}{cover_r:>12.1%}{ratio:>12.2f}")


if __name__ == "__main__":
    main()
