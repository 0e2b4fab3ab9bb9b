"""Reads to +-0.05 on the judge-reader agreement for the form's default design, uniform single
edits and the adaptive design, on the same simulated pools and seeds (not part of the tests).

Every design choice is the app's own code: the default's counts (``default_counts``, as the
form offers them), its draw (``sample_positions``), its units, weights and fixed order
(``stratum_weights``, ``fixed_order``, its readers' blocks of ``CASE_BLOCK``); the adaptive
design's batches (``state_of`` and ``replay_steered``: the evidence rule), each batch's
scale (its largest weight, as ``draw_edit_batch`` records it); the bets (``ratio_sequence``
tuned to ``units_to_meet`` at the form's planned agreement, as the watch does). Uniform
single edits are the adaptive design's batches with every q uniform.

Reads are counted as the app spends them: an adaptive or uniform study's figures take whole
batches once read, so a study stops at the end of the batch in which its interval reached the
target, and every edit of every batch up to it is read (3 readers each); the default's
readers read blocks of CASE_BLOCK cases of its fixed order, so it stops at the end of the
block. A study whose figures do not get there within the budget counts the budget's reads.

Pools: source images with 1 + Poisson(2.5) judged edits each, three modalities, add or
remove, five diseases per modality, later rounds harder, an image random effect on the logit
scale (ICC), the judge's score and the share of the image changed; whether the readers'
consensus overturns the judge is drawn once per edit, so the pool's agreement is the truth.
- icc 0.2 / 0.80, icc 0.5 size-linked / 0.80 (an image with more edits has more overturns),
  mis-specified / 0.80 (a hidden "hard" flag no feature shows), icc 0.2 / 0.95;
- score-informative: overturns are likely near the judge's threshold and where much of the
  image changed, rare elsewhere (what the model can see);
- 25 and 40 source images (about 90 and 140 edits): coverage over the whole budget.

    .venv/bin/python benchmarks/adaptive_design.py [--studies 100] [--small-studies 300]
"""

import argparse
import multiprocessing
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from rich.console import Console

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from app.cli.progress import progress
from app.confidence_sequence import ratio_sequence
from app.designs.adaptive.draws import (
    EditPool,
    Read,
    replay_steered,
    rule_target,
    state_of,
    weights_of,
)
from app.designs.adaptive.edits import draw_edits
from app.designs.adaptive.prior import PoolEdit, PoolImage
from app.image_order import CASE_BLOCK, fixed_order
from app.studies.allocation import stratum_weights
from app.studies.allocation_outlook import default_counts
from app.studies.design import sample_positions
from app.studies.design_traits import default_design
from app.studies.forms import StudyForm
from app.studies.pool import StratumRow, stratum_key
from app.studies.targets import PLANNED_AGREEMENT, units_to_meet

READERS, TARGET, BUDGET = 3, 0.05, 2_000  # draws (or the default's cases)
BATCHES = (StudyForm.model_fields["batch_images"].default, 50)  # the form's batch first
DEFAULT = default_design()  # what /studies/new makes unless told otherwise
MODALITIES = {"chest_xray": 0.5, "brain_mri": 0.3, "fundus": 0.2}


@dataclass(frozen=True)
class Model:
    name: str
    images: int
    agreement: float
    icc: float = 0.2
    size_linked: bool = False
    hidden_hard: bool = False
    score_informative: bool = False

    @property
    def small(self) -> bool:
        return self.images < 100


MODELS = (
    Model("icc 0.2, 0.80", 3000, 0.80),
    Model("icc 0.5, size-linked, 0.80", 3000, 0.80, icc=0.5, size_linked=True),
    Model("mis-specified, 0.80", 3000, 0.80, hidden_hard=True),
    Model("icc 0.2, 0.95", 3000, 0.95),
    Model("score-informative", 3000, 0.85, score_informative=True),
    Model("25 images, 0.80", 25, 0.80),
    Model("40 images, 0.80", 40, 0.80),
)


@dataclass
class Synthetic:
    edits: EditPool
    agree: np.ndarray  # per pool edit: 1 when the readers' consensus upholds the judge
    strata: list[str]  # per pool edit: its stratum under the default design's facets
    truth: float


