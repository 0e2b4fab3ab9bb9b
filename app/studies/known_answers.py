"""Known-answer cases: edits whose answer is settled, mixed into a study to check its readers.

The pool is every settled answer not retired (app/readers/settled.py fills it from locked
studies; an admin marks more). A study draws its share of each reader's reads from it, and
every reader reads every drawn case, at random places through their own order. A known-answer
case is an item like any other, drawn, frozen and served the same way, so nothing a reader
sees tells it apart; the figures leave it out by its ``known_answer_id``.
"""

import math
import random
from collections.abc import Collection, Iterable
from dataclasses import dataclass

from sqlalchemy import select
from sqlmodel import Session, col

from app.errors import Invalid
from app.models import Attempt, JudgeVerdict, Run, Task
from app.studies.models import Answer, Assignment, StudyItem
from app.studies.pool import verdicts_of_record
from app.studies.reader_models import KnownAnswer

MAX_SHARE = 0.5
DEFAULT_SHARE = 0.05


def check_share(share: float) -> None:
    if not 0 <= share <= MAX_SHARE:
        raise Invalid(f"the share of known-answer cases must be between 0 and "
                      f"{MAX_SHARE:.0%} (not {share:.0%})", field="known_share")


def known_count(share: float, reads_per_reader: int) -> int:
    """How many known-answer cases make ``share`` of a reader's reads, beside their
    ``reads_per_reader`` others: at least one when any share is asked."""
    if share <= 0 or reads_per_reader <= 0:
        return 0
    return max(1, round(share / (1 - share) * reads_per_reader))


def planned_known(share: float, cases: int, readers: int, readers_per_case: int | None,
                  repeat_fraction: float) -> int:
    """Known-answer cases per reader for a study of ``cases`` ordinary cases: each reader's
    share of the reads (every reader, or ``readers_per_case`` of them, reading a case), and
    their hidden repeats, then ``share`` of that."""
    if readers <= 0 or cases <= 0:
        return 0
    reads = math.ceil(cases * (readers_per_case or readers) / readers)
    reads += round(reads * repeat_fraction)
    return known_count(share, reads)


def settled_pool(session: Session) -> list[KnownAnswer]:
    """Every settled answer in force: the newest for each edit, none retired."""
    rows = session.scalars(select(KnownAnswer).where(col(KnownAnswer.retired_at).is_(None))
                           .order_by(col(KnownAnswer.id)))
    newest: dict[int, KnownAnswer] = {}
    for row in rows:
        newest[row.attempt_id] = row
    return sorted(newest.values(), key=lambda k: k.id or 0)


def pool_size(session: Session) -> int:
    return len(settled_pool(session))


@dataclass(frozen=True)
class KnownDraw:
    """The known-answer cases a study draws, and how many its readers had read before (a
    case a reader remembers from an earlier study is no blind check of them)."""

    answers: list[KnownAnswer]
    seen_before: int


Kind = tuple[str, str]  # (modality, direction): what a reader sees of a case before reading it


def draw_known(session: Session, count: int, seed: int, reader_ids: Iterable[int],
               leave_out_tasks: set[int], accepted_only: bool = False,
               kinds: set[Kind] | None = None,
               leave_out_images: Collection[int] = frozenset()) -> KnownDraw:
    """``count`` settled cases, seeded, none of a task the study samples; those no reader of
    the study has answered before first. ``accepted_only``: edits the judge of record passed
    (an accepted-edits study shows nothing else, and a rejected edit would stand out).
    ``kinds``: the modalities and directions the study's own cases have; a brain MRI in a
    study of chest radiographs, or a removal among additions, would give itself away.
    ``leave_out_images``: source images a reader met in a practice (or must not meet there)."""
    if count <= 0:
        return KnownDraw([], 0)
    pool = settled_pool(session)
    found = tasks_of(session, [k.attempt_id for k in pool])
    task_of = {attempt: task for attempt, (task, _, _) in found.items()}
    # An edit whose image is gone would show as no other case does: it is not drawn.
    # Each case left out is counted under the first reason that leaves it out: "0 usable"
    # while the page showed a pool of 12 said nothing of why.
    left_out: dict[str, int] = {}

    def keep(k: KnownAnswer) -> bool:
        if k.attempt_id not in found:
            why = "their edited image is gone"
        elif task_of[k.attempt_id] in leave_out_tasks:
            why = "they are edits of tasks this study draws itself"
        elif found[k.attempt_id][2] in leave_out_images:
            why = ("their source image is kept apart from these readers (met in a practice, or "
                   "still to be read in a study)")
        elif kinds is not None and found[k.attempt_id][1] not in kinds:
            why = "they are of a modality or direction this study's cases do not have"
        else:
            return True
        left_out[why] = left_out.get(why, 0) + 1
        return False

    usable = [k for k in pool if keep(k)]
    if accepted_only:
        passed = _passed(session, [k.attempt_id for k in usable])
        rejected = sum(1 for k in usable if k.attempt_id not in passed)
        if rejected:
            left_out["the judge rejected them, and this study shows accepted edits only"] = rejected
        usable = [k for k in usable if k.attempt_id in passed]
    one_each = _one_per_task(usable, task_of)
    if len(one_each) < len(usable):
        left_out["another settled edit of the same task is used"] = len(usable) - len(one_each)
    usable = one_each
    if len(usable) < count:
        why = "; ".join(f"{n} because {reason}" for reason, n in left_out.items())
        raise Invalid(f"the settled pool holds {len(pool)} known-answer cases, {len(usable)} usable here"
                      f"{' (' + why + ')' if why else ''}; this share needs {count}: lower the "
                      "share, lock a study with settled cases or mark unmistakable ones",
                      field="known_share")
    seen = _answered_by(session, set(reader_ids))
    rng = random.Random(f"{seed}:known")
    fresh = [k for k in usable if k.attempt_id not in seen]
    stale = [k for k in usable if k.attempt_id in seen]
    rng.shuffle(fresh)
    rng.shuffle(stale)
    chosen = _one_per_task(fresh + stale, task_of)[:count]
    return KnownDraw(sorted(chosen, key=lambda k: k.id or 0),
                     sum(1 for k in chosen if k.attempt_id in seen))


