"""What a candidate judge is scored against: one locked study's settled reference, or a
sentinel set, a seeded sample of the settled edits of several locked studies.

Either way the reference is the readers' consensus (or the adjudicator's decision on a tie)
of locked studies, so it cannot move under a leaderboard. A sentinel set keeps the list of
edits it drew: a judge asked again on it next month (a drift check) is asked on the same
edits. An edit read in two of its studies is drawn once, from the first of them.
"""

import random
import re
from dataclasses import dataclass, field, replace
from typing import Literal

from sqlalchemy import distinct, func, select
from sqlmodel import Session, col

from app.agreement import reads
from app.agreement.report import settled_consensus
from app.errors import Conflict, Invalid, NotFound
from app.judges.models import SentinelItem, SentinelSet
from app.studies.models import Design, Study, StudyItem, StudyStatus, in_figures

NAME = re.compile(r"^[\w .,:()+/-]{1,100}$")
MAX_PER_STUDY = 100_000


@dataclass(frozen=True)
class Ref:
    """Which reference: a study's, or a sentinel set's."""

    kind: Literal["study", "sentinel"]
    id: int

    @property
    def query(self) -> str:
        """The reference as the leaderboard's URL names it."""
        return f"{self.kind}={self.id}"


def as_ref(ref: "Ref | int") -> Ref:
    """A bare id is a study's."""
    return ref if isinstance(ref, Ref) else Ref("study", ref)


@dataclass(frozen=True)
class Reference:
    """A reference loaded: its readers' reads restricted to its edits, and each edit's
    settled answers."""

    ref: Ref
    name: str
    study_ids: tuple[int, ...]
    data: reads.StudyReads
    settled: dict[int, dict[str, bool]]
    study_of: dict[int, int] = field(default_factory=dict)  # item id -> its study

    @property
    def study(self) -> int | None:
        """The study's id, for a study's reference."""
        return self.ref.id if self.ref.kind == "study" else None


def reference_study(session: Session, study_id: int) -> tuple[Study, reads.StudyReads,
                                                                dict[int, dict[str, bool]]]:
    """The study, its reads and its settled reference; 409 unless it is locked and settled."""
    study = session.get(Study, study_id)
    if study is None:
        raise NotFound(f"no study {study_id}")
    if not Design(study.design).rubric:
        raise Conflict(f"study {study.name!r} is a real-or-edited study: it has no rubric answers "
                       "to score a judge against")
    if study.status != StudyStatus.locked:
        raise Conflict(f"study {study.name!r} is not locked: lock it first, so that the reference "
                       "a judge is scored against cannot change under the leaderboard")
    data = reads.load(session, study)
    settled = settled_consensus(data)
    if not settled:
        raise Conflict(f"study {study.name!r} has no settled reference: no edit has a readers' "
                       "consensus (or an adjudicated tie) yet")
    return study, data, settled


def study_ids_of(session: Session, ref: Ref) -> tuple[int, ...]:
    """The studies a reference's edits come from, without loading it."""
    if ref.kind == "study":
        return (ref.id,)
    return tuple(sorted(session.scalars(select(col(SentinelItem.study_id)).where(
        col(SentinelItem.sentinel_id) == ref.id).distinct())))


def load_reference(session: Session, ref: Ref | int) -> Reference:
    """The reference; 404 when it does not exist, 409 when one of its studies is no longer
    locked and settled."""
    ref = as_ref(ref)
    if ref.kind == "study":
        study, data, found = reference_study(session, ref.id)
        return Reference(ref, study.name, (ref.id,), data, found,
                         {c.item_id: ref.id for c in data.cases})
    sentinel = get_sentinel(session, ref.id)
    members: dict[int, set[int]] = {}
    for study_id, item_id in session.execute(
            select(col(SentinelItem.study_id), col(SentinelItem.item_id))
            .where(col(SentinelItem.sentinel_id) == ref.id)):
        members.setdefault(study_id, set()).add(item_id)
    parts = []
    settled: dict[int, dict[str, bool]] = {}
    study_of: dict[int, int] = {}
    for study_id in sorted(members):
        _, data, found = reference_study(session, study_id)
        kept = [c for c in data.cases if c.item_id in members[study_id] and c.item_id in found]
        parts.append(replace(data, cases=kept,
                             reads=[r for r in data.reads if r.item_id in members[study_id]]))
        settled.update({c.item_id: found[c.item_id] for c in kept})
        study_of.update({c.item_id: study_id for c in kept})
    return Reference(ref, sentinel.name, tuple(sorted(members)), _merged(parts), settled, study_of)


