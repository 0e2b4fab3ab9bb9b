"""Write runs back out in the generation scripts' layout (../shared/medbanana-format.md), so
regenerated output stays compatible with the published data set and with this importer.

One record per task: its latest run, or its latest regenerated run with ``only_regenerated``.
The JSON holds exactly the scripts' fields; fidelity, which the scripts never wrote, stays in
the database. Every edit is written marked as synthetic (app/provenance); an edit that
cannot be read or marked is left out, named in ``manifest.json`` and counted. Files are
written under a temporary folder and moved into place at the end, so an interrupted export
leaves nothing half-written under DIR.
"""

import json
from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from sqlalchemy import select
from sqlalchemy.engine import Engine
from sqlmodel import Session, col

from app.audit import manifest_stamp, record_export
from app.images.files import ImageNotFound
from app.importer import layout
from app.importer.scripts_files import ScriptsFolder, final_image
from app.models import Attempt, Direction, JudgeVerdict, Run, SourceImage, Task
from app.provenance.marker import Marker
from app.staging import ExportError, LeftOut, discard_folder, place_folder, stage_export
from pipeline.vocabulary import ENDS, Outcome

KIND = "runs in the generation scripts' layout"


@dataclass
class ExportedRuns:
    tasks: int = 0
    edits: int = 0
    left_out: LeftOut = field(default_factory=LeftOut)
    audit_log: dict[str, object] = field(default_factory=dict)  # the log's head when written


def _verification(verdict: JudgeVerdict | None, direction: Direction) -> dict[str, Any] | None:
    if verdict is None:
        return None
    if verdict.error:
        return {"error": verdict.error}
    # The scripts' has_disease; compliance is derived from it per direction on import.
    has_disease = verdict.has_disease
    if has_disease is None and verdict.compliance is not None:
        has_disease = verdict.compliance if direction is Direction.add else not verdict.compliance
    found = {"qualified": verdict.qualified, "has_disease": has_disease,
             "structure_reasonable": verdict.structure, "looks_realistic": verdict.realism,
             "reason": verdict.reason or ""}
    if verdict.thinking_summary:
        found["thinking_summary"] = verdict.thinking_summary
    return found


def export_runs(engine: Engine, target: Path, marker: Marker, *, only_regenerated: bool = False,
                only_attempts: set[int] | None = None,
                on_progress: Callable[[int, int], None] | None = None) -> ExportedRuns:
    """Write the runs under ``target`` (which must not exist yet).
    With ``only_attempts``, only the tasks whose accepted edit is one of them (a curated
    subset, app/exports/curated.py)."""
    partial = stage_export(target)
    try:
        written = _write_runs(engine, partial, marker, only_regenerated, only_attempts,
                              on_progress)
        written.audit_log = manifest_stamp(engine)
        manifest = {"kind": KIND, "tasks": written.tasks,
                    "edits": written.edits, "left_out": written.left_out,
                    "marking": marker.note(), "audit_log": written.audit_log}
        (partial / "manifest.json").write_text(json.dumps(manifest, indent=2) + "\n")
        place_folder(partial, target)
    except FileExistsError as error:
        raise ExportError(str(error)) from None
    except BaseException:
        discard_folder(partial)
        raise
    if only_attempts is None:  # a curated subset records itself, with its own manifest
        record_export(engine, KIND, str(target), manifest, actor="shell")
    return written