def synthetic(model: Model, seed: int) -> Synthetic:
    rng = np.random.default_rng(seed)
    names = list(MODALITIES)
    modality = rng.choice(len(names), model.images, p=list(MODALITIES.values()))
    sizes = 1 + rng.poisson(2.5, model.images)
    image = np.repeat(np.arange(model.images), sizes)
    n = len(image)
    disease = rng.integers(0, 5, n) + 5 * modality[image]
    rounds = np.minimum(5, rng.geometric(0.55, n))
    direction = rng.integers(0, 2, n)
    passed = rng.random(n) < 0.45
    score = np.clip(rng.normal(np.where(passed, 0.78, 0.6), 0.08), 0, 1)
    changed = np.clip(rng.beta(2, 12, n), 0, 1)
    effect = rng.normal(0, np.sqrt(model.icc / (1 - model.icc) * np.pi**2 / 3), model.images)[image]
    logit = rng.normal(0, 0.5, 15)[disease] + 0.25 * (rounds - 1) + effect
    if model.size_linked:
        logit = logit + 0.35 * (sizes[image] - 3.5)
    if model.hidden_hard:
        logit = logit + 2.0 * (rng.random(n) < 0.15)
    if model.score_informative:
        # In the terms the model sees: the score's nearness to the threshold as the app
        # measures it (app/designs/adaptive/prior.py), and the share of the image changed.
        near = np.exp(-np.abs(score - 0.7) / 0.1)
        logit = 10.0 * near + 25.0 * (changed - 0.14) + 0.3 * effect
    else:
        logit = logit + 0.6 * np.exp(-np.abs(score - 0.7) / 0.05)
    # The intercept that gives the model's agreement (bisection on the pool's mean).
    low, high = -15.0, 15.0
    for _ in range(60):
        middle = (low + high) / 2
        if np.mean(1 / (1 + np.exp(-(logit + middle)))) > 1 - model.agreement:
            high = middle
        else:
            low = middle
    overturned = rng.random(n) < 1 / (1 + np.exp(-(logit + low)))
    starts = np.concatenate([[0], np.cumsum(sizes)])
    images = [PoolImage(i, names[modality[i]], tuple(
        PoolEdit(int(e), int(e), f"d{disease[e]}", int(rounds[e]), bool(passed[e]),
                 float(score[e]), float(changed[e]), None)
        for e in range(starts[i], starts[i + 1]))) for i in range(model.images)]
    edits = EditPool.of(images)
    # EditPool orders edits by image as given, so position e is edit e.
    values = {"verdict": np.where(passed, "pass", "fail"),
              "direction": np.where(direction == 1, "add", "remove"),
              "modality": np.array(names)[modality[image]]}
    strata = [stratum_key({f: str(values[f][e]) for f in DEFAULT.default_facets},
                          DEFAULT.default_facets) for e in range(n)]
    agree = (~overturned).astype(float)
    return Synthetic(edits, agree, strata, float(agree.mean()))


@dataclass(frozen=True)
class Outcome:
    reads: int
    reached: bool
    held_stop: bool  # the interval held the truth at the stop
    held_every: bool  # at every look up to the stop
    held_budget: bool  # at every look over the whole budget
    error: float  # the estimate at the stop minus the truth


PLANNED = units_to_meet({"agreement": TARGET}, anticipated_agreement=PLANNED_AGREEMENT)


def _outcome(data: Synthetic, a: np.ndarray, b: np.ndarray, ends: np.ndarray,
             read_at: np.ndarray, planned: int, bounds: np.ndarray | None = None) -> Outcome:
    """``ends``: the units at which the study's figures are seen (ends of batches or
    blocks); ``read_at``: the reads spent by the end of each unit; ``bounds``: each unit's
    batch bound, as the watch gives the sequence."""
    sequence = ratio_sequence(a, b, planned=planned, bounds=bounds)
    seen = ends[sequence.half_width[ends] <= TARGET]
    stop = int(seen[0]) if len(seen) else len(a) - 1
    held = (sequence.low <= data.truth) & (data.truth <= sequence.high)
    scale = np.ones(len(a)) if bounds is None else bounds  # each unit on its own scale
    estimate = float((a * scale)[:stop + 1].sum() / (b * scale)[:stop + 1].sum())
    return Outcome(int(read_at[stop]), bool(len(seen)), bool(held[stop]),
                   bool(held[:stop + 1].all()), bool(held.all()), estimate - data.truth)


