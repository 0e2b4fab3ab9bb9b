"""Reads needed to reach +-0.05 on the judge-reader agreement: the adaptive design against fair
baselines, on the same simulated pools and seeds (not part of the tests).

The pools: 8,500 source images of 1-8 judged edits each (about 38,000), three modalities
(half, 30 %, 20 %), add or remove, 15 diseases whose base overturn rates run from 4 % to 35 %,
later rounds harder, an image random effect (ICC 0.2 on the logit scale), 3 reads per edit.
Whether the readers' consensus overturns the judge on an edit is fixed per edit (the pool's
share of edits not overturned is the truth). Three pool models:
- score: the judge's weighted score says something (overturns are likelier near its threshold);
- size-linked: as score, and an image with more edits has more overturns;
- flat: the score says nothing (only disease, round and the image effect matter).

The designs, each drawing units with replacement at known probabilities, every draw weighted
by its inverse probability (Hansen-Hurwitz), stopping at the first draw where the anytime-valid
interval (app/confidence_sequence.py) is within the target:
- default today: what /studies/new draws for a validation study, equal numbers from each
  verdict x direction x modality stratum, with the sequence's bets as they were (on the hits,
  tuned to the budget);
- default, new bets: the same draws, the bets on the residual and tuned to the target;
- uniform edits, uniform images (each image with all its edits): new bets;
- adaptive: app/designs/adaptive/edits.py, edits drawn in batches where the readers' answer
  is least predictable, new bets (what the app does);
- difference: active inference's difference estimator on the same prediction (the
  prediction's pool mean plus each draw's weighted error), new bets: tried, not taken.

Reads are the distinct edits read times 3. Reported per pool model and design over STUDIES
studies: the median and 90th percentile of reads to the target (a study that does not get
there within the budget counts as the budget), the share of studies whose interval held the
truth at the stop and at every look up to it, and the bias of the estimate at the stop.

    .venv/bin/python benchmarks/adaptive_design.py [--studies 100]
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
from app.confidence_sequence import ratio_sequence, units_for_target
from app.designs.adaptive.edits import (
    EditFeatures,
    draw_edits,
    edit_probabilities,
    predicted_overturn,
)
from app.designs.adaptive.prior import UNIFORM_SHARE, Pool, PoolEdit, PoolImage

IMAGES, READERS, TARGET, ANTICIPATED = 8_500, 3, 0.05, 0.81
BUDGET, BATCH = 2_000, 50  # edit draws
MODALITIES = {"chest_xray": 0.5, "brain_mri": 0.3, "fundus": 0.2}
ICC = 0.2
MODELS = ("score", "size-linked", "flat")
DESIGNS = ("default today", "default, new bets", "uniform edits", "uniform images", "adaptive",
           "difference")


@dataclass
class Synthetic:
    pool: Pool
    agree: np.ndarray  # per edit: 1 when the readers' consensus upholds the judge
    strata: np.ndarray  # per edit: the default design's stratum (verdict x direction x modality)
    truth: float


def synthetic(model: str, seed: int) -> Synthetic:
    rng = np.random.default_rng(seed)
    names = list(MODALITIES)
    modality = rng.choice(len(names), IMAGES, p=list(MODALITIES.values()))
    sizes = rng.integers(1, 9, IMAGES)
    image = np.repeat(np.arange(IMAGES), sizes)
    n = len(image)
    disease = rng.integers(0, 5, n) + 5 * modality[image]  # five diseases per modality
    base = rng.uniform(0.04, 0.35, 15)
    rounds = np.minimum(5, rng.geometric(0.55, n))
    direction = rng.integers(0, 2, n)
    passed = rng.random(n) < 0.45
    score = np.clip(rng.normal(np.where(passed, 0.78, 0.6), 0.08), 0, 1)
    effect = rng.normal(0, np.sqrt(ICC / (1 - ICC) * np.pi**2 / 3), IMAGES)[image]
    logit = np.log(base[disease] / (1 - base[disease])) + 0.25 * (rounds - 1) + effect
    if model != "flat":
        logit = logit + 2.0 * (np.exp(-np.abs(score - 0.7) / 0.05) - 0.3)
    if model == "size-linked":
        logit = logit + 0.35 * (sizes[image] - 4.5)
    overturned = rng.random(n) < 1 / (1 + np.exp(-logit))
    images = []
    starts = np.concatenate([[0], np.cumsum(sizes)])
    for i in range(IMAGES):
        edits = tuple(PoolEdit(int(e), int(e), f"d{disease[e]}", int(rounds[e]), bool(passed[e]),
                               float(score[e])) for e in range(starts[i], starts[i + 1]))
        images.append(PoolImage(i, names[modality[i]], edits))
    agree = (~overturned).astype(float)
    strata = passed.astype(int) * 6 + direction * 3 + modality[image]
    return Synthetic(Pool(images), agree, strata, float(agree.mean()))


@dataclass
class Drawn:
    a: np.ndarray  # weighted hits per draw, scaled into [0, 1]
    b: np.ndarray  # weighted cases per draw, scaled alike
    edits: list[np.ndarray]  # the edits each draw brings to be read
    scale: tuple[float, float] | None = None  # a and b are (z - low) / (high - low), and 1


def stratified(data: Synthetic, rng: np.random.Generator) -> Drawn:
    """Equal numbers from every stratum (a stratum drawn at random for each draw), each edit
    weighted by its stratum's size."""
    n = len(data.agree)
    members = [np.nonzero(data.strata == h)[0] for h in range(12)]
    members = [m for m in members if len(m)]
    q = np.zeros(n)
    for m in members:
        q[m] = 1 / (len(members) * len(m))
    chosen = rng.choice(n, BUDGET, p=q)
    weight = (1 / n) / q[chosen]
    bound = float(((1 / n) / q).max())
    return Drawn(data.agree[chosen] * weight / bound, weight / bound, [np.array([c]) for c in chosen])


