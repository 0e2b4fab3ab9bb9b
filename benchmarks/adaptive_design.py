"""Reads needed: the adaptive design against the stratified one, on an 88K-task synthetic
pool with simulated readers whose errors depend on disease and round (not part of the tests).

The pool: 88,000 tasks on 29,300 source images (1-5 tasks each) in three modalities (chest
X-ray half, brain MRI 30 %, fundus 20 %) and 23 diseases; each task has 1-5 judged rounds
(the judge fails every round but an accepted last one, or all five). Whether the readers'
consensus overturns the judge on an edit follows its disease (a base rate from 3 % to 30 %),
its round (later rounds harder) and an image random effect (ICC 0.2 on the logit scale);
about 80 % agreement overall, near the paper's 81 %.

Two endpoints, each with its own study, as the app runs them:
- judge-reader agreement over every judged edit, target +-0.05;
- the data set's acceptable rate (the share of accepted edits the readers pass), over the
  accepted edits only, target +-0.03.

Three designs draw source images in batches of BATCH with replacement at known probabilities,
each draw weighted by its inverse probability, and stop at the first draw where the
anytime-valid interval (app/confidence_sequence.py, as the study page computes it) is as
narrow as the target:
- uniform: every image alike;
- stratified: equal shares for the three modalities (the validation design's stratification
  at the image level);
- adaptive: app/studies/adaptive.py, from the batches read before.

Reads are the edits of each drawn image times three readers. The script reports, over
STUDIES simulated studies per design and endpoint, the median reads to the target, the share
of studies reaching it within the budget, and the coverage of the truth at the stop.

    .venv/bin/python benchmarks/adaptive_design.py [--studies 200]
"""

import argparse
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from rich.console import Console

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from app.cli.progress import progress
from app.confidence_sequence import ratio_sequence
from app.studies.adaptive import UNIFORM_SHARE, Pool, PoolEdit, PoolImage, probabilities_from

TASKS, READERS, BATCH, BUDGET = 88_000, 3, 20, 1500
MODALITIES = {"chest_xray": 0.5, "brain_mri": 0.3, "fundus": 0.2}
ICC = 0.2


@dataclass
class Truth:
    pool: Pool
    overturned: np.ndarray  # per edit of the pool
    truth: float  # the pool's share of edits not overturned


def synthetic(seed: int) -> tuple[Truth, Truth]:
    """The agreement pool (every judged edit) and the acceptable-rate pool (accepted edits)."""
    rng = np.random.default_rng(seed)
    diseases = {m: [f"{m}-{k}" for k in range(n)] for m, n in
                (("chest_xray", 10), ("brain_mri", 8), ("fundus", 5))}
    base = {d: b for ds in diseases.values()
            for d, b in zip(ds, rng.uniform(0.03, 0.30, len(ds)), strict=True)}
    sigma = np.sqrt(ICC / (1 - ICC) * np.pi**2 / 3)
    images, accepted_images, flips, accepted_flips = [], [], [], []
    task = attempt = 0
    image = 0
    while task < TASKS:
        modality = rng.choice(list(MODALITIES), p=list(MODALITIES.values()))
        effect = rng.normal(0, sigma)
        edits, accepted_edits = [], []
        for _ in range(int(rng.integers(1, 6))):
            disease = str(rng.choice(diseases[modality]))
            rounds = min(5, int(rng.geometric(0.55)))
            accepted = not (rounds == 5 and rng.random() < 0.3)
            for r in range(1, rounds + 1):
                judge_pass = accepted and r == rounds
                logit = np.log(base[disease] / (1 - base[disease])) + 0.25 * (r - 1) + effect
                flipped = rng.random() < 1 / (1 + np.exp(-logit))
                score = float(np.clip(rng.normal(0.78 if judge_pass else 0.6, 0.08), 0, 1))
                edit = PoolEdit(attempt, task, disease, r, judge_pass, score)
                edits.append(edit)
                flips.append(flipped)
                if judge_pass:
                    accepted_edits.append(edit)
                    accepted_flips.append(flipped)
                attempt += 1
            task += 1
        images.append(PoolImage(image, str(modality), tuple(edits)))
        if accepted_edits:
            accepted_images.append(PoolImage(image, str(modality), tuple(accepted_edits)))
        image += 1
    made = []
    for found, flipped in ((images, flips), (accepted_images, accepted_flips)):
        overturned = np.asarray(flipped, dtype=float)
        made.append(Truth(Pool(found), overturned, 1 - float(overturned.mean())))
    return made[0], made[1]


