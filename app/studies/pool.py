"""What a study can sample: the pool of edits behind a case filter, split into strata.

The *verdict of record* of an attempt is the first verdict stored for it: the one the pipeline
acted on when it accepted or rejected the edit. A study compares readers with that verdict,
frozen on each study item; re-judgements come later and are reported apart.

Designs (app/study_models.Design):
- validation: every judged attempt of each task's latest run (accepted edits and rejected
  rounds) whose verdict of record could be read, stratified by that verdict;
- accepted: the accepted edit of each task;
- runs: the tasks themselves, every round of the latest run read;
- real_or_edited: the accepted edit of each task, one task per source image (the draw in
  app/studies/design.py), shown as the edit or as the task's original.
"""

import hashlib
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

import numpy as np
from sqlalchemy import func, or_, select
from sqlmodel import Session, col

from app.cases.filters import CaseFilter, where_clauses
from app.models import Attempt, JudgeVerdict, SourceImage, Task
from app.studies.design_traits import PAIR_FACETS, Design
from app.studies.judged_pool import admitted, judged_attempts, judged_pool, stratum_keys
from app.studies.practice_apart import KeptApart
from pipeline.vocabulary import Outcome

# Facets a study can stratify on; "verdict" is the judge's verdict of record (pass / fail).
STRATA_FACETS = ("verdict", "direction", "modality", "disease", "outcome")
SEPARATOR = "/"


@dataclass(frozen=True)
class Candidate:
    task_id: int
    attempt_id: int | None  # None for the runs design: the task's rounds are read
    values: dict[str, str]  # facet -> value
    source_image_id: int


def verdict_of_record() -> Any:
    """attempt id -> id of its first verdict."""
    return (select(col(JudgeVerdict.attempt_id).label("attempt_id"),
                   func.min(JudgeVerdict.id).label("verdict_id"))
            .group_by(col(JudgeVerdict.attempt_id)))


def verdicts_of_record(session: Session, attempt_ids: list[int]) -> dict[int, int]:
    """Attempt id -> the id of its verdict of record, for many attempts at once."""
    found: dict[int, int] = {}
    for start in range(0, len(attempt_ids), 5000):
        chunk = attempt_ids[start:start + 5000]
        query = verdict_of_record().where(col(JudgeVerdict.attempt_id).in_(chunk))
        found.update({a: v for a, v in session.execute(query)})
    return found


def check_facets(design: Design, facets: Iterable[str]) -> str | None:
    """Why these strata cannot be used with this design, or None."""
    facets = tuple(facets)
    allowed = PAIR_FACETS if design.pairs else STRATA_FACETS
    unknown = [f for f in facets if f not in allowed]
    if unknown:
        return f"strata can be {', '.join(allowed)}; not {', '.join(unknown)}"
    if len(set(facets)) != len(facets):
        return "each stratum facet can be chosen once"
    if design.draws_in_batches and facets != ("modality",):
        return ("an adaptive study draws edits from the whole pool; its strata are the "
                "modality only")
    if design.traits.strata_by_verdict and "verdict" not in facets:
        return (f"a {design.label} study stratifies by the judge's verdict, so that rejected "
                "rounds are read as well as accepted edits")
    if not design.judged and "verdict" in facets:
        return "only a validation study samples by verdict (the others read accepted edits or whole runs)"
    return None


def candidates(session: Session, case_filter: CaseFilter, design: Design,
               facets: tuple[str, ...]) -> list[Candidate]:
    """Every sampling unit the filter admits, in a stable order."""
    dialect = session.get_bind().dialect.name
    task_columns = [col(Task.id), col(Task.direction), col(Task.modality), col(Task.disease),
                    col(Task.outcome), col(Task.source_image_id)]
    if design.judged:
        query: Any = judged_attempts(*task_columns, col(Attempt.id), col(JudgeVerdict.qualified))
    elif design.single_image:
        # Both images must be there: either may be the one shown, and a case that cannot be
        # shown would be skipped by readers in a way that depends on the truth.
        query = (select(*task_columns, col(Task.accepted_attempt_id))
                 .join(Attempt, col(Attempt.id) == Task.accepted_attempt_id)
                 .join(SourceImage, col(SourceImage.id) == Task.source_image_id)
                 .where(col(Attempt.image_present).is_(True), col(SourceImage.present).is_(True))
                 .order_by(col(Task.id)))
    elif design.accepted_only:
        query = (select(*task_columns, col(Task.accepted_attempt_id))
                 .where(col(Task.accepted_attempt_id).is_not(None)).order_by(col(Task.id)))
    else:
        # A run never judged has no verdict to compare the readers with.
        query = (select(*task_columns).where(col(Task.thumb_attempt_id).is_not(None),
                                             or_(col(Task.outcome).is_(None),
                                                 col(Task.outcome) != Outcome.unjudged))
                 .order_by(col(Task.id)))
    query = query.where(*where_clauses(case_filter, dialect))
    found = []
    for row in session.execute(query):
        task_id, direction, modality, disease, outcome, image = row[:6]
        values = {"direction": direction, "modality": modality, "disease": disease,
                  "outcome": outcome or ""}
        if design.judged:
            values["verdict"] = "pass" if row[7] else "fail"
        attempt_id = row[6] if not design.reads_rounds else None
        found.append(Candidate(task_id, attempt_id, {f: str(values[f]) for f in facets}, image))
    return one_per_source_image(found) if design.one_per_source_image else found


