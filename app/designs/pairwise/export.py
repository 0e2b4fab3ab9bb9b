"""A pairwise study's human-verified preference pairs, in the layout EditReward's data uses
(``path_src``, ``path1`` preferred, ``path2``, ``tie``), as JSON Lines and Parquet with the
images (app/exports/folder.py), and as one zip to download.

Each pair carries every reader's vote and their agreement. The readers' answer is the one
most of them gave: one edit preferred (it becomes ``path1``), both equal (``tie``), or both
unacceptable, kept apart in ``both_unacceptable`` (a pair nobody would train on as a
preference). Pairs whose readers split without a majority are left out and counted.
"""

import json
import tempfile
import zipfile
from collections import Counter, defaultdict
from pathlib import Path
from typing import Any

import pyarrow as pa
from sqlalchemy import select
from sqlalchemy.engine import Engine
from sqlmodel import Session, col

from app.designs.pairwise.figures import editors_of, reads_of
from app.exports.folder import ExportFolder, ExportSummary
from app.images.files import ImageKind, ImageNotFound
from app.models import Task
from app.provenance.marker import Marker
from app.studies.models import Study, StudyItem, StudyPair

VOTE = pa.struct([("reader", pa.string()), ("choice", pa.string()), ("confidence", pa.int32()),
                  # the reader's reasons (failure tags) and comment on the pair
                  ("reasons", pa.list_(pa.string())), ("comment", pa.string())])
SCHEMA = pa.schema([
    ("pair_id", pa.string()), ("task_key", pa.string()), ("modality", pa.string()),
    ("disease", pa.string()), ("direction", pa.string()), ("kind", pa.string()),
    ("path_src", pa.string()), ("path1", pa.string()), ("path2", pa.string()),
    ("tie", pa.bool_()), ("both_unacceptable", pa.bool_()), ("instruction", pa.string()),
    ("round1", pa.int32()), ("round2", pa.int32()),
    # Who made each edit: "imported" (the data set's own) or "regenerated · <edit model>".
    ("editor1", pa.string()), ("editor2", pa.string()), ("votes", pa.list_(VOTE)),
    ("readers", pa.int32()), ("agreement", pa.float64()),
])


def write_pairwise(engine: Engine, study_id: int, target: Path, marker: Marker, *,
                   actor: str = "shell") -> ExportSummary:
    """The study's pairs into a new folder ``target`` (written whole, or not at all)."""
    folder = ExportFolder(target, "pairs", SCHEMA, marker, engine=engine, actor=actor)
    counts = {"pairs": 0, "ties": 0, "both_unacceptable": 0, "split": 0, "unread": 0,
              "skipped_missing_image": 0}
    try:
        with Session(engine) as session:
            study = session.get(Study, study_id)
            assert study is not None
            votes = _votes(session, study)
            query = (select(StudyItem, StudyPair, Task)
                     .join(StudyPair, col(StudyPair.item_id) == StudyItem.id)
                     .join(Task, col(Task.id) == StudyItem.task_id)
                     .where(col(StudyItem.study_id) == study_id).order_by(col(StudyItem.id)))
            found = session.execute(query).all()
            editors = editors_of(session, {run for _, pair, _ in found
                                           for run in (pair.first_run_id, pair.second_run_id)})
            for item, pair, task in found:
                row = _row(session, folder, item, pair, task, votes.get(item.id or 0, []), counts,
                           editors)
                if row is not None:
                    folder.add(row)
        manifest = {"kind": "pairwise preference pairs", "study": study.name,
                    "layout": "EditReward: path_src, path1 (preferred), path2, tie; "
                              "both_unacceptable kept apart",
                    "rule": "the answer most readers gave; a split without a majority is left out",
                    "counts": counts, "columns": SCHEMA.names}
        return folder.finish(manifest)
    except BaseException:
        folder.abandon()
        raise


def zipped_pairwise(engine: Engine, study_id: int, archive: Path, marker: Marker, *,
                    actor: str = "shell") -> None:
    """The export folder as one zip file at ``archive``, for a download: written to disk, not
    held in memory, since a large study's images run to gigabytes. Images are stored as they
    are (they are compressed already); the tables are deflated."""
    with tempfile.TemporaryDirectory(dir=archive.parent) as scratch:
        target = Path(scratch) / "pairs"
        write_pairwise(engine, study_id, target, marker, actor=actor)
        with zipfile.ZipFile(archive, "w") as zipped:
            for path in sorted(target.rglob("*")):
                if path.is_file():
                    name = path.relative_to(target)
                    image = name.parts[0] == "images"
                    zipped.write(path, name.as_posix(),
                                 zipfile.ZIP_STORED if image else zipfile.ZIP_DEFLATED)


Vote = tuple[str, str, int, list[str], str]  # reader, choice, confidence, reasons, comment


def _votes(session: Session, study: Study) -> dict[int, list[Vote]]:
    """Item id -> each reader's answer in force on a first read, the reads the figures count."""
    found: dict[int, list[Vote]] = defaultdict(list)
    for read in reads_of(session, study):
        found[read.item_id].append((read.reader, read.choice, read.confidence,
                                    list(json.loads(read.tags or "[]")), read.comment))
    return found


def _row(session: Session, folder: ExportFolder, item: StudyItem, pair: StudyPair, task: Task,
         votes: list[Vote], counts: dict[str, int],
         editors: dict[int, str]) -> dict[str, Any] | None:
    if not votes:
        counts["unread"] += 1
        return None
    tally = Counter(vote[1] for vote in votes).most_common()
    if len(tally) > 1 and tally[0][1] == tally[1][1]:
        counts["split"] += 1
        return None
    said = tally[0][0]
    second_first = said == "second"
    try:
        source = folder.image(session, ImageKind.source, task.source_image_id)
        first = folder.image(session, ImageKind.attempt, pair.first_attempt_id)
        second = folder.image(session, ImageKind.attempt, item.attempt_id)
    except ImageNotFound as error:
        folder.left_out(f"pair of item {item.id} ({task.task_key})", error)
        counts["skipped_missing_image"] += 1
        return None
    agreeing = sum(a[1] == b[1] for i, a in enumerate(votes) for b in votes[i + 1:])
    reader_pairs = len(votes) * (len(votes) - 1) // 2
    counts["pairs"] += 1
    counts["ties"] += said == "equal"
    counts["both_unacceptable"] += said == "neither"

    def side(choice: str) -> str:  # the vote in the row's own terms
        if choice in ("first", "second"):
            return "path1" if (choice == "second") == second_first else "path2"
        return choice

    return {
        "pair_id": item.uid, "task_key": task.task_key, "modality": task.modality,
        "disease": task.disease, "direction": task.direction, "kind": pair.kind,
        "path_src": source, "path1": second if second_first else first,
        "path2": first if second_first else second, "tie": said == "equal",
        "both_unacceptable": said == "neither", "instruction": item.reader_instruction,
        "round1": pair.second_round if second_first else pair.first_round,
        "round2": pair.first_round if second_first else pair.second_round,
        "editor1": editors[pair.second_run_id if second_first else pair.first_run_id],
        "editor2": editors[pair.first_run_id if second_first else pair.second_run_id],
        "votes": [{"reader": r, "choice": side(c), "confidence": k, "reasons": reasons,
                   "comment": comment} for r, c, k, reasons, comment in votes],
        "readers": len(votes),
        "agreement": agreeing / reader_pairs if reader_pairs else None,
    }