def _merged(parts: list[reads.StudyReads]) -> reads.StudyReads:
    """Several studies' reads as one (item ids are unique across studies)."""
    merged = reads.StudyReads(cases=[], reads=[], readers=[])
    for part in parts:
        merged.cases.extend(part.cases)
        merged.reads.extend(part.reads)
        merged.decisions.update(part.decisions)
        merged.judges.update(part.judges)
        for judge, answers in part.judge_b.items():
            merged.judge_b.setdefault(judge, {}).update(answers)
    merged.readers.extend(sorted({name for part in parts for name in part.readers}))
    return merged


# Sentinel sets.

@dataclass(frozen=True)
class SentinelPlan:
    """A sentinel set as a form or the CLI gives it, before any check."""

    name: str
    study_ids: list[int]
    per_study: int | None = None  # None: every settled edit of each study
    seed: int = 0


def get_sentinel(session: Session, sentinel_id: int) -> SentinelSet:
    sentinel = session.get(SentinelSet, sentinel_id)
    if sentinel is None:
        raise NotFound(f"no sentinel set {sentinel_id}")
    return sentinel


def sentinels(session: Session) -> list[SentinelSet]:
    return list(session.scalars(select(SentinelSet).order_by(col(SentinelSet.id).desc())))


def sentinel_sizes(session: Session) -> dict[int, tuple[int, int]]:
    """Sentinel set id -> (edits, studies)."""
    query = (select(col(SentinelItem.sentinel_id), func.count(),
                    func.count(distinct(col(SentinelItem.study_id))))
             .group_by(col(SentinelItem.sentinel_id)))
    return {sentinel_id: (edits, studies) for sentinel_id, edits, studies in session.execute(query)}


def create_sentinel(session: Session, plan: SentinelPlan, created_by: int | None) -> SentinelSet:
    """Draw and keep the set: from each study, a seeded random sample of its settled edits
    (an edit already drawn from an earlier study is not drawn again). Invalid (naming the
    field) or Conflict (a study not locked and settled), with nothing kept."""
    name = plan.name.strip()
    if not NAME.match(name):
        raise Invalid("name the sentinel set in 1 to 100 letters, digits, spaces or "
                      ". , : ( ) + / -", "name")
    if session.scalar(select(col(SentinelSet.id)).where(col(SentinelSet.name) == name)):
        raise Invalid(f"a sentinel set is already named {name!r}", "name")
    study_ids = sorted(set(plan.study_ids))
    if len(study_ids) < 2:
        raise Invalid("choose at least two locked studies: a sentinel set is drawn from "
                      "several (score on the study itself when there is one)", "studies")
    if plan.per_study is not None and not 1 <= plan.per_study <= MAX_PER_STUDY:
        raise Invalid(f"edits per study are 1 to {MAX_PER_STUDY:,}, or empty for every "
                      "settled edit", "per_study")
    rng = random.Random(plan.seed)
    drawn: list[SentinelItem] = []
    seen_attempts: set[int] = set()
    for study_id in study_ids:
        _, data, settled = reference_study(session, study_id)
        attempts = dict(session.execute(select(col(StudyItem.id), col(StudyItem.attempt_id))
                                        .where(col(StudyItem.study_id) == study_id,
                                               in_figures())).all())
        pool = sorted(c.item_id for c in data.cases
                      if c.item_id in settled and attempts.get(c.item_id) not in seen_attempts)
        chosen = sorted(rng.sample(pool, plan.per_study) if plan.per_study is not None
                        and plan.per_study < len(pool) else pool)
        seen_attempts.update(attempts[i] for i in chosen)
        drawn.extend(SentinelItem(sentinel_id=0, item_id=i, study_id=study_id) for i in chosen)
    sentinel = SentinelSet(name=name, per_study=plan.per_study, seed=plan.seed,
                           created_by=created_by)
    session.add(sentinel)
    session.flush()
    for item in drawn:
        item.sentinel_id = sentinel.id or 0
    session.add_all(drawn)
    session.commit()
    session.refresh(sentinel)
    return sentinel
