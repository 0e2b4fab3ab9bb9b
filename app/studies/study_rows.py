"""A new study's items, readers and worklists: built in memory from what was read, then
written with a few bulk inserts.

The write holds SQLite's write lock, which every reader's answer also needs; built as ORM
objects inside it, a 1,000-case study held it for most of a second. Rows are built first,
ids handed out up front (app/bulk.py), and the inserts are all that remains inside.
"""

import random
import secrets
from dataclasses import dataclass

from sqlalchemy import select
from sqlmodel import Session, SQLModel, col

from app import bulk
from app.image_order import CASE_BLOCK, blocks
from app.models import Attempt, Task
from app.studies.draw_plan import case_weights
from app.studies.known_answers import spread, tasks_of
from app.studies.models import Shows, Study
from app.studies.pool import Candidate, verdicts_of_record
from app.studies.reader_instruction import reader_instructions
from app.studies.reader_models import KnownAnswer

T = SQLModel.metadata.tables
ITEM_COLUMNS = ("id", "study_id", "task_id", "attempt_id", "stratum", "judge_verdict_id", "uid",
                "reader_instruction", "shows", "known_answer_id")
ASSIGNMENT_COLUMNS = ("id", "study_id", "user_id", "item_id", "sequence", "repeat_of", "uid")
# Reads between a case's first read and its hidden repeat, at the least: the repeat must be
# read as a new case, not recognised as the one just answered.
REPEAT_GAP = 5


@dataclass(frozen=True)
class ItemRow:
    """One item to be written; its place in the list decides its id (ascending)."""

    task_id: int
    attempt_id: int
    stratum: str
    judge_verdict_id: int | None
    reader_instruction: str | None
    shows: str
    known_answer_id: int | None = None  # a known-answer case (app/studies/known_answers.py)


def item_rows(session: Session, sample: dict[str, list[Candidate]], originals: set[int]) -> list[ItemRow]:
    attempts = [(stratum, c.task_id, attempt_id) for stratum, units in sample.items()
                for c in units for attempt_id in _attempts_to_read(session, c)]
    record = verdicts_of_record(session, [a for _, _, a in attempts])
    instructions = reader_instructions(session, [(t, a) for _, t, a in attempts])
    return [ItemRow(task_id, attempt_id, stratum, record.get(attempt_id), instructions[attempt_id],
                    (Shows.original if task_id in originals else Shows.edit).value)
            for stratum, task_id, attempt_id in attempts]


def known_rows(session: Session, known: list[KnownAnswer]) -> list[ItemRow]:
    """The items of known-answer cases: frozen exactly as every other item is (the verdict of
    record, the reader's instruction), so that nothing served from them differs."""
    attempts = [k.attempt_id for k in known]
    task_of = {attempt: task for attempt, (task, _, _) in tasks_of(session, attempts).items()}
    record = verdicts_of_record(session, attempts)
    instructions = reader_instructions(session, [(task_of[a], a) for a in attempts])
    return [ItemRow(task_of[k.attempt_id], k.attempt_id, "", record.get(k.attempt_id),
                    instructions[k.attempt_id], Shows.edit.value, k.id) for k in known]


def _attempts_to_read(session: Session, unit: Candidate) -> list[int]:
    if unit.attempt_id is not None:
        return [unit.attempt_id]
    task = session.get(Task, unit.task_id)
    assert task is not None
    query = (select(col(Attempt.id)).where(col(Attempt.run_id) == task.latest_run_id,
                                           col(Attempt.image_present).is_(True))
             .order_by(col(Attempt.round)))
    return list(session.scalars(query))


def write_items_and_worklists(session: Session, study: Study, items: list[ItemRow],
                              reader_ids: list[int]) -> None:
    """Inside the transaction that has just written ``study``."""
    assert study.id is not None
    conn = session.connection()
    ids = bulk.IdAllocator(conn, block=1)
    item_ids = ids.take("study_item", len(items))
    bulk.insert_rows(conn, T["study_item"], ITEM_COLUMNS, [
        (item_id, study.id, i.task_id, i.attempt_id, i.stratum, i.judge_verdict_id,
         secrets.token_hex(12), i.reader_instruction, i.shows, i.known_answer_id)
        for item_id, i in zip(item_ids, items, strict=True)])
    regular = [(item_id, i) for item_id, i in zip(item_ids, items, strict=True)
               if i.known_answer_id is None]
    known = [item_id for item_id, i in zip(item_ids, items, strict=True)
             if i.known_answer_id is not None]
    block = _blocks_of_items(session, study, [i for _, i in regular], [a for a, _ in regular])
    canonical = [item_id for item_id, _ in regular]
    # From the study's secret, not its seed: a reader who knows the seed (it is shown with the
    # study) and their own user id could otherwise rebuild their order.
    random.Random(f"{study.order_secret}:overlap").shuffle(canonical)
    per_reader: dict[int, list[int]] = {uid: [] for uid in reader_ids}
    k = study.readers_per_case or len(reader_ids)
    for index, item_id in enumerate(canonical):
        for j in range(k):  # round-robin keeps every reader's load within one case
            per_reader[reader_ids[(index * k + j) % len(reader_ids)]].append(item_id)
    readers, first_reads, repeats = [], [], []
    for user_id, own in per_reader.items():
        order_seed = random.Random(f"{study.order_secret}:reader:{user_id}").randrange(2**31)
        readers.append((study.id, user_id, order_seed))
        first, again = _worklist(study, user_id, own, order_seed, ids, block, known)
        first_reads += first
        repeats += again
    bulk.insert_rows(conn, T["study_reader"], ("study_id", "user_id", "order_seed"), readers)
    # First reads before their repeats, which name them.
    bulk.insert_rows(conn, T["assignment"], ASSIGNMENT_COLUMNS, first_reads)
    bulk.insert_rows(conn, T["assignment"], ASSIGNMENT_COLUMNS, repeats)