def uniform_edits(data: Synthetic, rng: np.random.Generator) -> Drawn:
    chosen = rng.integers(0, len(data.agree), BUDGET)
    return Drawn(data.agree[chosen], np.ones(BUDGET), [np.array([c]) for c in chosen])


def uniform_images(data: Synthetic, rng: np.random.Generator) -> Drawn:
    pool = data.pool
    hits = np.bincount(pool.edit_image, weights=data.agree, minlength=len(pool))
    bound = float(pool.sizes.max())
    chosen = rng.integers(0, len(pool), BUDGET // 4)  # about the same edits as the others
    edits = [np.arange(pool.first_edit[i], pool.first_edit[i] + int(pool.sizes[i])) for i in chosen]
    return Drawn(hits[chosen] / bound, pool.sizes[chosen] / bound, edits)


def adaptive(data: Synthetic, rng: np.random.Generator, features: EditFeatures) -> Drawn:
    seed = int(rng.integers(2**31))
    a, b, edits = [], [], []
    seen: list[int] = []
    for batch in range(BUDGET // BATCH):
        where = np.unique(np.array(seen, dtype=np.int64))
        q = edit_probabilities(features, where, 1 - data.agree[where])
        chosen = np.array(draw_edits(q, BATCH, seed, batch))
        weight = (1 / len(q)) / q
        bound = float(weight.max())  # fixed by q before the batch is drawn
        a.append(data.agree[chosen] * weight[chosen] / bound)
        b.append(weight[chosen] / bound)
        edits.extend(np.array([c]) for c in chosen)
        seen.extend(int(c) for c in chosen)
    return Drawn(np.concatenate(a), np.concatenate(b), edits)


def difference(data: Synthetic, rng: np.random.Generator, features: EditFeatures) -> Drawn:
    """Active inference's difference estimator (Zrnic & Candes 2024): the prediction's mean over
    the pool plus each draw's weighted error of prediction, drawn where the prediction is least
    sure (q by sqrt(d (1 - d)), half uniform). Each draw's value lies in [-1/f, 1 + 1/f]
    whatever is read: mapped affinely into [0, 1] for the sequence, and back."""
    seed = int(rng.integers(2**31))
    values, edits = [], []
    seen: list[int] = []
    low, high = -1 / UNIFORM_SHARE, 1 + 1 / UNIFORM_SHARE
    for batch in range(BUDGET // BATCH):
        where = np.unique(np.array(seen, dtype=np.int64))
        d = predicted_overturn(features, where, 1 - data.agree[where])
        spread = np.sqrt(d * (1 - d))
        q = (1 - UNIFORM_SHARE) * spread / spread.sum() + UNIFORM_SHARE / len(d)
        chosen = np.array(draw_edits(q, BATCH, seed, batch))
        predicted = 1 - d
        z = predicted.mean() + (data.agree[chosen] - predicted[chosen]) * (1 / len(q)) / q[chosen]
        values.append((z - low) / (high - low))
        edits.extend(np.array([c]) for c in chosen)
        seen.extend(int(c) for c in chosen)
    x = np.concatenate(values)
    return Drawn(x, np.ones(len(x)), edits, (low, high))


def outcome(data: Synthetic, drawn: Drawn, bets_on: str, planned: int) -> tuple[int, bool, bool, float]:
    """(reads to the target, the budget's if not reached; held the truth at the stop; at every
    look up to it; the estimate's error at the stop)."""
    sequence = ratio_sequence(drawn.a, drawn.b, planned=planned, bets_on=bets_on)
    low, high = sequence.low, sequence.high
    estimate_at = np.cumsum(drawn.a) / np.maximum(np.cumsum(drawn.b), 1e-12)
    if drawn.scale is not None:  # back from [0, 1] to the share
        lo, hi = drawn.scale
        low, high, estimate_at = (v * (hi - lo) + lo for v in (low, high, estimate_at))
    reached = np.nonzero((high - low) / 2 <= TARGET)[0]
    stop = int(reached[0]) if len(reached) else len(drawn.a) - 1
    read = np.unique(np.concatenate(drawn.edits[:stop + 1]))
    held = (low[:stop + 1] <= data.truth) & (data.truth <= high[:stop + 1])
    estimate = float(estimate_at[stop])
    return len(read) * READERS, bool(held[-1]), bool(held.all()), estimate - data.truth


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--studies", type=int, default=100)
    parser.add_argument("--seed", type=int, default=40)
    args = parser.parse_args()
    started = time.perf_counter()
    planned = units_for_target(ANTICIPATED, TARGET)  # the draws the target needs, tuned to
    results: dict[tuple[str, str], list[tuple[int, bool, bool, float]]] = {}
    with progress(Console(stderr=True), "simulated studies") as update:
        done = 0
        for m, model in enumerate(MODELS):
            data = synthetic(model, args.seed + m)
            features = EditFeatures.of(data.pool)
            rng = np.random.default_rng(args.seed + 100 + m)
            per_image = max(1, round(planned / float(data.pool.sizes.mean())))
            for _ in range(args.studies):
                seed = int(rng.integers(2**31))
                # The same seed for every design: the same random stream, design by design.
                by_default = stratified(data, np.random.default_rng(seed))
                runs = {
                    "default today": outcome(data, by_default, "hits", BUDGET),
                    "default, new bets": outcome(data, by_default, "residual", planned),
                    "uniform edits": outcome(data, uniform_edits(data, np.random.default_rng(seed)),
                                             "residual", planned),
                    "uniform images": outcome(data, uniform_images(data, np.random.default_rng(seed)),
                                              "residual", per_image),
                    "adaptive": outcome(data, adaptive(data, np.random.default_rng(seed), features),
                                        "residual", planned),
                    "difference": outcome(data, difference(data, np.random.default_rng(seed),
                                                           features), "residual", planned),
                }
                for design, result in runs.items():
                    results.setdefault((model, design), []).append(result)
                done += 1
                update(done, len(MODELS) * args.studies)
    print(f"{args.studies} studies per pool model; target +-{TARGET} on agreement; budget {BUDGET} "
          f"edit draws; new bets tuned to {planned} draws; {READERS} reads per edit")
    print(f"{'pool':<12}{'design':<20}{'median reads':>13}{'p90':>8}{'vs today':>10}"
          f"{'held at stop':>14}{'every look':>12}{'bias':>9}")
    for model in MODELS:
        today = np.median([r[0] for r in results[(model, "default today")]])
        for design in DESIGNS:
            rows = results[(model, design)]
            reads = np.array([r[0] for r in rows])
            print(f"{model:<12}{design:<20}{np.median(reads):>13,.0f}{np.percentile(reads, 90):>8,.0f}"
                  f"{np.median(reads) / today - 1:>+10.1%}{np.mean([r[1] for r in rows]):>14.1%}"
                  f"{np.mean([r[2] for r in rows]):>12.1%}{np.mean([r[3] for r in rows]):>+9.4f}")
    print(f"{time.perf_counter() - started:.0f} s")


if __name__ == "__main__":
    main()
