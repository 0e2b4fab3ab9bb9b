"""Watching a running study: each endpoint's interval that holds at every look
(app/confidence_sequence.py), whether the study's target for it is met, and the reads still
needed to meet it, projected.

The study's source images are put in a random order fixed when the study was made (from its
secret, which no reader sees). An image enters the sequence once it is fully read and every
image before it in that order has entered; its cases are compared as they stood then, with
the readers' consensus on the primary question and without adjudication (an adjudication
comes later and would change a past observation). Ties are left out, as in the primary
analysis before adjudication. The order of completion is no such draw: an image with more
cases completes later, and where a share depends on an image's size the early images are
not like the late ones, and a miss early on is carried to the end by the running
intersection (time-uniform coverage fell to 0.53 in benchmarks/sequential_coverage.py
--size-linked). A fixed random order makes the images arrive as draws from the study's
sample whatever their size; complete images behind one still being read wait, and are
counted as waiting. An adaptive study's sequence follows its draws instead, batch by batch,
which nothing about the reads can reorder.

The projection continues the observed sequence with images resampled from those completed
(a fixed seed), up to the images the study has left; it is a projection, labelled so, and
needs at least MIN_IMAGES_TO_PROJECT completed images.
"""

import bisect
import json
import math
from collections.abc import Callable, Hashable
from dataclasses import asdict, dataclass, field, replace
from datetime import datetime
from typing import Any

import numpy as np

from app.agreement.completion import ImageObservation, completed_by_question, in_fixed_order
from app.agreement.projection import projected
from app.agreement.reads import StudyReads
from app.confidence_sequence import ALPHA, METHOD, ratio_sequence
from app.image_order import fixed_order
from pipeline.vocabulary import QUESTIONS

# endpoint -> (what it is, whether a compared case counts: judge, reference -> hit)
ENDPOINTS: dict[str, tuple[str, Callable[[bool, bool], bool]]] = {
    "agreement": ("agreement of the judge with the readers", lambda judge, ref: judge == ref),
    "too_strict": ("judge too strict (fails what the readers pass)",
                   lambda judge, ref: ref and not judge),
    "too_lenient": ("judge too lenient (passes what the readers fail)",
                    lambda judge, ref: judge and not ref),
}
MIN_IMAGES_TO_PROJECT = 10


def parse_targets(raw: str | None) -> dict[str, float]:
    return {k: float(v) for k, v in json.loads(raw).items()} if raw else {}


@dataclass(frozen=True)
class EndpointWatch:
    endpoint: str
    label: str
    estimate: float | None
    low: float | None
    high: float | None
    cases: int
    images: int
    target: float | None
    met: bool
    met_after_images: int | None
    met_at: datetime | None
    # Projected, when not met: the further source images and reads needed (None: not
    # projected yet, or not reached with this study's images), and the half-width expected
    # once every image of the study is read.
    images_needed: int | None
    reads_needed: int | None
    final_half_width: float | None
    met_after_reads: int | None = None  # first reads in when the target was met
    # The interval's half-width as the figures grew: (compared cases so far, half-width),
    # at most PATH_POINTS of them, the last always kept; for the study page's plot.
    path: tuple[tuple[int, float], ...] = field(default=(), repr=False)

    @property
    def half_width(self) -> float | None:
        return None if self.low is None or self.high is None else (self.high - self.low) / 2

    def as_dict(self) -> dict[str, Any]:
        found = asdict(self)
        del found["path"]  # drawn, not reported
        found["met_at"] = self.met_at.isoformat() if self.met_at else None
        return found | {"half_width": self.half_width}