def _write_runs(engine: Engine, partial: Path, marker: Marker, only_regenerated: bool,
                only_attempts: set[int] | None,
                on_progress: Callable[[int, int], None] | None) -> ExportedRuns:
    folders: dict[tuple[str, Direction], ScriptsFolder] = defaultdict(ScriptsFolder)
    written = ExportedRuns()
    with Session(engine) as session:
        query = select(Task, SourceImage).join(SourceImage, col(SourceImage.id) == Task.source_image_id)
        if only_attempts is not None:  # tens of thousands of ids: no IN list, a set test
            query = query.where(col(Task.accepted_attempt_id).is_not(None))
        rows = session.execute(query.order_by(col(Task.id))).all()
        if only_attempts is not None:
            rows = [r for r in rows if r[0].accepted_attempt_id in only_attempts]
        for n, (task, source) in enumerate(rows, start=1):
            run = _chosen_run(session, task, only_regenerated)
            if run is not None:
                _write_task(session, partial, folders, task, source, run, marker, written)
                written.tasks += 1
            if on_progress:
                on_progress(n, len(rows))
    for (dataset, direction), files in folders.items():
        files.write(partial, dataset, direction)
    return written


def _chosen_run(session: Session, task: Task, only_regenerated: bool) -> Run | None:
    query = select(Run).where(col(Run.task_id) == task.id, col(Run.outcome).in_(ENDS))
    if only_regenerated:
        query = query.where(col(Run.origin) == "regeneration")
    return session.scalars(query.order_by(col(Run.id).desc()).limit(1)).first()


def _write_task(session: Session, out: Path, folders: dict[tuple[str, Direction], ScriptsFolder],
                task: Task, source: SourceImage, run: Run, marker: Marker,
                written: ExportedRuns) -> None:
    direction = Direction(task.direction)
    files = folders[(task.dataset, direction)]
    stem, image = layout.stem_of(source.filename), source.filename
    # The scripts' format knows no block: a blocked run is written as the API failure it is
    # there, with its reason as the error.
    refused = run.outcome in (Outcome.api_failed, Outcome.blocked)
    if refused and run.n_rounds == 0:
        files.api_failure(task.task_key, image, task.disease, step=run.failure_step or "",
                          round=run.failure_round or 1, error=run.failure_error or "")
        return
    attempts = session.execute(
        select(Attempt, JudgeVerdict).outerjoin(JudgeVerdict, col(JudgeVerdict.attempt_id) == Attempt.id)
        .where(col(Attempt.run_id) == run.id).order_by(col(Attempt.round), col(JudgeVerdict.id))).all()
    rounds: dict[int, dict[str, Any]] = {}
    success = run.outcome == Outcome.success
    for attempt, verdict in attempts:
        if attempt.round in rounds:
            continue  # re-judgements: the scripts kept one verdict per round
        entry: dict[str, Any] = {
            "round": attempt.round,
            "generate_prompt": {"thinking_summary": attempt.instruction_thinking or "",
                                "prompt": attempt.instruction or ""},
            "edit_result": ({"success": False, "error": attempt.edit_error} if attempt.edit_error
                            else {"success": True}),
        }
        verification = _verification(verdict, direction)
        if verification is not None:
            entry["verification"] = verification
        rounds[attempt.round] = entry
        if attempt.image_present:
            accepted = success and attempt.round == run.n_rounds
            relpath = (layout.accepted_relpath(task.dataset, direction, stem, task.disease) if accepted
                       else layout.failed_relpath(task.dataset, direction, stem, task.disease,
                                                  attempt.round))
            try:
                data = marker.edit(session, attempt.id or 0)
            except ImageNotFound as error:
                written.left_out.note("export-run", f"{task.task_key} round {attempt.round}", error)
                continue
            # The scripts' names end in .jpeg; an edit that is a PNG keeps its own suffix
            # (the importer looks for both).
            target = (out / relpath).with_suffix(Path(attempt.image_relpath or relpath).suffix)
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(data)
            written.edits += 1
    ordered = [rounds[k] for k in sorted(rounds)]
    final = final_image(task.dataset, direction, stem, task.disease, success=success,
                        rounds=len(ordered))
    failed_call = ((run.failure_step or "", run.failure_round or len(ordered),
                    run.failure_error or "") if refused else None)
    files.judged(task.task_key, image, task.disease, ordered, success=success,
                 final_image=final, failed_call=failed_call)
