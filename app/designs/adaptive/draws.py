"""An adaptive study that draws judged edits: its pool of edits, frozen when it is made, and
its batches of edit draws, each recorded with the state it was drawn from
(app/designs/adaptive/edits.py samples them; app/designs/adaptive/batches.py places them in
the readers' lists, as it does a batch of images).

A batch's state holds what its probabilities were computed from: its number, size, seed and
mixing share, and every read edit with whether the readers overturned the judge. With the
frozen pool, ``replay`` draws the batch again, identically.
"""

import json
import secrets
from dataclasses import dataclass
from typing import Any

import numpy as np
from sqlmodel import Session, col, select

from app.cases.filters import recorded_filter
from app.designs.adaptive.batches import pool_images
from app.designs.adaptive.edits import (
    EditFeatures,
    Evidence,
    Steer,
    draw_edits,
    edit_probabilities,
    steered_probabilities,
)
from app.designs.adaptive.prior import UNIFORM_SHARE, Pool, PoolImage
from app.studies.draw_plan import UNIT
from app.studies.models import Study, StudyBatch, StudyDraw, StudyItem
from app.studies.pool import verdicts_of_record
from app.studies.reader_instruction import reader_instructions


@dataclass(frozen=True)
class EditPool:
    """The frozen pool: what the sampler knows of each edit, and each edit's attempt, task and
    image, in pool order."""

    features: EditFeatures
    attempt: np.ndarray
    task: np.ndarray
    image: np.ndarray  # source image id
    stratum: list[str]

    @classmethod
    def of(cls, images: list[PoolImage]) -> "EditPool":
        pool = Pool(images)
        edits = [(e, p) for p in pool.images for e in p.edits]
        return cls(EditFeatures.of(pool),
                   np.array([e.attempt_id for e, _ in edits], dtype=np.int64),
                   np.array([e.task_id for e, _ in edits], dtype=np.int64),
                   np.array([p.image for _, p in edits], dtype=np.int64),
                   [p.stratum for _, p in edits])

    def __len__(self) -> int:
        return len(self.attempt)

    def positions(self, attempts: list[int]) -> np.ndarray:
        at = {int(a): i for i, a in enumerate(self.attempt)}
        return np.array([at[a] for a in attempts if a in at], dtype=np.int64)


def frozen_edits(session: Session, study: Study) -> EditPool:
    """The study's pool as it was made: the edits recorded then (one that has lost its
    verdict since drops out)."""
    raw = json.loads(study.selection)
    kept = set(raw.get("pool_edits", []))
    images = []
    for image in pool_images(session, recorded_filter(raw.get("filter", {}))):
        edits = tuple(e for e in image.edits if e.attempt_id in kept)
        if edits:
            images.append(PoolImage(image.image, image.stratum, edits))
    return EditPool.of(images)


def edit_selection(pool: list[PoolImage], budget: int, batch_size: int) -> dict[str, Any]:
    """What an edit-drawing adaptive study records in its selection: the pool's edits (frozen),
    its images per stratum, the budget of draws and the batch size."""
    strata, counts = np.unique([p.stratum for p in pool], return_counts=True)
    return {"unit": UNIT, "pool_edits": sorted(e.attempt_id for p in pool for e in p.edits),
            "pool_images": [p.image for p in pool], "budget_draws": budget,
            "batch_draws": batch_size, "uniform_share": UNIFORM_SHARE,
            "pool": {str(h): int(n) for h, n in zip(strata, counts, strict=True)}}


RULE = "evidence"  # a state drawn by the evidence rule (edits.py steered_probabilities)
REFIT_GROWTH = 1.25  # the evidence grows by a quarter before the model is fitted again
DEFAULT_TARGET = 0.05  # the half-width the rule weighs reads against, without a study target


def weights_of(q: np.ndarray) -> np.ndarray:
    """Each pool edit's weight in a batch drawn by q, (1 / N) / q; the largest is the batch's
    bound, the scale of its draws in the sequence, fixed before the draw."""
    return (1 / len(q)) / q


def rule_target(targets: dict[str, float]) -> float:
    """The half-width the evidence rule weighs reads against: the study's target on
    agreement, else its tightest target, else the rule's default."""
    return targets.get("agreement") or min(targets.values(), default=DEFAULT_TARGET)


