"""An export folder, written as a stream and moved into place at the end: rows go to JSON
Lines and to Parquet (pyarrow, a row group at a time), images are copied (or hard-linked)
once each under ``images/``, and ``manifest.json`` says what was written and by which rule.
Nothing appears under TARGET until the end: a failure removes ``TARGET.partial``, and one a
killed process left behind is cleared by the next run."""

import json
import os
import shutil
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
from sqlmodel import Session

from app.images.files import ImageKind, resolve_image
from app.jobs import ExportError  # one refusal for every export: export-run's too

__all__ = ["ExportError", "ExportFolder", "ExportSummary"]

ROW_GROUP = 2000


@dataclass
class ExportSummary:
    target: Path
    rows: int
    images: int
    counts: dict[str, int] = field(default_factory=dict)


class ExportFolder:
    def __init__(self, target: Path, name: str, schema: pa.Schema, *, link: bool = False) -> None:
        if target.exists():
            raise ExportError(f"{target} already exists; choose a new folder")
        if not target.parent.is_dir():
            raise ExportError(f"{target.parent} is not a folder")
        self.target = target
        self.partial = target.with_name(target.name + ".partial")
        shutil.rmtree(self.partial, ignore_errors=True)
        (self.partial / "images").mkdir(parents=True)
        self.name, self.schema, self.link = name, schema, link
        self._jsonl = (self.partial / f"{name}.jsonl").open("w", encoding="utf-8")
        self._parquet = pq.ParquetWriter(self.partial / f"{name}.parquet", schema)
        self._pending: list[dict[str, Any]] = []
        self._written: dict[tuple[ImageKind, int], str] = {}
        self.rows = 0

    def image(self, session: Session, kind: ImageKind, image_id: int) -> str:
        """The image's path in the export (relative to the folder), written once."""
        key = (kind, image_id)
        if key in self._written:
            return self._written[key]
        found = resolve_image(session, kind, image_id)
        suffix = found.path.suffix.lower() or ".jpeg"
        relative = f"images/{'src' if kind is ImageKind.source else 'edit'}/{image_id}{suffix}"
        out = self.partial / relative
        out.parent.mkdir(parents=True, exist_ok=True)
        if self.link and found.remote is None:
            try:
                os.link(found.root / found.path, out)
            except OSError:
                self._copy(found, out)
        else:
            self._copy(found, out)
        self._written[key] = relative
        return relative

    @staticmethod
    def _copy(found: Any, out: Path) -> None:
        with found.open() as source, out.open("wb") as sink:
            shutil.copyfileobj(source, sink, 1 << 20)

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
                    "files": {"jsonl": f"{self.name}.jsonl", "parquet": f"{self.name}.parquet",
                              "images": "images/"}}
        (self.partial / "manifest.json").write_text(json.dumps(manifest, indent=2) + "\n")
        self.partial.rename(self.target)
        return ExportSummary(self.target, self.rows, len(self._written), manifest.get("counts", {}))

    def abandon(self) -> None:
        self._jsonl.close()
        self._parquet.close()
        shutil.rmtree(self.partial, ignore_errors=True)