def _one_per_task(ordered: list[KnownAnswer], task_of: dict[int, int]) -> list[KnownAnswer]:
    """The first of each task's cases: two rounds of one task would be read as a pair."""
    tasks: set[int] = set()
    kept = []
    for known in ordered:
        task = task_of[known.attempt_id]
        if task not in tasks:
            tasks.add(task)
            kept.append(known)
    return kept


def tasks_of(session: Session, attempt_ids: list[int]) -> dict[int, tuple[int, Kind, int]]:
    """Attempt -> its task, kind and source image, for the attempts whose image is on disk."""
    found: dict[int, tuple[int, Kind, int]] = {}
    for start in range(0, len(attempt_ids), 5000):
        chunk = attempt_ids[start:start + 5000]
        rows = session.execute(select(col(Attempt.id), col(Run.task_id), col(Task.modality),
                                      col(Task.direction), col(Task.source_image_id))
                               .join(Run, col(Run.id) == Attempt.run_id)
                               .join(Task, col(Task.id) == Run.task_id)
                               .where(col(Attempt.id).in_(chunk), col(Attempt.image_present).is_(True)))
        found.update({attempt: (task, (modality, direction), image)
                      for attempt, task, modality, direction, image in rows})
    return found


def kinds_of(session: Session, task_ids: set[int]) -> set[Kind]:
    """The (modality, direction) pairs of these tasks."""
    ids = sorted(task_ids)
    found: set[Kind] = set()
    for start in range(0, len(ids), 5000):
        found.update((m, d) for m, d in session.execute(select(col(Task.modality), col(Task.direction))
                                                        .where(col(Task.id).in_(ids[start:start + 5000]))))
    return found


def _passed(session: Session, attempt_ids: list[int]) -> set[int]:
    """The edits whose verdict of record passed them."""
    record = list(verdicts_of_record(session, attempt_ids).values())
    found: set[int] = set()
    for start in range(0, len(record), 5000):
        found.update(session.scalars(select(col(JudgeVerdict.attempt_id)).where(
            col(JudgeVerdict.id).in_(record[start:start + 5000]),
            col(JudgeVerdict.qualified).is_(True))))
    return found


def _answered_by(session: Session, reader_ids: set[int]) -> set[int]:
    """The edits any of these readers has answered, in any study."""
    if not reader_ids:
        return set()
    return set(session.scalars(
        select(col(StudyItem.attempt_id)).join(Assignment, col(Assignment.item_id) == StudyItem.id)
        .join(Answer, col(Answer.assignment_id) == Assignment.id)
        .where(col(Assignment.user_id).in_(reader_ids)).distinct()))


def spread(rng: random.Random, regular: int, known: int) -> tuple[list[int], list[int]]:
    """Where ``known`` known-answer reads go among a reader's ``regular + known`` reads, each
    slot equally likely: (the sequence each regular read moves to, the known reads' sequences
    in a random order)."""
    total = regular + known
    slots = rng.sample(range(1, total + 1), known)
    taken = set(slots)
    return [s for s in range(1, total + 1) if s not in taken], slots
