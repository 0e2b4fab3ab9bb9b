"""An export folder, written as a stream and moved into place at the end: rows go to JSON
Lines and to Parquet (pyarrow, a row group at a time), images are copied (or hard-linked)
once each under ``images/`` (each edit marked as synthetic: app/provenance), and
``manifest.json`` says what was written, by which rule, and which images were left out.

Nothing appears under TARGET until the end: the folder is staged beside it under a fresh,
unique name and moved there whole (app/staging.py), and a failure removes only that.
"""

import json
import logging
import os
import shutil
import stat
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, BinaryIO

import pyarrow as pa
import pyarrow.parquet as pq
from sqlalchemy.engine import Engine
from sqlmodel import Session

from app.audit import manifest_stamp, record_export
from app.images.files import ImageKind, ImageNotFound, resolve_image
from app.provenance.marker import Marker
from app.staging import ExportError, LeftOut, discard_folder, place_folder, stage_export

__all__ = ["ExportError", "ExportFolder", "ExportSummary"]

ROW_GROUP = 2000
logger = logging.getLogger(__name__)


@dataclass
class ExportSummary:
    target: Path
    rows: int
    images: int
    counts: dict[str, int] = field(default_factory=dict)


class ExportFolder:
    def __init__(self, target: Path, name: str, schema: pa.Schema, marker: Marker, *,
                 link: bool = False, engine: Engine, actor: str = "shell") -> None:
        self.partial = stage_export(target)
        self.target = target
        (self.partial / "images").mkdir()
        self.name, self.schema, self.link, self.marker = name, schema, link, marker
        self.engine, self.actor = engine, actor
        self.skipped = LeftOut()
        self._jsonl = (self.partial / f"{name}.jsonl").open("w", encoding="utf-8")
        self._parquet = pq.ParquetWriter(self.partial / f"{name}.parquet", schema)
        self._pending: list[dict[str, Any]] = []
        self._written: dict[tuple[ImageKind, int], str] = {}
        self.rows = 0

    def image(self, session: Session, kind: ImageKind, image_id: int) -> str:
        """The image's path in the export (relative to the folder), written once: an
        original as stored (or hard-linked), an edit marked. ImageNotFound when it cannot
        be read or marked."""
        key = (kind, image_id)
        if key in self._written:
            return self._written[key]
        found = resolve_image(session, kind, image_id)
        suffix = found.path.suffix.lower() or ".jpeg"
        relative = f"images/{'src' if kind is ImageKind.source else 'edit'}/{image_id}{suffix}"
        out = self.partial / relative
        out.parent.mkdir(parents=True, exist_ok=True)
        if kind is ImageKind.attempt:  # never linked: the file written is not the stored one
            out.write_bytes(self.marker.edit(session, image_id, found.read_bytes()))
            self._written[key] = relative
            return relative
        # Opened through the data root's safe open; a hard link by name is kept only if it
        # is that very file (a link planted under the root could lead out of it).
        with found.open() as source:
            if not (self.link and found.remote is None
                    and self._linked(source, found.root / found.path, out)):
                with out.open("wb") as sink:
                    shutil.copyfileobj(source, sink, 1 << 20)
        self._written[key] = relative
        return relative

    @staticmethod
    def _linked(source: BinaryIO, name: Path, out: Path) -> bool:
        """Hard-link ``name`` to ``out`` if what lands there is the regular file ``source``
        has open (checked after linking, so a swap in between is caught); False, with
        nothing left at ``out``, when it is not or the file system cannot link."""
        opened = os.fstat(source.fileno())
        try:
            os.link(name, out, follow_symlinks=False)
        except OSError:
            return False
        made = os.lstat(out)
        if stat.S_ISREG(made.st_mode) and (made.st_ino, made.st_dev) == (opened.st_ino, opened.st_dev):
            return True
        out.unlink()
        return False

    def source_and_edit(self, session: Session, source_id: int, attempt_id: int,
                        what: str) -> tuple[str, str] | None:
        """The paths of a task's original and one of its edits, written once; None (and a
        log line naming ``what``) when either cannot be read, so the row is left out."""
        try:
            return (self.image(session, ImageKind.source, source_id),
                    self.image(session, ImageKind.attempt, attempt_id))
        except ImageNotFound as error:
            self.left_out(what, error)
            return None

    def left_out(self, what: str, error: Exception) -> None:
        """A row left out for an image that cannot be read: logged, and named in the
        manifest."""
        self.skipped.note(self.name, what, f"an image cannot be read: {error}")

    def add(self, row: dict[str, Any]) -> None:
        self._jsonl.write(json.dumps(row, ensure_ascii=False) + "\n")
        self._pending.append(row)
        self.rows += 1
        if len(self._pending) >= ROW_GROUP:
            self._flush()

    def _flush(self) -> None:
        if self._pending:
            self._parquet.write_table(pa.Table.from_pylist(self._pending, schema=self.schema))
            self._pending = []

    def finish(self, manifest: dict[str, Any]) -> ExportSummary:
        self._flush()
        self._jsonl.close()
        self._parquet.close()
        manifest = {**manifest, "rows": self.rows, "images": len(self._written),
                    "left_out": self.skipped,
                    "marking": self.marker.note(), "audit_log": manifest_stamp(self.engine),
                    "files": {"jsonl": f"{self.name}.jsonl", "parquet": f"{self.name}.parquet",
                              "images": "images/"}}
        (self.partial / "manifest.json").write_text(json.dumps(manifest, indent=2) + "\n")
        try:
            place_folder(self.partial, self.target)
        except FileExistsError as error:
            raise ExportError(str(error)) from None
        record_export(self.engine, manifest.get("kind", self.name), str(self.target), manifest,
                      actor=self.actor)
        return ExportSummary(self.target, self.rows, len(self._written), manifest.get("counts", {}))

    def abandon(self) -> None:
        self._jsonl.close()
        if self._parquet.is_open:
            self._parquet.close()
        discard_folder(self.partial)
