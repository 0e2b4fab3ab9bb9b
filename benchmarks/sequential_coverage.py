"""Coverage under peeking: the study page's anytime-valid interval against the fixed-sample
interval, both looked at after every fully read source image, the study stopping as soon as
the interval is as narrow as its target (not part of the test suite).

The pool: POOL source images with 1-4 cases each; whether the judge agrees with the readers
on a case follows an image random effect on the logit scale (ICC 0.2 on the latent scale),
around 81 % (the paper's agreement). Each simulated study draws images from the pool without
replacement, in random order, and looks after each one. The truth is the pool's share of
agreeing cases.

Looks start once 10 source images and 30 cases are read (the app states no conclusion on
fewer), for both intervals: a Wald interval at 5 of 5 agreeing cases has no width at all.

For each interval the script counts, over STUDIES studies:
- at the stop: the share of studies whose interval at the stopping look holds the truth;
- at every look: the share whose interval held the truth at every look up to the stop (what
  "valid at every look" promises).

With --size-linked the share depends on an image's size (about 0.29 in images of 1-2 cases,
0.66 in images of 6-8), and the images arrive in two orders: the order they are completed
in (readers read the cases in random orders, so an image is complete at the last of its
reads, and small images come first), and the study's fixed random order, in which the app
enters them (app/image_order.py). The second row is what the study page does.

The fixed-sample interval is the cluster-robust Wald interval of the ratio (the sandwich over
source images); the anytime-valid one is app/confidence_sequence.py's, exactly as the study
page computes it.

    .venv/bin/python benchmarks/sequential_coverage.py [--studies 2000] [--target 0.05]
    .venv/bin/python benchmarks/sequential_coverage.py --size-linked [--studies 2000]
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

POOL = 20_000
MAX_CASES = 4
AGREEMENT = 0.81
ICC = 0.2
Z = 1.959963984540054
FIRST_LOOK_IMAGES, FIRST_LOOK_CASES = 10, 30


def pool(rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """Each image's agreeing cases and cases."""
    sigma = np.sqrt(ICC / (1 - ICC) * np.pi**2 / 3)  # latent-scale ICC of a logistic model
    effect = rng.normal(0, sigma, POOL)
    logit = np.log(AGREEMENT / (1 - AGREEMENT)) + effect
    sizes = rng.integers(1, MAX_CASES + 1, POOL)
    hits = rng.binomial(sizes, 1 / (1 + np.exp(-logit)))
    return hits.astype(float), sizes.astype(float)


LINKED_MAX_CASES = 8


