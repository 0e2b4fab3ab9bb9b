"""Bulk writes of normalised records: plain tuples to the driver (app/bulk.py), never one ORM
object per row."""

import logging
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from operator import itemgetter
from typing import Any

from sqlalchemy import bindparam, select, update
from sqlalchemy.engine import Connection
from sqlmodel import SQLModel

from app import bulk
from app.cases import search
from app.cases.summary import task_summary
from app.importer.dirindex import DirIndex
from app.importer.layout import source_category
from app.importer.records import AttemptRecord, TaskRecord
from app.importer.report import ImportReport, Problem
from app.models import IMPORTED_PROMPT_VERSION, RunOrigin, utcnow
from pipeline.vocabulary import DIMENSIONS

logger = logging.getLogger(__name__)
T = SQLModel.metadata.tables
RUN_COLUMNS = ("id", "task_id", "origin", "outcome", "n_rounds", "success_round",
               "final_instruction", "failure_step", "failure_round", "failure_error",
               "fingerprint", "import_file_id", "created_at")
ATTEMPT_COLUMNS = ("id", "run_id", "round", "instruction", "instruction_thinking",
                   "image_root_id", "image_relpath", "image_present", "edit_error")
VERDICT_COLUMNS = ("id", "attempt_id", *DIMENSIONS, "qualified", "has_disease", "weighted_score",
                   "reason", "thinking_summary", "error", "model", "prompt_version", "raw_json", "created_at")
SourceKey = tuple[str, str, str]
TaskKey = tuple[int, str, str]


@dataclass
class Roots:
    run_root_id: int
    run_index: DirIndex
    source_root_id: int | None = None
    source_index: DirIndex | None = None


@dataclass
class WriterState:
    """What is already in the database, loaded once per import and kept up to date."""

    sources: dict[SourceKey, tuple[int, bool]] = field(default_factory=dict)
    tasks: dict[TaskKey, int] = field(default_factory=dict)
    has_latest: set[int] = field(default_factory=set)
    fingerprints: set[tuple[int, str]] = field(default_factory=set)

    @classmethod
    def load(cls, conn: Connection) -> "WriterState":
        state = cls()
        s, t, r = T["source_image"], T["task"], T["run"]
        for row in conn.execute(select(s.c.id, s.c.dataset, s.c.category, s.c.filename, s.c.present)):
            state.sources[(row.dataset, row.category, row.filename)] = (row.id, row.present)
        for row in conn.execute(select(t.c.id, t.c.source_image_id, t.c.disease, t.c.direction,
                                       t.c.latest_run_id)):
            state.tasks[(row.source_image_id, row.disease, row.direction)] = row.id
            if row.latest_run_id is not None:
                state.has_latest.add(row.id)
        state.fingerprints = {(row.task_id, row.fingerprint)
                              for row in conn.execute(select(r.c.task_id, r.c.fingerprint))}
        return state


@dataclass
class _Rows:
    sources: list[dict[str, Any]] = field(default_factory=list)
    source_updates: list[dict[str, Any]] = field(default_factory=list)
    tasks: dict[int, dict[str, Any]] = field(default_factory=dict)
    task_updates: dict[int, dict[str, Any]] = field(default_factory=dict)
    runs: list[tuple[Any, ...]] = field(default_factory=list)
    attempts: list[dict[str, Any]] = field(default_factory=list)
    verdicts: list[tuple[Any, ...]] = field(default_factory=list)
    docs_new: dict[int, list[str]] = field(default_factory=dict)
    docs_appended: list[tuple[int, str]] = field(default_factory=list)
    problems: list[dict[str, Any]] = field(default_factory=list)


