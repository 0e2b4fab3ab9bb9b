"""Preference pairs for training a reward model or an editor with preference learning: per
task, its accepted edit (chosen) against each failed round of the same run (rejected), the
layout EditReward's data uses: ``path_src``, ``path1`` (preferred), ``path2``, ``tie``.

Where readers read either edit, their consensus can overturn the judge's order: the accepted
edit failed by the readers, or the failed round passed. The rule decides what happens then,
and the manifest records it with the counts:

- ``flip``: readers who passed the failed round and failed the accepted edit swap the pair
  (``flipped``); readers who gave both the same verdict keep it as a ``tie``; an overturn
  with the other edit unread cannot be ordered and is dropped.
- ``drop``: every overturned pair is dropped.

Each round has its own instruction (the judge's failure rewrote it), so both are given:
``instruction`` for the preferred edit, ``instruction2`` for the other.
"""

from collections.abc import Callable
from enum import StrEnum
from pathlib import Path
from typing import Any

import pyarrow as pa
from sqlalchemy import func, select
from sqlalchemy.engine import Engine
from sqlmodel import Session, col

from app.cases.filters import CaseFilter, where_clauses
from app.exports.consensus import Consensus, consensus_by_attempt
from app.exports.folder import ExportFolder, ExportSummary
from app.exports.records import Round, answer_columns, rounds_of, task_chunks
from app.models import Task
from app.provenance.marker import Marker
from pipeline.vocabulary import QUESTIONS


class PairRule(StrEnum):
    flip = "flip"
    drop = "drop"


ANSWERS = pa.struct([(q, pa.bool_()) for q in QUESTIONS])
SCHEMA = pa.schema([
    ("pair_id", pa.string()), ("task_key", pa.string()), ("modality", pa.string()),
    ("disease", pa.string()), ("direction", pa.string()),
    ("path_src", pa.string()), ("path1", pa.string()), ("path2", pa.string()),
    ("instruction", pa.string()), ("instruction2", pa.string()),
    ("round1", pa.int32()), ("round2", pa.int32()), ("tie", pa.bool_()), ("flipped", pa.bool_()),
    ("judge1", ANSWERS), ("judge2", ANSWERS), ("readers1", ANSWERS), ("readers2", ANSWERS),
])


def order(chosen: bool | None, rejected: bool | None, rule: PairRule) -> tuple[str, bool, bool]:
    """("keep" | "flip" | "drop", tie, why dropped is the other edit unread) for a pair whose
    judge order is (accepted, failed), given the readers' overall verdicts on each."""
    if chosen is not False and rejected is not True:
        return "keep", False, False
    if rule is PairRule.drop:
        return "drop", False, False
    if chosen is False and rejected is True:
        return "flip", False, False
    if chosen is not None and rejected is not None:  # both passed, or both failed
        return "keep", True, False
    return "drop", False, True


def write_pairs(engine: Engine, target: Path, marker: Marker, *, rule: PairRule = PairRule.flip,
                case_filter: CaseFilter | None = None, link: bool = False,
                on_progress: Callable[[int, int], None] | None = None) -> ExportSummary:
    case_filter = case_filter or CaseFilter()
    folder = ExportFolder(target, "pairs", SCHEMA, marker, link=link, engine=engine)
    counts = {"tasks": 0, "pairs": 0, "flipped": 0, "ties": 0, "dropped_overturned": 0,
              "dropped_unordered": 0, "skipped_missing_image": 0}
    try:
        with Session(engine) as session:
            where = [*where_clauses(case_filter, session.get_bind().dialect.name),
                     col(Task.accepted_attempt_id).is_not(None)]
            total = session.scalar(select(func.count()).select_from(Task).where(*where)) or 0
            readers = consensus_by_attempt(session)
            done = 0
            for chunk in task_chunks(session, where):
                runs = rounds_of(session, chunk)
                for task in chunk:
                    _task_pairs(session, folder, task, runs.get(task.latest_run_id or 0, []),
                                readers, rule, counts)
                done += len(chunk)
                if on_progress:
                    on_progress(done, total)
        manifest = {"kind": "preference pairs", "rule": rule.value, "rule_text": _RULES[rule],
                    "filter": {k: v for k, v in vars(case_filter).items() if v not in (None, (), "")},
                    "counts": counts, "layout": "EditReward: path_src, path1 (preferred), path2, tie",
                    "columns": SCHEMA.names}
        return folder.finish(manifest)
    except BaseException:
        folder.abandon()
        raise


_RULES = {
    PairRule.flip: ("readers who failed the accepted edit and passed the failed round swap the "
                    "pair; readers who gave both the same verdict make it a tie; an overturn "
                    "with the other edit unread is dropped"),
    PairRule.drop: ("every pair the readers overturned (accepted edit failed, or failed round "
                    "passed) is dropped"),
}


def _task_pairs(session: Session, folder: ExportFolder, task: Task, rounds: list[Round],
                readers: dict[int, Consensus], rule: PairRule, counts: dict[str, int]) -> None:
    chosen = next((r for r in rounds if r.attempt_id == task.accepted_attempt_id), None)
    failed = [r for r in rounds if r is not chosen and r.judge.get("overall") is False]
    if chosen is None or not failed:
        return
    counts["tasks"] += 1
    found = folder.source_and_edit(session, task.source_image_id, chosen.attempt_id, task.task_key)
    if found is None:
        counts["skipped_missing_image"] += len(failed)
        return
    source, chosen_path = found
    for other in failed:
        decision, tie, unordered = order(readers.get(chosen.attempt_id, {}).get("overall"),
                                         readers.get(other.attempt_id, {}).get("overall"), rule)
        if decision == "drop":
            counts["dropped_unordered" if unordered else "dropped_overturned"] += 1
            continue
        written = folder.source_and_edit(session, task.source_image_id, other.attempt_id,
                                         f"round {other.round} of {task.task_key}")
        if written is None:
            counts["skipped_missing_image"] += 1
            continue
        other_path = written[1]
        first, second = (other, chosen) if decision == "flip" else (chosen, other)
        paths = (other_path, chosen_path) if decision == "flip" else (chosen_path, other_path)
        counts["pairs"] += 1
        counts["flipped"] += decision == "flip"
        counts["ties"] += tie
        folder.add(_row(task, source, paths, first, second, tie, decision == "flip", readers))


def _row(task: Task, source: str, paths: tuple[str, str], first: Round, second: Round,
         tie: bool, flipped: bool, readers: dict[int, Consensus]) -> dict[str, Any]:
    return {"pair_id": f"{task.task_key}:{first.round}>{second.round}", "task_key": task.task_key,
            "modality": task.modality, "disease": task.disease, "direction": task.direction,
            "path_src": source, "path1": paths[0], "path2": paths[1],
            "instruction": first.instruction, "instruction2": second.instruction,
            "round1": first.round, "round2": second.round, "tie": tie, "flipped": flipped,
            "judge1": answer_columns(first.judge), "judge2": answer_columns(second.judge),
            "readers1": answer_columns(readers.get(first.attempt_id, {})),
            "readers2": answer_columns(readers.get(second.attempt_id, {}))}