def linked_pool(rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """Each image's agreeing cases and cases, the share rising with the image's size (from
    about 0.29 at 1-2 cases to 0.66 at 6-8), with the same image effect."""
    sigma = np.sqrt(ICC / (1 - ICC) * np.pi**2 / 3)
    sizes = rng.integers(1, LINKED_MAX_CASES + 1, POOL)
    share = np.interp(sizes, [2, 6], [0.29, 0.66])
    logit = np.log(share / (1 - share)) + rng.normal(0, sigma, POOL)
    hits = rng.binomial(sizes, 1 / (1 + np.exp(-logit)))
    return hits.astype(float), sizes.astype(float)


def run_linked(studies: int, target: float, images: int, seed: int) -> dict[str, dict[str, float]]:
    rng = np.random.default_rng(seed)
    hits, sizes = linked_pool(rng)
    truth = hits.sum() / sizes.sum()
    found: dict[str, dict[str, list[float]]] = {
        name: {"at_stop": [], "every_look": [], "stopped_at": [], "reached": []}
        for name in ("completion order", "fixed random order")}
    with progress(Console(stderr=True), "simulated studies") as update:
        for done in range(studies):
            update(done + 1, studies)
            drawn = rng.permutation(POOL)[:images]
            # complete at the last of its reads: the largest of its cases' random positions
            completed = rng.random(len(drawn)) ** (1 / sizes[drawn])
            for name, order in (("completion order", drawn[np.argsort(completed)]),
                                ("fixed random order", drawn)):
                h, s = hits[order], sizes[order]
                sequence = ratio_sequence(h / LINKED_MAX_CASES, s / LINKED_MAX_CASES,
                                          planned=images)
                _look(sequence.low, sequence.high, s, truth, target, images, found[name])
    return _summary(found)


def _look(low: np.ndarray, high: np.ndarray, s: np.ndarray, truth: float, target: float,
          images: int, into: dict[str, list[float]]) -> None:
    first = max(FIRST_LOOK_IMAGES, int(np.searchsorted(np.cumsum(s), FIRST_LOOK_CASES)) + 1) - 1
    narrow = first + np.nonzero((high[first:] - low[first:]) / 2 <= target)[0]
    stop = int(narrow[0]) if len(narrow) else images - 1
    held = (low[first:stop + 1] <= truth) & (truth <= high[first:stop + 1])
    into["at_stop"].append(float(held[-1]))
    into["every_look"].append(float(held.all()))
    into["stopped_at"].append(stop + 1)
    into["reached"].append(float(len(narrow) > 0))


def _summary(found: dict[str, dict[str, list[float]]]) -> dict[str, dict[str, float]]:
    return {name: {"coverage_at_stop": float(np.mean(v["at_stop"])),
                   "coverage_every_look": float(np.mean(v["every_look"])),
                   "median_images_at_stop": float(np.median(v["stopped_at"])),
                   "share_reaching_target": float(np.mean(v["reached"]))}
            for name, v in found.items()}


def fixed_sample(hits: np.ndarray, sizes: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The cluster-robust Wald interval of the ratio after each image."""
    n = np.arange(1, len(hits) + 1)
    a, m = np.cumsum(hits), np.cumsum(sizes)
    r = a / m
    squares = np.cumsum(hits**2) - 2 * r * np.cumsum(hits * sizes) + r**2 * np.cumsum(sizes**2)
    with np.errstate(divide="ignore", invalid="ignore"):
        variance = np.where(n > 1, squares / m**2 * n / (n - 1), np.inf)
    half = Z * np.sqrt(np.maximum(variance, 0))
    return np.clip(r - half, 0, 1), np.clip(r + half, 0, 1)


def run(studies: int, target: float, images: int, seed: int) -> dict[str, dict[str, float]]:
    rng = np.random.default_rng(seed)
    hits, sizes = pool(rng)
    truth = hits.sum() / sizes.sum()
    found: dict[str, dict[str, list[float]]] = {
        name: {"at_stop": [], "every_look": [], "stopped_at": [], "reached": []}
        for name in ("anytime-valid", "fixed-sample")}
    with progress(Console(stderr=True), "simulated studies") as update:
        for done in range(studies):
            update(done + 1, studies)
            _one(rng, hits, sizes, truth, target, images, found)
    return _summary(found)


def _one(rng: np.random.Generator, hits: np.ndarray, sizes: np.ndarray, truth: float,
         target: float, images: int, found: dict[str, dict[str, list[float]]]) -> None:
    order = rng.permutation(POOL)[:images]
    h, s = hits[order], sizes[order]
    sequence = ratio_sequence(h / MAX_CASES, s / MAX_CASES, planned=images)
    for name, (low, high) in (("anytime-valid", (sequence.low, sequence.high)),
                              ("fixed-sample", fixed_sample(h, s))):
        _look(low, high, s, truth, target, images, found[name])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--studies", type=int, default=2000)
    parser.add_argument("--target", type=float, default=0.05)
    parser.add_argument("--images", type=int, default=600,
                        help="the study's size in source images: the most it reads, and what "
                             "the bets are tuned for, as the study page tunes them")
    parser.add_argument("--seed", type=int, default=27)
    parser.add_argument("--size-linked", action="store_true",
                        help="a share linked to the image's size; completion order against the "
                             "study's fixed random order (anytime-valid interval only)")
    args = parser.parse_args()
    started = time.perf_counter()
    if args.size_linked:
        results = run_linked(args.studies, args.target, args.images, args.seed)
        print(f"{args.studies} studies, target ± {args.target:g}, anytime-valid interval; pool of "
              f"{POOL} images of 1-{LINKED_MAX_CASES} cases, share about 0.29 in images of "
              f"1-2 cases and 0.66 in images of 6-8, ICC {ICC}")
    else:
        results = run(args.studies, args.target, args.images, args.seed)
        print(f"{args.studies} studies, target ± {args.target:g}, looking after every source "
              f"image (at most {args.images}); pool of {POOL} images, 1-{MAX_CASES} cases each, "
              f"ICC {ICC}, agreement about {AGREEMENT:.0%}")
    print(f"{'order':<20}{'covers at stop':>16}{'at every look':>15}{'median images':>15}"
          f"{'reach target':>14}")
    for name, r in results.items():
        print(f"{name:<20}{r['coverage_at_stop']:>16.1%}{r['coverage_every_look']:>15.1%}"
              f"{r['median_images_at_stop']:>15.0f}{r['share_reaching_target']:>14.1%}")
    print(f"{time.perf_counter() - started:.0f} s")


if __name__ == "__main__":
    main()