@dataclass(frozen=True)
class Read:
    """A read edit as the sampler learns from it: overturned or not, and the summed inverse-
    probability weight of the draws that brought it."""

    overturned: bool
    weight: float = 1.0


def state_of(number: int, size: int, seed: int, observed: dict[int, Read],
             target: float = DEFAULT_TARGET, previous: dict[str, Any] | None = None) -> dict[str, Any]:
    """A batch's state. Its evidence is what was read, or the previous batch's where that has
    not grown by REFIT_GROWTH since: a model fitted again on a few more reads moves the
    draws by noise, and costs the server as much as the first fit."""
    evidence = [{"attempt": a, "overturned": r.overturned, "weight": r.weight}
                for a, r in sorted(observed.items())]
    if (previous is not None and previous.get("rule") == RULE
            and len(evidence) < REFIT_GROWTH * len(previous["observed"])):
        evidence = previous["observed"]
    return {"unit": UNIT, "rule": RULE, "batch": number, "size": size, "seed": seed,
            "uniform_share": UNIFORM_SHARE, "target": target, "observed": evidence}


def replay(edits: EditPool, state: dict[str, Any]) -> tuple[list[int], np.ndarray]:
    """The batch a state draws: positions in the pool (in draw order), and q over the pool."""
    positions, steer = replay_steered(edits, state)
    return positions, steer.q


def replay_steered(edits: EditPool, state: dict[str, Any]) -> tuple[list[int], Steer]:
    """``replay`` with the rule's share and its reason. A state from before the evidence rule
    draws as it did: the model's allocation from the first batch, half and half."""
    pooled = set(edits.attempt.tolist())
    seen = [o for o in state["observed"] if o["attempt"] in pooled]
    where = edits.positions([o["attempt"] for o in seen])
    flipped = np.array([float(o["overturned"]) for o in seen])
    if state.get("rule") == RULE:
        weight = np.array([float(o.get("weight", 1.0)) for o in seen])
        steer = steered_probabilities(edits.features, Evidence(where, flipped, weight),
                                      target=float(state["target"]))
    else:
        share = state["uniform_share"]
        steer = Steer(edit_probabilities(edits.features, where, flipped, share), 1 - share,
                      "drawn before the evidence rule")
    return draw_edits(steer.q, state["size"], state["seed"], state["batch"]), steer


def draw_edit_batch(session: Session, study: Study, edits: EditPool, observed: dict[int, Read],
                    number: int, size: int, target: float = DEFAULT_TARGET,
                    previous: dict[str, Any] | None = None) -> tuple[StudyBatch, list[StudyItem]]:
    """Records batch ``number`` (its unique key makes a second drawer fail here, first), its
    draws, and the items of edits not drawn before. ``observed``: each read edit's attempt,
    whether the readers overturned the judge and its draws' weight; ``previous``: the last
    batch's state. The caller commits."""
    assert study.id is not None
    state = state_of(number, size, study.seed, observed, target, previous)
    positions, steer = replay_steered(edits, state)
    q = steer.q
    batch = StudyBatch(study_id=study.id, batch=number, bound=float(weights_of(q).max()),
                       state=json.dumps(state | {"pool_edits": len(edits), "share": steer.share,
                                                 "reason": steer.reason}))
    session.add(batch)
    session.flush()
    for k, at in enumerate(positions):
        session.add(StudyDraw(study_id=study.id, batch=number, position=k,
                              source_image_id=int(edits.image[at]), attempt_id=int(edits.attempt[at]),
                              probability=float(q[at]), pool_images=len(edits)))
    known = set(session.scalars(select(col(StudyItem.attempt_id)).where(
        col(StudyItem.study_id) == study.id)))
    new = [at for at in dict.fromkeys(positions) if int(edits.attempt[at]) not in known]
    attempts = [int(edits.attempt[at]) for at in new]
    record = verdicts_of_record(session, attempts)
    instructions = reader_instructions(session, [(int(edits.task[at]), int(edits.attempt[at]))
                                                 for at in new])
    items = [StudyItem(study_id=study.id, task_id=int(edits.task[at]),
                       attempt_id=int(edits.attempt[at]), stratum=edits.stratum[at],
                       judge_verdict_id=record.get(int(edits.attempt[at])),
                       uid=secrets.token_hex(12),
                       reader_instruction=instructions[int(edits.attempt[at])]) for at in new]
    session.add_all(items)
    session.flush()
    return batch, items