@dataclass(frozen=True)
class Watch:
    question: str
    reads_done: int
    reads_planned: int
    images_complete: int
    images_total: int
    endpoints: list[EndpointWatch]
    agreement: dict[str, EndpointWatch]  # each question's judge-reader agreement
    confidence: float
    method: str
    # An adaptive study: the draws made and the most it may make. Its sequence counts draws
    # (an image drawn twice is two draws), a fixed design's counts images.
    draws_made: int | None = None
    budget: int | None = None
    # Fully read images that wait behind one earlier in the study's fixed order.
    images_waiting: int = 0
    # Cases of the entered images that the readers left tied on the question: left out of
    # the figures until adjudicated (and of this sequence for good: see the module's doc).
    ties: int = 0
    # A fixed study whose cases are its units, each weighted to its stratum's share of the
    # pool: its figures estimate the data set's share, not the sample's.
    by_case: bool = False

    # Units in the figures (images, or by_case cases); None: every complete image not waiting.
    entered: int | None = None

    @property
    def images_entered(self) -> int:
        return self.entered if self.entered is not None else self.images_complete - self.images_waiting

    @property
    def all_read(self) -> bool:
        return self.reads_done >= self.reads_planned and (
            self.budget is None or (self.draws_made or 0) >= self.budget)

    @property
    def unit(self) -> str:
        return "draw" if self.budget is not None else "case" if self.by_case else "image"

    @property
    def targets_set(self) -> bool:
        return any(e.target is not None for e in self.endpoints)

    @property
    def precise_enough(self) -> bool:
        """Every endpoint with a target has met it (and at least one has a target)."""
        return self.targets_set and all(e.met for e in self.endpoints if e.target is not None)

    def as_dict(self) -> dict[str, Any]:
        return {"question": self.question, "reads_done": self.reads_done,
                "reads_planned": self.reads_planned, "images_complete": self.images_complete,
                "images_total": self.images_total, "confidence": self.confidence,
                "method": self.method, "precise_enough": self.precise_enough,
                "unit": self.unit, "draws_made": self.draws_made, "budget": self.budget,
                "images_waiting": self.images_waiting, "ties": self.ties,
                "weighted_to_pool": self.budget is not None or self.by_case,
                "endpoints": [e.as_dict() for e in self.endpoints],
                "agreement": {q: e.as_dict() for q, e in self.agreement.items()}}


def _counts(images: list[ImageObservation],
            hit: Callable[[bool, bool], bool]) -> tuple[np.ndarray, np.ndarray]:
    hits = np.array([sum(hit(j, r) for j, r in o.judge_ref) for o in images], dtype=float)
    sizes = np.array([len(o.judge_ref) for o in images], dtype=float)
    return hits, sizes


@dataclass(frozen=True)
class Draw:
    """One draw of an adaptive study (app/studies/models.py StudyDraw), as the figures take it."""

    batch: int
    position: int
    unit: int  # the drawn source image's id; or, where edits are drawn, the edit's item id
    weight: float  # (1 / N) / q: the inverse of the draw's probability, over N
    bound: float  # the batch's largest weight x pool size: the scale fixed before the draw


@dataclass(frozen=True)
class _Series:
    """One endpoint's observations in sequence order, scaled into [0, 1] for the sequence."""

    a: np.ndarray  # scaled (weighted) hits
    b: np.ndarray  # scaled (weighted) compared cases
    times: list[datetime | None]  # when each observation came in
    cases: int  # compared cases behind them (each image once)
    images: int  # source images among them holding a compared case
    sizes: np.ndarray  # the compared cases each observation adds (a repeated draw: none)
    # Each observation's bound where the bounds differ (an adaptive study's batches), for
    # the sequence's bets (app/confidence_sequence.py); None where one bound scales them all.
    bounds: np.ndarray | None = None

    @property
    def estimate(self) -> float | None:
        """The weighted share (Hansen-Hurwitz): each observation back on its own scale, so
        a batch with a larger bound is not counted for less."""
        a, b = (self.a, self.b) if self.bounds is None else (self.a * self.bounds,
                                                              self.b * self.bounds)
        return float(a.sum() / b.sum()) if b.sum() > 0 else None


def _images_of(images: list[ImageObservation], units: list[int],
               cluster_of: dict[Hashable, Hashable] | None) -> int:
    """The source images among these units (units that are cases count their images)."""
    if cluster_of is None:
        return len(units)
    return len({cluster_of.get(images[i].cluster, images[i].cluster) for i in units})