def default_study(data: Synthetic, seed: int, budget: int = BUDGET) -> Outcome:
    """The form's default: counts in proportion to the pool over the default facets, drawn per
    stratum with the plan's seed, each case its own unit in a fixed random order, weighted
    to its stratum's share; readers read blocks of CASE_BLOCK cases."""
    members: dict[str, list[int]] = {}
    for e, key in enumerate(data.strata):
        members.setdefault(key, []).append(e)
    rows = [StratumRow(k, k, len(v)) for k, v in sorted(members.items())]
    counts = default_counts(DEFAULT.traits, rows, total=min(budget, len(data.agree)))
    sample = [members[k][i] for k, n in counts.items() if n
              for i in sample_positions(seed, k, len(members[k]), n)]
    weights = stratum_weights({r.key: r.pool for r in rows}, counts)
    order = fixed_order(f"secret-{seed}", sample)
    cases = np.array(order, dtype=np.int64)
    scale = np.array([weights[data.strata[c]] for c in cases]) / max(weights.values())
    units = np.arange(len(cases))
    ends = np.minimum(units // CASE_BLOCK * CASE_BLOCK + CASE_BLOCK - 1, len(cases) - 1)
    return _outcome(data, data.agree[cases] * scale, scale, np.unique(ends),
                    READERS * (ends + 1), planned=min(PLANNED, len(cases)))


def drawn_study(data: Synthetic, seed: int, batch: int, adaptive: bool,
                budget: int = BUDGET) -> Outcome:
    """The adaptive design's batches (``adaptive``: its evidence rule; else every q uniform),
    each batch drawn from the reads of the batches before the one being read (the app draws
    the next batch when half of the current one is left)."""
    n = len(data.agree)
    a, b, bounds, drawn = [], [], [], []
    read: dict[int, Read] = {}
    previous = None
    # q per evidence: a state whose evidence is the previous batch's draws with that q
    # (replay's own work, done once); the evidence itself is kept, so its id stays its own.
    steer_of: dict[int, tuple[list[object], np.ndarray]] = {}
    weight_of = np.zeros(n)
    for number in range(budget // batch):
        if adaptive:
            state = state_of(number, batch, seed, read, rule_target({"agreement": TARGET}), previous)
            key = id(state["observed"])
            if key not in steer_of:
                steer_of[key] = (state["observed"], replay_steered(data.edits, state)[1].q)
            q = steer_of[key][1]
            positions = draw_edits(q, batch, seed, number)
            previous = state
        else:
            q = np.full(n, 1 / n)
            positions = draw_edits(q, batch, seed, number)
        weights = weights_of(q)
        bound = float(weights.max())
        chosen = np.array(positions)
        a.append(data.agree[chosen] * weights[chosen] / bound)
        b.append(weights[chosen] / bound)
        bounds.append(np.full(len(chosen), bound))
        drawn.append(chosen)
        if number >= 1:  # the batch before this one is read by now
            for e in drawn[number - 1]:
                weight_of[e] += weights[e]
                read[int(e)] = Read(bool(data.agree[e] == 0), float(weight_of[e]))
    order = np.concatenate(drawn)
    first = np.zeros(len(order), dtype=bool)
    first[np.unique(order, return_index=True)[1]] = True
    new_edits = np.cumsum(first)
    ends = np.arange(batch - 1, len(order), batch)
    read_at = READERS * new_edits[np.minimum(np.arange(len(order)) // batch * batch + batch - 1,
                                             len(order) - 1)]
    return _outcome(data, np.concatenate(a), np.concatenate(b), ends, read_at,
                    planned=min(PLANNED, budget), bounds=np.concatenate(bounds))


DESIGNS = ("default", *(f"uniform, batch {k}" for k in BATCHES),
           *(f"adaptive, batch {k}" for k in BATCHES))


def _run(job: tuple[int, int, int]) -> tuple[int, dict[str, Outcome]]:
    m, pool_seed, seed = job
    data = _pool(m, pool_seed)
    runs = {"default": default_study(data, seed)}
    for k in BATCHES:
        runs[f"uniform, batch {k}"] = drawn_study(data, seed, k, adaptive=False)
        runs[f"adaptive, batch {k}"] = drawn_study(data, seed, k, adaptive=True)
    return m, runs


_pools: dict[tuple[int, int], Synthetic] = {}


def _pool(m: int, seed: int) -> Synthetic:
    if (m, seed) not in _pools:
        _pools[(m, seed)] = synthetic(MODELS[m], seed)
    return _pools[(m, seed)]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--studies", type=int, default=100, help="per large pool")
    parser.add_argument("--small-studies", type=int, default=300, help="per small pool")
    parser.add_argument("--seed", type=int, default=56)
    parser.add_argument("--models", default="", help="comma-separated model numbers (all)")
    parser.add_argument("--processes", type=int, default=2)
    args = parser.parse_args()
    started = time.perf_counter()
    chosen = [int(x) for x in args.models.split(",")] if args.models else range(len(MODELS))
    jobs = []
    for m in chosen:
        rng = np.random.default_rng(args.seed + m)
        count = args.small_studies if MODELS[m].small else args.studies
        # Small pools: a new pool every 100 studies (3 pools at 300); large: one pool.
        for i in range(count):
            jobs.append((m, args.seed + 1000 * m + (i // 100 if MODELS[m].small else 0),
                         int(rng.integers(2**31))))
    results: dict[tuple[int, str], list[Outcome]] = {}
    with progress(Console(stderr=True), "simulated studies") as update, \
            multiprocessing.Pool(args.processes) as workers:
        for done, (m, runs) in enumerate(workers.imap_unordered(_run, jobs, chunksize=4), 1):
            for design, outcome in runs.items():
                results.setdefault((m, design), []).append(outcome)
            update(done, len(jobs))
    print(f"target +-{TARGET} on agreement; budget {BUDGET} draws (the default: {BUDGET} cases, "
          f"or the whole pool); bets tuned to {PLANNED} units (the form's planned agreement "
          f"{PLANNED_AGREEMENT:g}); {READERS} reads per edit, counted by whole batch or block")
    print(f"{'pool':<28}{'design':<21}{'studies':>8}{'median reads':>13}{'p90':>7}"
          f"{'vs uniform':>11}{'mean reads':>11}{'vs uniform':>11}{'reached':>9}"
          f"{'held stop':>10}{'every look':>11}{'over budget':>12}{'bias':>9}")
    for m in chosen:
        uniform = {k: [r.reads for r in results[(m, f"uniform, batch {k}")]] for k in BATCHES}
        for design in DESIGNS:
            rows = results[(m, design)]
            reads = np.array([r.reads for r in rows])
            # The default against uniform draws at the form's batch; the others at their own.
            base = uniform[int(design.rsplit(" ", 1)[1]) if "batch" in design else BATCHES[0]]
            print(f"{MODELS[m].name:<28}{design:<21}{len(rows):>8}{np.median(reads):>13,.0f}"
                  f"{np.percentile(reads, 90):>7,.0f}{np.median(reads) / np.median(base):>10.2f}x"
                  f"{reads.mean():>11,.0f}{reads.mean() / np.mean(base):>10.2f}x"
                  f"{np.mean([r.reached for r in rows]):>9.0%}"
                  f"{np.mean([r.held_stop for r in rows]):>10.1%}"
                  f"{np.mean([r.held_every for r in rows]):>11.1%}"
                  f"{np.mean([r.held_budget for r in rows]):>12.1%}"
                  f"{np.mean([r.error for r in rows]):>+9.4f}")
    print(f"{time.perf_counter() - started:.0f} s")


if __name__ == "__main__":
    main()
