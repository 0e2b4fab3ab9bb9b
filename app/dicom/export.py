"""`medbanana export-dicom TARGET`: a selection's instances as DICOM Part 10 files, one
folder per pseudonymous patient and series, with a manifest of what was written, what was
left out, the UID root and the audit log's head. Staged and moved into place whole, like
every export (app/staging.py)."""

import json
import tempfile
import zipfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

from sqlalchemy.engine import Engine
from sqlmodel import Session

from app.audit import manifest_stamp, record_export
from app.dicom.build import Built, instances
from app.dicom.selection import DicomSelection
from app.dicom.uids import Uids
from app.staging import ExportError, discard_folder, place_folder, stage_export

KIND = "DICOM: originals (Synthetic Data NO), edits (Synthetic Data YES) and their reports"


def write_dicom(engine: Engine, target: Path, chosen: DicomSelection, uids: Uids, *,
                on_progress: Callable[[int, int], None] | None = None,
                actor: str = "shell") -> Built:
    partial = stage_export(target)
    built = Built()
    try:
        with Session(engine) as session:
            files = [_write(partial, dataset) for dataset in
                     instances(session, chosen, uids, built, on_progress=on_progress)]
        manifest: dict[str, Any] = {
            "kind": KIND, "selection": chosen.describe(),
            "uid_root": uids.root or "2.25 (UUID-derived)",
            "counts": {"originals": built.originals, "edits": built.edits,
                       "reports": built.reports, "left_out": len(built.left_out)},
            "left_out": built.left_out, "files": files, "audit_log": manifest_stamp(engine)}
        (partial / "manifest.json").write_text(json.dumps(manifest, indent=2) + "\n")
        place_folder(partial, target)
    except FileExistsError as error:
        discard_folder(partial)
        raise ExportError(str(error)) from None
    except BaseException:
        discard_folder(partial)
        raise
    record_export(engine, KIND, str(target), manifest, actor=actor)
    return built


def zipped_dicom(engine: Engine, archive: Path, chosen: DicomSelection, uids: Uids, *,
                 actor: str = "shell") -> Built:
    """The export as one zip file at ``archive`` (a download), written on disk beside it."""
    with tempfile.TemporaryDirectory(dir=archive.parent) as scratch:
        folder = Path(scratch) / "dicom"
        built = write_dicom(engine, folder, chosen, uids, actor=actor)
        with zipfile.ZipFile(archive, "w", zipfile.ZIP_DEFLATED) as zipped:
            for path in sorted(folder.rglob("*")):
                if path.is_file():
                    zipped.write(path, path.relative_to(folder).as_posix())
    return built


def _write(folder: Path, dataset: Any) -> str:
    relative = Path(dataset.PatientID) / dataset.SeriesInstanceUID / f"{dataset.SOPInstanceUID}.dcm"
    (folder / relative).parent.mkdir(parents=True, exist_ok=True)
    dataset.save_as(folder / relative, enforce_file_format=True)
    return relative.as_posix()
