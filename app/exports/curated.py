"""A curated subset of the accepted edits for training an editor: filtered by modality,
direction and disease, by the preservation metrics of the edit (SSIM outside the change,
share of the image changed, PSNR), and by the readers' consensus where they read the edit.

Written as a folder with Parquet, JSON Lines and the images, or in the generation scripts'
layout (the importer reads it back). The manifest states the filter, the counts at each step,
and the quality estimate of the edits the facet and metric filters keep (PPI, as /quality):
the readers' rule is applied after it, since a set chosen by the readers' answers has no
unbiased estimate of its own; removing edits the readers failed can only raise it.
"""

import json
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path
from typing import Any

import pyarrow as pa
from sqlalchemy import func, select
from sqlalchemy.engine import Engine
from sqlmodel import Session, col

from app.audit import record_export
from app.cases.filters import CaseFilter, where_clauses
from app.exports.consensus import consensus_by_attempt
from app.exports.folder import ExportError, ExportFolder, ExportSummary
from app.exports.records import answer_columns, rounds_of, task_chunks
from app.exports.runs import export_runs
from app.models import Task
from app.provenance.marker import Marker
from app.quality.report import SubsetEstimate, subset_estimate
from pipeline.vocabulary import QUESTIONS


class ReadersRule(StrEnum):
    any = "any"  # the readers' answers are not looked at
    not_rejected = "not-rejected"  # edits the readers failed are left out
    accepted = "accepted"  # only edits the readers read and passed


class Layout(StrEnum):
    parquet = "parquet"
    scripts = "scripts"


RANGES = {"ssim_outside_min": (0.0, 1.0), "changed_max": (0.0, 100.0), "psnr_min": (0.0, 100.0)}


@dataclass(frozen=True)
class CuratedFilter:
    modality: tuple[str, ...] = ()
    direction: tuple[str, ...] = ()
    disease: tuple[str, ...] = ()
    readers: ReadersRule = ReadersRule.not_rejected
    ssim_outside_min: float | None = None  # 0 to 1
    changed_max: float | None = None  # percent of the image, 0 to 100
    psnr_min: float | None = None  # dB, 0 to 100

    def checked(self) -> "CuratedFilter":
        for name, (low, high) in RANGES.items():
            value = getattr(self, name)
            if value is not None and not low <= value <= high:
                raise ExportError(f"{name.replace('_', '-')} is {low:g} to {high:g}, not {value:g}")
        return self

    def as_dict(self) -> dict[str, Any]:
        found = {"modality": list(self.modality), "direction": list(self.direction),
                 "disease": list(self.disease), "readers": self.readers.value,
                 "ssim_outside_min": self.ssim_outside_min, "changed_max_percent": self.changed_max,
                 "psnr_min_db": self.psnr_min}
        return {k: v for k, v in found.items() if v not in (None, [])}

    def metric_clauses(self) -> list[Any]:
        clauses = []
        if self.ssim_outside_min is not None:
            clauses.append(col(Task.final_ssim_outside) >= self.ssim_outside_min)
        if self.changed_max is not None:
            clauses.append(col(Task.final_changed) <= self.changed_max / 100)
        if self.psnr_min is not None:
            clauses.append(col(Task.final_psnr) >= self.psnr_min)
        return clauses


ANSWERS = pa.struct([(q, pa.bool_()) for q in QUESTIONS])
SCHEMA = pa.schema([
    ("task_key", pa.string()), ("modality", pa.string()), ("disease", pa.string()),
    ("direction", pa.string()), ("path_src", pa.string()), ("path_edit", pa.string()),
    ("instruction", pa.string()), ("round", pa.int32()), ("judge", ANSWERS), ("readers", ANSWERS),
    ("ssim_outside", pa.float64()), ("changed", pa.float64()), ("psnr", pa.float64()),
    ("regions", pa.int32()),
])


