"""The DICOM instances of a selection, one task at a time: each source image's original
once, then each chosen edit and its report. An image that does not decode is left out,
named and counted, and the rest goes on (its edits still name the original's UID, which
does not depend on its pixels)."""

import hashlib
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from datetime import datetime

from pydicom.dataset import Dataset
from sqlalchemy import func, select
from sqlmodel import Session, col

from app.dicom.instances import Source, UnreadablePixels, edit_instance, original_instance
from app.dicom.report import Assessment, assessment_report
from app.dicom.selection import DicomSelection, chosen_edits
from app.dicom.uids import Uids
from app.exports.consensus import consensus_by_attempt
from app.exports.records import judge_answers
from app.images.files import ImageKind, ImageNotFound, resolve_image
from app.models import Attempt, JudgeVerdict, Run, SourceImage, Task
from app.provenance.facts import edit_facts
from app.staging import LeftOut

# SOP Class UIDs: Secondary Capture, Comprehensive SR.
SC_CLASS = "1.2.840.10008.5.1.4.1.1.7"


@dataclass
class Built:
    """What was made, and what was left out and why."""
    originals: int = 0
    edits: int = 0
    reports: int = 0
    left_out: LeftOut = field(default_factory=LeftOut)


def instances(session: Session, chosen: DicomSelection, uids: Uids, built: Built, *,
              on_progress: Callable[[int, int], None] | None = None) -> Iterator[Dataset]:
    edits = chosen_edits(session, chosen)
    consensus = consensus_by_attempt(session, locked_only=True)
    total, done = sum(len(ids) for ids in edits.values()), 0
    originals_made: set[int] = set()
    for task_id, attempt_ids in edits.items():
        task = session.get(Task, task_id)
        assert task is not None
        source = _source(session, task, uids)
        original = _original(session, task, source, uids, built, made=task.source_image_id in originals_made)
        originals_made.add(task.source_image_id)
        if original is not None and original.get("PixelData") is not None:
            yield original
        for attempt_id in attempt_ids:
            yield from _edit(session, task, source, attempt_id, original, uids, consensus, built)
            done += 1
            if on_progress:
                on_progress(done, total)
        session.expunge_all()  # memory stays flat over a whole modality


def _source(session: Session, task: Task, uids: Uids) -> Source:
    image = session.get(SourceImage, task.source_image_id)
    assert image is not None
    key = f"{image.dataset}/{image.category}/{image.filename}"
    return Source(key=key, modality=task.modality, study_uid=uids.uid("study", key),
                  patient_id=uids.patient_id(key))


def _original(session: Session, task: Task, source: Source, uids: Uids, built: Built, *,
              made: bool) -> Dataset:
    """The original's instance; once per source image in an export (later tasks get a stub
    with only what their edits refer to)."""
    series_uid, sop_uid = uids.uid("originals", source.key), uids.uid("original", source.key)
    stub = Dataset()
    stub.SOPClassUID, stub.SOPInstanceUID = SC_CLASS, sop_uid
    if made:
        return stub
    when = session.scalar(select(func.min(Run.created_at)).join(Task, col(Task.id) == Run.task_id)
                          .where(col(Task.source_image_id) == task.source_image_id))
    try:
        data = resolve_image(session, ImageKind.source, task.source_image_id).read_bytes()
        found = original_instance(data, source, series_uid=series_uid, sop_uid=sop_uid,
                                  when=when or datetime(1970, 1, 1))
    except (ImageNotFound, UnreadablePixels) as error:
        built.left_out.note("DICOM", f"original {source.key}", error)
        return stub
    built.originals += 1
    return found


def _edit(session: Session, task: Task, source: Source, attempt_id: int, original: Dataset,
          uids: Uids, consensus: dict[int, dict[str, bool | None]], built: Built) -> Iterator[Dataset]:
    facts = edit_facts(session, attempt_id)
    attempt = session.get(Attempt, attempt_id)
    assert attempt is not None
    run = session.get(Run, attempt.run_id)
    assert run is not None
    key = f"{task.task_key}/{run.fingerprint}"
    what = f"{task.task_key} round {facts.round}"
    try:
        data = resolve_image(session, ImageKind.attempt, attempt_id).read_bytes()
        edit = edit_instance(data, source, facts, original=original,
                             series_uid=uids.uid("edits", key), series_number=_series_number(key),
                             sop_uid=uids.uid("edit", key, str(facts.round)), when=run.created_at)
    except (ImageNotFound, UnreadablePixels) as error:
        built.left_out.note("DICOM", what, error)
        return
    built.edits += 1
    yield edit
    verdict = session.scalars(select(JudgeVerdict).where(col(JudgeVerdict.attempt_id) == attempt_id)
                              .order_by(col(JudgeVerdict.id)).limit(1)).first()
    assessment = Assessment(judge=judge_answers(verdict),
                            judge_model=(verdict.model or "") if verdict else "",
                            judge_reason=(verdict.reason or "") if verdict else "",
                            consensus=consensus.get(attempt_id, {}))
    # The report's UID follows its content: a consensus settled later makes a new instance.
    content = hashlib.sha256(repr(assessment).encode()).hexdigest()
    built.reports += 1
    yield assessment_report(edit, assessment, series_uid=uids.uid("reports", key),
                            sop_uid=uids.uid("report", key, str(facts.round), content),
                            instance_number=facts.round)


def _series_number(key: str) -> int:
    """A series number stable across exports (it need not be unique; the UID is)."""
    return 2 + int(hashlib.sha256(key.encode()).hexdigest()[:6], 16) % 899
