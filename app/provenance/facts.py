"""What the marking of one edit states, read from the database: the task, the round and its
instruction, the model that made it as its round recorded it, and the original it edits."""

import json
from dataclasses import dataclass

from sqlmodel import Session, col, select

from app.images.files import ImageNotFound
from app.models import Attempt, Run, RunOrigin, SourceImage, Task
from pipeline.offline import NAME as OFFLINE_BACKEND

IPTC = "http://cv.iptc.org/newscodes/digitalsourcetype/"
# An edit of a real image by a trained model (Gemini): IPTC's term for exactly that.
TRAINED_EDIT = IPTC + "compositeWithTrainedAlgorithmicMedia"
# The offline backend's edits are drawn by a fixed algorithm, no trained model: a composite
# with synthetic elements.
ALGORITHMIC_EDIT = IPTC + "compositeSynthetic"
# The Med-Banana scripts recorded no model in their files; the data set's paper names it.
IMPORTED_MODEL = "gemini-2.5-flash-image-preview"
IMPORTED_VERSION = "not recorded in the data set's files (the model the Med-Banana-50K paper names)"


@dataclass(frozen=True)
class EditFacts:
    attempt_id: int
    source_image_id: int
    task_key: str
    modality: str
    disease: str
    direction: str  # add or remove: the lesion the instruction asked for
    round: int
    instruction: str
    model: str
    model_version: str
    backend: str  # gemini, offline, or imported
    original_name: str

    @property
    def source_type(self) -> str:
        return ALGORITHMIC_EDIT if self.backend == OFFLINE_BACKEND else TRAINED_EDIT

    @property
    def summary(self) -> str:
        what = "added" if self.direction == "add" else "removed"
        return (f"SYNTHETIC IMAGE, not a patient record: {self.disease} {what} by "
                f"{self.model} (round {self.round}) in an image of {self.original_name}.")


def edit_facts(session: Session, attempt_id: int) -> EditFacts:
    row = session.execute(
        select(Attempt, Run, Task, SourceImage)
        .join(Run, col(Run.id) == Attempt.run_id).join(Task, col(Task.id) == Run.task_id)
        .join(SourceImage, col(SourceImage.id) == Task.source_image_id)
        .where(col(Attempt.id) == attempt_id)).first()
    if row is None:
        raise ImageNotFound(f"no attempt {attempt_id}")
    attempt, run, task, source = row
    model, version, backend = _model(attempt, run)
    return EditFacts(
        attempt_id=attempt_id, source_image_id=source.id or 0, task_key=task.task_key,
        modality=task.modality, disease=task.disease, direction=task.direction,
        round=attempt.round, instruction=attempt.instruction or "", model=model,
        model_version=version, backend=backend,
        original_name=f"{source.dataset}/{source.category}/{source.filename}")


def _model(attempt: Attempt, run: Run) -> tuple[str, str, str]:
    """(model, version, backend) of the round's edit call, as the round recorded it."""
    calls = json.loads(attempt.calls) if attempt.calls else {}
    edit = calls.get("edit") if isinstance(calls, dict) else None
    if isinstance(edit, dict) and edit.get("model"):
        return (str(edit["model"]), str(edit.get("model_version") or "not reported by the API"),
                str(calls.get("backend") or "unknown"))
    if run.origin == RunOrigin.imported:
        return IMPORTED_MODEL, IMPORTED_VERSION, "imported"
    return "not recorded", "not recorded", "unknown"