def write_curated(engine: Engine, target: Path, chosen: CuratedFilter, marker: Marker, *,
                  layout: Layout = Layout.parquet, link: bool = False,
                  on_progress: Callable[[int, int], None] | None = None) -> ExportSummary:
    chosen = chosen.checked()
    facets = CaseFilter(modality=chosen.modality, direction=chosen.direction, disease=chosen.disease)
    with Session(engine) as session:
        base = [*where_clauses(facets, session.get_bind().dialect.name),
                col(Task.accepted_attempt_id).is_not(None)]
        where = [*base, *chosen.metric_clauses()]
        counts = {"accepted_edits": _count(session, base), "after_metrics": _count(session, where)}
        readers = consensus_by_attempt(session)
        metric_ids, kept_ids = _chosen(session, where, readers, chosen.readers)
        counts |= {"dropped_by_readers": len(metric_ids) - len(kept_ids), "kept": len(kept_ids)}
        quality = subset_estimate(session, metric_ids)
        outside = _modalities(session, quality.outside) if quality else {}
    manifest: dict[str, Any] = {
        "kind": "curated accepted edits", "filter": chosen.as_dict(), "counts": counts,
        "quality": _quality(quality, outside, chosen.readers, counts)}
    if layout is Layout.scripts:
        return _scripts(engine, target, kept_ids, manifest, marker, on_progress)
    folder = ExportFolder(target, "curated", SCHEMA, marker, link=link, engine=engine)
    try:
        with Session(engine) as session:
            done, skipped = 0, 0
            for chunk in task_chunks(session, where):
                runs = rounds_of(session, chunk)
                for task in chunk:
                    if task.accepted_attempt_id not in kept_ids:
                        continue
                    rounds = runs.get(task.latest_run_id or 0, [])
                    edit = next((r for r in rounds if r.attempt_id == task.accepted_attempt_id), None)
                    if edit is None:
                        continue
                    found = folder.source_and_edit(session, task.source_image_id,
                                                   edit.attempt_id, task.task_key)
                    if found is None:
                        skipped += 1
                        continue
                    folder.add({
                        "task_key": task.task_key, "modality": task.modality,
                        "disease": task.disease, "direction": task.direction,
                        "path_src": found[0], "path_edit": found[1],
                        "instruction": edit.instruction, "round": edit.round,
                        "judge": answer_columns(edit.judge),
                        "readers": answer_columns(readers.get(edit.attempt_id, {})),
                        "ssim_outside": task.final_ssim_outside, "changed": task.final_changed,
                        "psnr": task.final_psnr, "regions": task.final_regions})
                done += len(chunk)
                if on_progress:
                    on_progress(done, counts["after_metrics"])
        manifest["counts"]["skipped_missing_image"] = skipped
        return folder.finish(manifest)
    except BaseException:
        folder.abandon()
        raise


def _count(session: Session, where: list[Any]) -> int:
    return session.scalar(select(func.count()).select_from(Task).where(*where)) or 0


def _chosen(session: Session, where: list[Any], readers: dict[int, dict[str, bool | None]],
            rule: ReadersRule) -> tuple[set[int], set[int]]:
    """The accepted edits the facet and metric filters keep, and those the readers' rule
    keeps of them."""
    found, kept = set(), set()
    for chunk in task_chunks(session, where, size=5000):
        for task in chunk:
            attempt_id = task.accepted_attempt_id
            if attempt_id is None:
                continue
            found.add(attempt_id)
            verdict = readers.get(attempt_id, {}).get("overall")
            if not ((rule is ReadersRule.not_rejected and verdict is False)
                    or (rule is ReadersRule.accepted and verdict is not True)):
                kept.add(attempt_id)
    return found, kept


def _modalities(session: Session, attempt_ids: set[int]) -> dict[str, int]:
    """How many of these accepted edits each modality holds."""
    found: Counter[str] = Counter()
    ids = sorted(attempt_ids)
    for start in range(0, len(ids), 5000):
        found.update(session.scalars(select(col(Task.modality)).where(
            col(Task.accepted_attempt_id).in_(ids[start:start + 5000]))))
    return dict(sorted(found.items()))


def _quality(found: SubsetEstimate | None, outside: dict[str, int], rule: ReadersRule,
             counts: dict[str, int]) -> dict[str, Any]:
    if found is None:
        return {"estimate": None, "reason": "no read validation or accepted-edits study to "
                                            "estimate from (see /quality)"}
    frame = {"inside": len(found.inside), "outside": len(found.outside),
             "outside_by_modality": outside,
             "note": "the estimate is claimed only for the kept edits inside the study's sampled "
                     "frame; no study sampled the others, so it says nothing of them"}
    row = found.row
    if row is None:
        return {"estimate": None, "study": found.study, "frame": frame,
                "reason": "none of the kept edits lie inside the sampled frame of study "
                          f"{found.study['name']!r}: no estimate can be claimed for them"}
    shown = row.ppi or row.readers
    result: dict[str, Any] = {
        "of": f"the {len(found.inside):,} of the {counts['after_metrics']:,} accepted edits the "
              "facet and metric filters keep that lie inside the study's sampled frame, before "
              "the readers' rule",
        "frame": frame, "study": found.study, "question": "overall", "reads": row.reads,
        "estimate": None if shown is None else {"value": shown.value, "low": shown.low,
                                                "high": shown.high,
                                                "method": "PPI++" if row.ppi else "readers alone"},
        "judge_rate": row.judge_rate, "reason": row.reason}
    if rule is ReadersRule.accepted:
        result["after_readers"] = "every kept edit was read and passed by the readers' consensus"
    elif rule is ReadersRule.not_rejected and counts["dropped_by_readers"]:
        result["after_readers"] = (f"{counts['dropped_by_readers']} edits the readers failed were "
                                   "left out, which can only raise the estimate")
    return result


def _scripts(engine: Engine, target: Path, kept: set[int], manifest: dict[str, Any],
             marker: Marker, on_progress: Callable[[int, int], None] | None) -> ExportSummary:
    written = export_runs(engine, target, marker, only_attempts=kept, on_progress=on_progress)
    manifest["counts"] |= {"written_tasks": written.tasks, "skipped_missing_image": len(written.left_out)}
    manifest |= {"left_out": written.left_out, "marking": marker.note(),
                 "audit_log": written.audit_log}
    (target / "manifest.json").write_text(json.dumps(manifest, indent=2) + "\n")
    record_export(engine, manifest["kind"], str(target), manifest, actor="shell")
    return ExportSummary(target, written.tasks, written.edits, manifest["counts"])