class BatchWriter:
    """Writes batches of one file's records inside that file's transaction."""

    def __init__(self, conn: Connection, state: WriterState, roots: Roots, import_file_id: int,
                 file_label: str, report: ImportReport) -> None:
        self.conn, self.state, self.roots = conn, state, roots
        self.import_file_id, self.file_label, self.report = import_file_id, file_label, report
        self.ids = bulk.IdAllocator(conn)
        # One timestamp per file: the rows of one import belong together.
        self.now = bulk.db_value(conn, T["run"], "created_at", utcnow())
        self.runs_added = 0
        self.problems = 0
        self.indexed: list[int] = []  # tasks whose search documents this file wrote
        self._pending_problems: list[dict[str, Any]] = []
        self.indexer = search.Indexer(conn)

    def close(self, *, failing: bool = False) -> None:
        """Every batch's documents in: before the file's transaction ends, either way.
        ``failing``: the file is being abandoned for another error, which is the one to
        report; the indexer's own, if it has one, is logged."""
        try:
            self.indexer.close()
        except Exception:
            if not failing:
                raise
            logger.exception("%s: its search documents failed too, after the error reported",
                             self.file_label)

    def problem(self, task_key: str, kind: str, detail: str) -> None:
        self.problems += 1
        self.report.add_problem(Problem(self.file_label, task_key, kind, detail))
        self._pending_problems.append({"import_file_id": self.import_file_id,
                                       "task_key": task_key, "kind": kind, "detail": detail})

    def write(self, records: list[TaskRecord]) -> None:
        rows = _Rows()
        run_ids = iter(self.ids.take("run", len(records)))
        attempt_ids = iter(self.ids.take("attempt", sum(len(r.attempts) for r in records)))
        verdict_ids = iter(self.ids.take(
            "judge_verdict", sum(1 for r in records for a in r.attempts if a.verdict)))
        for record in records:
            self._add(record, rows, run_ids, attempt_ids, verdict_ids)
        self._flush(rows)

    def _add(self, record: TaskRecord, rows: _Rows, run_ids: Iterator[int],
             attempt_ids: Iterator[int], verdict_ids: Iterator[int]) -> None:
        source_id = self._source_id(record, rows)
        task_id = self._task_id(record, source_id, rows)
        if (task_id, record.fingerprint) in self.state.fingerprints:
            self.report.runs_unchanged += 1
            return
        self.state.fingerprints.add((task_id, record.fingerprint))
        for kind, detail in record.warnings:
            self.problem(record.key, kind, detail)
        record.settle()
        run_id = next(run_ids)
        rows.runs.append(_run_row(record, run_id, task_id, self.import_file_id, self.now))
        attempt_rows = [self._attempt_row(record.key, a, next(attempt_ids), run_id)
                        for a in record.attempts]
        rows.attempts.extend(attempt_rows)
        for attempt, row in zip(record.attempts, attempt_rows, strict=True):
            if attempt.verdict:
                rows.verdicts.append(_verdict_row(attempt, next(verdict_ids), row["id"], self.now))
        self._update_task(record, task_id, run_id, attempt_rows, rows)
        self.runs_added += 1
        self.report.runs_added[record.outcome.value] += 1
        self.report.attempts_added += len(attempt_rows)

    def _source_id(self, record: TaskRecord, rows: _Rows) -> int:
        category = source_category(record.direction, record.disease)
        index = self.roots.source_index
        filename = record.image
        if index is not None:
            names = [record.image, *record.image_alternatives]
            found = index.first_existing([f"{record.dataset}/{category}/{n}" for n in names])
            filename = found.rsplit("/", 1)[1] if found else record.image
        key = (record.dataset, category, filename)
        known = self.state.sources.get(key)
        present = index is not None and index.exists(f"{record.dataset}/{category}/{filename}")
        if index is not None and not present:
            self.problem(record.key, "missing_original",
                         f"original {record.dataset}/{category}/{filename} not found under source root")
        if known is not None:
            source_id, was_present = known
            if present and not was_present:
                rows.source_updates.append({"sid": source_id, "root": self.roots.source_root_id})
                self.state.sources[key] = (source_id, True)
            return source_id
        source_id = self.ids.take("source_image", 1)[0]
        rows.sources.append({
            "id": source_id, "dataset": record.dataset, "modality": record.modality.value,
            "category": category, "filename": filename, "present": present,
            "root_id": self.roots.source_root_id if present else None,
        })
        self.state.sources[key] = (source_id, present)
        return source_id

    def _task_id(self, record: TaskRecord, source_id: int, rows: _Rows) -> int:
        key = (source_id, record.disease, record.direction.value)
        task_id = self.state.tasks.get(key)
        if task_id is not None:
            return task_id
        task_id = self.ids.take("task", 1)[0]
        rows.tasks[task_id] = {
            "id": task_id, "source_image_id": source_id, "dataset": record.dataset,
            "modality": record.modality.value, "disease": record.disease,
            "direction": record.direction.value, "task_key": record.key,
            "latest_run_id": None, "outcome": None, "n_rounds": 0, "failed_mask": 0,
            "accepted_attempt_id": None, "thumb_attempt_id": None,
        }
        rows.docs_new[task_id] = []
        self.state.tasks[key] = task_id
        self.report.tasks_added += 1
        return task_id

    def _attempt_row(self, key: str, attempt: AttemptRecord, attempt_id: int,
                     run_id: int) -> dict[str, Any]:
        relpath, present = None, False
        if attempt.image_candidates:
            found = self.roots.run_index.first_existing(attempt.image_candidates)
            relpath, present = found or attempt.image_candidates[0], found is not None
            if not present:
                self.problem(key, "missing_image", f"round {attempt.round}: {relpath} not found")
        return {
            "id": attempt_id, "run_id": run_id, "round": attempt.round,
            "instruction": attempt.instruction, "instruction_thinking": attempt.instruction_thinking,
            "image_root_id": self.roots.run_root_id if relpath else None,
            "image_relpath": relpath, "image_present": present, "edit_error": attempt.edit_error,
        }

    def _update_task(self, record: TaskRecord, task_id: int, run_id: int,
                     attempt_rows: list[dict[str, Any]], rows: _Rows) -> None:
        text = "\n".join(filter(None, [a.instruction for a in record.attempts]
                                + [a.verdict.reason for a in record.attempts if a.verdict]))
        if task_id in rows.docs_new:
            rows.docs_new[task_id].append(text)
        else:
            rows.docs_appended.append((task_id, text))
        if not (record.is_current or task_id not in self.state.has_latest):
            return
        self.state.has_latest.add(task_id)
        summary = _task_summary(record, run_id, attempt_rows)
        if task_id in rows.tasks:
            rows.tasks[task_id].update(summary)
        else:
            rows.task_updates[task_id] = summary

    def _flush(self, rows: _Rows) -> None:
        conn = self.conn
        _insert_dicts(conn, "source_image", rows.sources)
        if rows.source_updates:
            s = T["source_image"]
            conn.execute(update(s).where(s.c.id == _bind("sid")).values(
                present=True, root_id=_bind("root")), rows.source_updates)
        _insert_dicts(conn, "task", list(rows.tasks.values()))
        bulk.insert_rows(conn, T["run"], RUN_COLUMNS, rows.runs)
        bulk.insert_rows(conn, T["attempt"], ATTEMPT_COLUMNS, list(map(_ATTEMPT_ROW, rows.attempts)))
        bulk.insert_rows(conn, T["judge_verdict"], VERDICT_COLUMNS, rows.verdicts)
        if rows.task_updates:
            t = T["task"]
            conn.execute(update(t).where(t.c.id == _bind("tid")).values(
                {name: _bind(name) for name in _SUMMARY_FIELDS}),
                [{"tid": tid, **values} for tid, values in rows.task_updates.items()])
        self.indexer.add([(tid, "\n".join(parts)) for tid, parts in rows.docs_new.items()],
                         rows.docs_appended)
        self.indexed.extend(rows.docs_new)
        self.indexed.extend(tid for tid, _ in rows.docs_appended)
        self.report.verdicts_added += len(rows.verdicts)
        if self._pending_problems:
            conn.execute(T["import_problem"].insert(), self._pending_problems)
            self._pending_problems = []