def admitted_candidates(session: Session, case_filter: CaseFilter, design: Design,
                        facets: tuple[str, ...], apart: KeptApart) -> list[Candidate]:
    """The candidates practice leaves to an ordinary sample."""
    return [c for c in candidates(session, case_filter, design, facets)
            if apart.admits(c.attempt_id, c.task_id, c.source_image_id)]


def practice_left_out(session: Session, case_filter: CaseFilter, design: Design,
                      apart: KeptApart) -> int:
    """How many of the filter's units practice keeps out of an ordinary sample."""
    if design.judged:
        pool = judged_pool(session)
        at = admitted(session, pool, case_filter)
        return int(len(at) - apart.mask(pool.attempt_id[at], pool.image[at]).sum())
    found = candidates(session, case_filter, design, ())
    return sum(not apart.admits(c.attempt_id, c.task_id, c.source_image_id) for c in found)


def one_per_source_image(found: list[Candidate]) -> list[Candidate]:
    """One task of each source image, so that no reader of a real-or-edited study meets an
    original and its edit (or two edits of one original). The task kept is the one whose
    hash of (image, task) is least: fixed for the data, blind to the tasks' content, and the
    same whatever the filter or strata around it."""
    def draw(c: Candidate) -> bytes:
        return hashlib.blake2b(f"{c.source_image_id}:{c.task_id}".encode(), digest_size=8).digest()

    kept: dict[int, Candidate] = {}
    for c in found:
        if c.source_image_id not in kept or draw(c) < draw(kept[c.source_image_id]):
            kept[c.source_image_id] = c
    return sorted(kept.values(), key=lambda c: c.task_id)


def stratum_key(values: dict[str, str], facets: tuple[str, ...]) -> str:
    return SEPARATOR.join(values[f] for f in facets) if facets else ""


def stratum_label(key: str, facets: tuple[str, ...]) -> str:
    """"fail/add/chest_xray" -> "verdict fail · direction add · modality chest_xray"."""
    if not facets:
        return "all cases"
    values = key.split(SEPARATOR)
    if len(values) != len(facets):  # a key typed by hand, not one the form offered
        return repr(key)
    return " · ".join(f"{f} {v}" for f, v in zip(facets, values, strict=True))


def pool_by_stratum(found: list[Candidate], facets: tuple[str, ...]) -> dict[str, list[Candidate]]:
    pool: dict[str, list[Candidate]] = {}
    for c in found:
        pool.setdefault(stratum_key(c.values, facets), []).append(c)
    return dict(sorted(pool.items()))


def cluster_sizes(found: list[Candidate]) -> list[int]:
    """How many of the pool's sampling units each source image holds (for the planner)."""
    return list(Counter(c.source_image_id for c in found).values())


@dataclass(frozen=True)
class StratumRow:
    key: str
    label: str
    pool: int


def strata_table(session: Session, case_filter: CaseFilter, design: Design,
                 facets: tuple[str, ...], apart: KeptApart | None = None) -> tuple[
                     list[StratumRow], list[int]]:
    """Each stratum with its pool size, and the pool's units per source image; ``apart``:
    what practice keeps out of the pool (app/studies/practice_apart.py)."""
    apart = apart or KeptApart.nothing()
    if design.judged:  # from the kept pool: counted on integer codes, no row objects
        pool = judged_pool(session)
        at = admitted(session, pool, case_filter)
        at = at[apart.mask(pool.attempt_id[at], pool.image[at])]
        keys, inverse = stratum_keys(pool, at, facets)
        counts = np.bincount(inverse, minlength=len(keys)) if len(at) else np.zeros(0, dtype=int)
        rows = sorted((StratumRow(key, stratum_label(key, facets), int(n))
                       for key, n in zip(keys, counts, strict=False) if n), key=lambda r: r.key)
        sizes = np.unique(pool.image[at], return_counts=True)[1] if len(at) else np.zeros(0)
        return rows, [int(n) for n in sizes]
    found = admitted_candidates(session, case_filter, design, facets, apart)
    rows = [StratumRow(key, stratum_label(key, facets), len(units))
            for key, units in pool_by_stratum(found, facets).items()]
    return rows, cluster_sizes(found)