def fixed_design(pool: Pool, design: str) -> np.ndarray:
    if design == "uniform":
        return np.full(len(pool), 1 / len(pool))
    counts = np.bincount(pool.image_stratum)
    return 1 / (len(counts) * counts[pool.image_stratum])


def one_study(data: Truth, design: str, target: float, rng: np.random.Generator) -> tuple[int | None, bool]:
    """(reads to the target, or None within the budget; whether the interval at the stop
    holds the truth)."""
    pool = data.pool
    n = len(pool)
    agree = 1 - data.overturned
    hits = np.bincount(pool.edit_image, weights=agree, minlength=n)
    sizes = pool.sizes
    where_parts: list[np.ndarray] = []
    drawn_parts: list[np.ndarray] = []
    a_parts, b_parts = [], []
    fixed = None if design == "adaptive" else fixed_design(pool, design)
    for _ in range(BUDGET // BATCH):
        if fixed is None:
            where = np.concatenate(where_parts) if where_parts else np.zeros(0, np.int64)
            q = probabilities_from(pool, where, data.overturned[where], pool.edit_image[where],
                                   UNIFORM_SHARE)
        else:
            q = fixed
        chosen = rng.choice(n, size=BATCH, p=q)
        weight = (1 / n) / q
        bound = float((weight * sizes).max())  # fixed by q before the batch is drawn
        a_parts.append(weight[chosen] * hits[chosen] / bound)
        b_parts.append(weight[chosen] * sizes[chosen] / bound)
        drawn_parts.append(chosen)
        edits = np.concatenate([np.arange(pool.first_edit[i], pool.first_edit[i] + int(sizes[i]))
                                for i in np.unique(chosen)])
        where_parts.append(edits)
    a, b = np.concatenate(a_parts), np.concatenate(b_parts)
    sequence = ratio_sequence(a, b, planned=BUDGET)
    reached = np.nonzero(sequence.half_width <= target)[0]
    stop = int(reached[0]) if len(reached) else len(a) - 1
    drawn = np.concatenate(drawn_parts)[:stop + 1]
    reads = int(sizes[np.unique(drawn)].sum()) * READERS  # an image drawn twice is read once
    covered = bool(sequence.low[stop] <= data.truth <= sequence.high[stop])
    return (reads if len(reached) else None), covered


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--studies", type=int, default=200)
    parser.add_argument("--seed", type=int, default=50)
    args = parser.parse_args()
    started = time.perf_counter()
    agreement, acceptable = synthetic(args.seed)
    print(f"pool: {len(agreement.pool):,} source images, {len(agreement.overturned):,} judged edits "
          f"(agreement {agreement.truth:.3f}); {len(acceptable.pool):,} images with "
          f"{len(acceptable.overturned):,} accepted edits (acceptable rate {acceptable.truth:.3f})")
    rng = np.random.default_rng(args.seed + 1)
    results: dict[tuple[str, str], tuple[list[int | None], list[bool]]] = {}
    runs = [(name, data, target, design) for name, data, target in
            (("agreement", agreement, 0.05), ("acceptable rate", acceptable, 0.03))
            for design in ("uniform", "stratified", "adaptive")]
    with progress(Console(stderr=True), "simulated studies") as update:
        done = 0
        for name, data, target, design in runs:
            reads, covered = [], []
            for _ in range(args.studies):
                r, c = one_study(data, design, target, rng)
                reads.append(r)
                covered.append(c)
                done += 1
                update(done, len(runs) * args.studies)
            results[(name, design)] = (reads, covered)
    print(f"{args.studies} studies per design; batches of {BATCH} images, at most {BUDGET}; "
          f"{READERS} readers per edit")
    print(f"{'endpoint':<17}{'design':<12}{'median reads':>13}{'reach target':>14}{'coverage':>10}")
    for (name, design), (reads, covered) in results.items():
        reached = [r for r in reads if r is not None]
        median = f"{np.median(reached):,.0f}" if reached else "-"
        print(f"{name:<17}{design:<12}{median:>13}{len(reached) / len(reads):>14.1%}"
              f"{np.mean(covered):>10.1%}")
    for name in ("agreement", "acceptable rate"):
        base = [r for r in results[(name, "stratified")][0] if r is not None]
        adaptive = [r for r in results[(name, "adaptive")][0] if r is not None]
        if base and adaptive:
            print(f"{name}: adaptive needs {1 - np.median(adaptive) / np.median(base):+.1%} "
                  "fewer reads than stratified (median)")
    print(f"{time.perf_counter() - started:.0f} s")


if __name__ == "__main__":
    main()