_SUMMARY_FIELDS = ("latest_run_id", "outcome", "n_rounds", "failed_mask",
                   "accepted_attempt_id", "thumb_attempt_id")


def _insert_dicts(conn: Connection, table: str, rows: list[dict[str, Any]]) -> None:
    """Rows that all have the same keys, in one bulk insert."""
    if rows:
        columns = tuple(rows[0])
        bulk.insert_rows(conn, T[table], columns, list(map(_row_of(columns), rows)))


def _row_of(columns: tuple[str, ...]) -> Callable[[dict[str, Any]], tuple[Any, ...]]:
    """A dict's values in the order of ``columns``, as a tuple (itemgetter makes it in C;
    given one column, it would return the bare value)."""
    if len(columns) == 1:
        return lambda row: (row[columns[0]],)
    return itemgetter(*columns)


_ATTEMPT_ROW = _row_of(ATTEMPT_COLUMNS)


def _bind(name: str) -> Any:
    return bindparam(name)


def _task_summary(record: TaskRecord, run_id: int,
                  attempt_rows: list[dict[str, Any]]) -> dict[str, Any]:
    """The latest run's facts, copied onto the task for fast listing."""
    verdicts = [{d: getattr(a.verdict, d) for d in DIMENSIONS}
                for a in record.attempts if a.verdict is not None]
    return task_summary(run_id, record.outcome,
                        [(row["id"], bool(row["image_relpath"])) for row in attempt_rows],
                        verdicts)


def _run_row(record: TaskRecord, run_id: int, task_id: int, import_file_id: int,
             now: Any) -> tuple[Any, ...]:
    return (run_id, task_id, RunOrigin.imported.value, record.outcome.value,
            len(record.attempts), record.success_round, record.final_instruction,
            record.failure_step, record.failure_round, record.failure_error,
            record.fingerprint, import_file_id, now)


def _verdict_row(attempt: AttemptRecord, verdict_id: int, attempt_id: int,
                 now: Any) -> tuple[Any, ...]:
    v = attempt.verdict
    assert v is not None
    return (verdict_id, attempt_id, v.compliance, v.structure, v.realism, v.fidelity,
            v.qualified, v.has_disease, v.weighted_score, v.reason, v.thinking_summary,
            v.error, None, IMPORTED_PROMPT_VERSION, v.raw_json, now)