def _series(images: list[ImageObservation], hit: Callable[[bool, bool], bool], shape: "_Study") -> _Series:
    """Completed images in completion order; or, in an adaptive study, every draw of each
    batch whose images are all complete (batches in order, draws in draw order, weighted by
    their inverse probability): a draw's place is fixed when it is drawn, whatever its
    image's reads, so the sequence stays a sequence of independent draws."""
    hits, sizes = _counts(images, hit)
    draws, cluster_of = shape.draws, shape.cluster_of
    if draws is None:
        scale = (np.array([shape.scale.get(o.cluster, 0.0) for o in images])
                 if shape.scale is not None else np.full(len(images), 1 / shape.bound))
        compared = [i for i in range(len(images)) if sizes[i] > 0]
        return _Series(hits * scale, sizes * scale, [o.completed_at for o in images],
                       int(sizes.sum()), _images_of(images, compared, cluster_of), sizes)
    at = {o.cluster: i for i, o in enumerate(images)}
    taken: list[Draw] = []
    for number in sorted({d.batch for d in draws}):
        batch = sorted((d for d in draws if d.batch == number), key=lambda d: d.position)
        if any(d.unit not in at for d in batch):
            break  # a later batch waits for this one: the sequence's order is the draws'
        taken.extend(batch)
    index = np.array([at[d.unit] for d in taken], dtype=np.int64)
    scale = np.array([d.weight / d.bound for d in taken])
    distinct = list(dict.fromkeys(int(i) for i in index))
    compared = [i for i in distinct if sizes[i] > 0]
    # Units drawn as edits count their source images, not themselves.
    return _Series(hits[index] * scale if len(index) else np.zeros(0),
                   sizes[index] * scale if len(index) else np.zeros(0),
                   [images[i].completed_at for i in index],
                   int(sizes[distinct].sum()) if distinct else 0,
                   _images_of(images, compared, cluster_of), _first_times(index, sizes),
                   np.array([d.bound for d in taken]) if taken else None)


@dataclass(frozen=True)
class _Study:
    """What every endpoint's sequence shares: the images' bound, the study's size, and what
    is left of it."""

    bound: int  # the most cases an image of the study holds, known when it was drawn
    images: int  # the study's planned images (an adaptive study: the draws it may make)
    left: int
    reads_per_image: float
    draws: list[Draw] | None = None
    # Where the units are edits: each edit's item id -> its source image, to count images.
    cluster_of: dict[Hashable, Hashable] | None = None
    # The units the sequence's bets are tuned to (None: ``images``, the study's size).
    tuned_to: int | None = None
    # A fixed study weighted to its pool: each unit's weight over the largest (fixed when the
    # study was made), by unit; None: every unit counts alike, scaled by ``bound``.
    scale: dict[Hashable, float] | None = None


def _endpoint(images: list[ImageObservation], name: str, target: float | None,
              shape: _Study) -> EndpointWatch:
    label, hit = ENDPOINTS[name]
    series = _series(images, hit, shape)
    # Bets tuned to the study's size, narrowest when every image is read; or, where the study
    # stops at a target, to the units that target needs.
    planned = max(1, shape.tuned_to or shape.images)
    sequence = ratio_sequence(series.a, series.b, planned=planned, bounds=series.bounds)
    cases = series.cases
    met_index = (np.nonzero(sequence.half_width <= target)[0] if target is not None and cases
                 else np.zeros(0, dtype=int))
    met = bool(len(met_index))
    images_needed = final = None
    if target is not None and not met and series.images >= MIN_IMAGES_TO_PROJECT:
        images_needed, final = projected(series.a, series.b, series.bounds, shape.left,
                                         target, planned)
    return EndpointWatch(
        endpoint=name, label=label, estimate=series.estimate,
        low=float(sequence.low[-1]) if cases else None,
        high=float(sequence.high[-1]) if cases else None, cases=cases,
        images=series.images, target=target, met=met,
        met_after_images=int(met_index[0]) + 1 if met else None,
        met_at=series.times[int(met_index[0])] if met else None,
        images_needed=images_needed,
        reads_needed=(math.ceil(images_needed * shape.reads_per_image)
                      if images_needed is not None else None),
        final_half_width=final, path=_path(series.sizes, sequence.half_width))


PATH_POINTS = 300


def _first_times(index: np.ndarray, sizes: np.ndarray) -> np.ndarray:
    """Each draw's compared cases where its unit is drawn for the first time, else 0."""
    added = np.zeros(len(index))
    if len(index):
        first = np.unique(index, return_index=True)[1]
        added[first] = sizes[index[first]]
    return added


def _path(sizes: np.ndarray, half_width: np.ndarray) -> tuple[tuple[int, float], ...]:
    """(compared cases so far, half-width) after each observation from the first that
    compared a case, thinned evenly to PATH_POINTS with the last kept."""
    seen = np.cumsum(sizes)
    keep = np.flatnonzero(seen > 0)
    if len(keep) > PATH_POINTS:
        keep = keep[np.unique(np.linspace(0, len(keep) - 1, PATH_POINTS).round().astype(int))]
    return tuple((int(seen[i]), float(half_width[i])) for i in keep)