Row = tuple[int, int, int, int, int, int | None, str]


def _blocks_of_items(session: Session, study: Study, items: list[ItemRow],
                     item_ids: list[int]) -> dict[int, int]:
    """Each item's block of the study's fixed image order (app/image_order.py); or, where the
    study's cases are its units, of its fixed order of cases."""
    if case_weights(study) is not None:
        found = blocks(study.order_secret, item_ids, CASE_BLOCK)
        return {item_id: found[item_id] for item_id in item_ids}
    tasks = sorted({i.task_id for i in items})
    image_of: dict[int, object] = {}
    for start in range(0, len(tasks), 5000):  # within SQLite's default limit of parameters
        chunk = tasks[start:start + 5000]
        image_of.update(session.execute(select(col(Task.id), col(Task.source_image_id)).where(
            col(Task.id).in_(chunk))).all())
    # the cluster as the figures name it (app/agreement/reads.py Case.cluster)
    cluster = {t: image if image is not None else f"task-{t}" for t, image in image_of.items()}
    block = blocks(study.order_secret, cluster.values())
    return {item_id: block[cluster[i.task_id]] for item_id, i in zip(item_ids, items, strict=True)}


def _worklist(study: Study, user_id: int, own: list[int], order_seed: int,
              ids: bulk.IdAllocator, block: dict[int, int],
              known: list[int]) -> tuple[list[Row], list[Row]]:
    """The reader's reads: their own cases and their repeats, with every known-answer case at
    random places among them (so neither its place nor its neighbours tell it apart)."""
    assert study.id is not None
    order = sorted(own)
    random.Random(order_seed).shuffle(order)
    # Block by block through the study's fixed image order, the reader's own order inside a
    # block: images are then completed roughly in that order, and enter the anytime-valid
    # figures as the study goes, not only at its end.
    order.sort(key=lambda item_id: block[item_id])
    repeats = round(len(order) * study.repeat_fraction)
    first_at, repeat_at = repeat_order(len(order), repeats, random.Random(f"{order_seed}:repeat"))
    first_ids = ids.take("assignment", len(order))
    first: list[Row] = [
        (aid, study.id, user_id, item_id, sequence, None, secrets.token_hex(12))
        for aid, item_id, sequence in zip(first_ids, order, first_at, strict=True)]
    again_ids = ids.take("assignment", len(repeat_at))
    again: list[Row] = [
        (aid, study.id, user_id, order[index], sequence, first_ids[index], secrets.token_hex(12))
        for aid, (sequence, index) in zip(again_ids, repeat_at, strict=True)]
    if not known:
        return first, again
    # From the study's secret too: the seed would let a reader find their known-answer reads.
    moved, slots = spread(random.Random(f"{study.order_secret}:known:{user_id}"),
                          len(first) + len(again), len(known))
    first = [(*row[:4], moved[row[4] - 1], *row[5:]) for row in first]
    again = [(*row[:4], moved[row[4] - 1], *row[5:]) for row in again]
    known_ids = ids.take("assignment", len(known))
    first += [(aid, study.id, user_id, item_id, sequence, None, secrets.token_hex(12))
              for aid, item_id, sequence in zip(known_ids, known, slots, strict=True)]
    return first, again


def repeat_order(first: int, repeats: int, draw: random.Random) -> tuple[list[int], list[tuple[int, int]]]:
    """Where the first reads and the hidden repeats go in one reader's order of
    ``first + repeats`` reads: (the sequence of each first read, in the shuffled order;
    (sequence, index of the first read it repeats) of each repeat).

    Repeats placed last were easy to spot (every read after the last new case is one), so
    they are spread at random over the second half of the order, each at least REPEAT_GAP
    reads after its first read (less only where the study is too small to allow it). Which
    first reads are repeated is drawn among those far enough back."""
    total = first + repeats
    if not repeats:
        return list(range(1, first + 1)), []
    half = total // 2
    slots = sorted(draw.sample(range(half + 1, total + 1), repeats))
    taken = set(slots)
    first_at = [s for s in range(1, total + 1) if s not in taken]
    gap = max(1, min(REPEAT_GAP, min(slots) - 1))
    left = list(range(first))
    placed = []
    for slot in slots:
        eligible = [i for i in left if first_at[i] <= slot - gap] or [i for i in left if first_at[i] < slot]
        index = draw.choice(eligible)
        left.remove(index)
        placed.append((slot, index))
    return first_at, placed