def watch(data: StudyReads, question: str, targets: dict[str, float], *,
          draws: list[Draw] | None = None, budget: int | None = None,
          secret: str = "", by_item: bool = False, tuned_to: int | None = None,
          weights: dict[str, float] | None = None) -> Watch:
    """The primary question's endpoints with their targets, and every question's agreement.
    A fixed design's units enter in the random order its ``secret`` fixes: its source images,
    or, with ``weights`` (stratum -> each case's weight to the pool), its cases, each
    weighted so that the figures estimate the pool's share (app/studies/allocation.py). An
    adaptive study gives its ``draws`` and ``budget`` (the draws it may make): its figures
    weight each draw by its inverse probability (Hansen-Hurwitz, as a ratio); ``by_item``
    when its draws are edits, each its own unit. ``tuned_to``: the units the targets are
    expected to need (draws, or for a fixed design cases), which the bets are tuned to
    instead of the study's size, so that a study stopping at its targets stops sooner."""
    per_image: dict[Hashable, int] = {}
    for case in data.cases:
        per_image[case.cluster] = per_image.get(case.cluster, 0) + 1
    by_case = draws is None and weights is not None
    by_item = by_item or by_case
    planned = sum(len(c.assigned) for c in data.cases)
    done = sum(1 for r in data.reads if not r.repeat)
    by_question = completed_by_question(data, QUESTIONS, by_item=by_item)
    complete = completed_units = len(by_question[question])
    if by_item:  # images all of whose drawn edits are complete
        done_items = {o.cluster for o in by_question[question]}
        waiting = {c.cluster for c in data.cases if c.item_id not in done_items}
        complete = len(per_image.keys() - waiting)
    cluster_of: dict[Hashable, Hashable] | None = (
        {c.item_id: c.cluster for c in data.cases} if by_item else None)
    units: dict[Hashable, int] = {c.item_id: 1 for c in data.cases} if by_case else per_image
    if draws is None:
        order = fixed_order(secret, units)  # sorted once, for every question
        by_question = {q: in_fixed_order(found, order) for q, found in by_question.items()}
    images = by_question[question]
    if draws is None:
        # ``tuned_to`` counts cases: the units holding that many, never past the study's.
        cases = sum(per_image.values())
        tuned_units = (min(len(units), math.ceil(tuned_to * len(units) / cases))
                       if tuned_to and cases else None)
        scale: dict[Hashable, float] | None = None
        if by_case:
            assert weights is not None
            bound = max(weights.values(), default=1.0)
            scale = {c.item_id: weights.get(c.stratum, 0.0) / bound for c in data.cases}
        shape = _Study(bound=max(units.values(), default=1), images=len(units),
                       left=len(units) - len(images),
                       reads_per_image=planned / len(units) if units else 0.0,
                       tuned_to=tuned_units, cluster_of=cluster_of, scale=scale)
    else:
        # Reads per draw as drawn so far; the draws left are the budget's.
        shape = _Study(bound=1, images=max(budget or 0, len(draws), 1),
                       left=max(0, (budget or 0) - len(draws)),
                       reads_per_image=planned / len(draws) if draws else 0.0, draws=draws,
                       cluster_of=cluster_of,
                       tuned_to=min(tuned_to, budget or tuned_to) if tuned_to else None)
    answered = sorted(r.answered_at for r in data.reads if not r.repeat and r.answered_at)
    endpoints = [_reads_at_met(_endpoint(images, name, targets.get(name), shape), answered)
                 for name in ENDPOINTS]
    agreement = {q: endpoints[0] if q == question else _endpoint(found, "agreement", None, shape)
                 for q, found in by_question.items()}
    return Watch(question=question, reads_done=done, reads_planned=planned,
                 images_complete=complete, images_total=len(per_image), endpoints=endpoints,
                 # Fully read units (images, or cases) behind one still being read.
                 images_waiting=completed_units - len(images) if draws is None else 0,
                 entered=len(images) if draws is None else None,
                 ties=sum(o.ties for o in images),
                 agreement=agreement, confidence=1 - ALPHA, method=METHOD,
                 draws_made=len(draws) if draws is not None else None,
                 budget=shape.images if draws is not None else None, by_case=by_case)


def _reads_at_met(e: EndpointWatch, answered: list[datetime]) -> EndpointWatch:
    if e.met_at is None:
        return e
    return replace(e, met_after_reads=bisect.bisect_right(answered, e.met_at))
