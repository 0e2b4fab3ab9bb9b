"""Readers' answers in a real-or-edited study: real or edited, a confidence, and for an edit
an optional click on where the change is. Append-only and idempotent like the rubric
answers (app/studies/answers.py), through the same version writer."""

import secrets
from dataclasses import dataclass
from typing import Literal

from pydantic import BaseModel, Field, ValidationInfo, field_validator
from sqlalchemy import select
from sqlmodel import Session, col

from app.models import Task
from app.studies.answers import SUBMISSION_ID
from app.studies.models import Assignment, RealOrEditedAnswer, Study, StudyItem
from app.studies.versions import append_version, retract_last
from app.studies.viewer_tools import VIEWER_TOOLS, tools_of


class RealOrEditedIn(BaseModel):
    call: Literal["real", "edited"]
    confidence: int = Field(ge=1, le=5)
    # Shares of the image's width and height; both or neither.
    click_x: float | None = Field(default=None, ge=0, le=1)
    click_y: float | None = Field(default=None, ge=0, le=1, validate_default=True)
    time_on_case_ms: int | None = Field(default=None, ge=0, le=86_400_000)
    submission_id: str = Field(pattern=SUBMISSION_ID)

    @field_validator("click_y")
    @classmethod
    def a_whole_click(cls, y: float | None, info: ValidationInfo) -> float | None:
        # Checked on the field, so the refusal lands beside the click, not nowhere.
        if "click_x" in info.data and (info.data["click_x"] is None) != (y is None):
            raise ValueError("a click has both coordinates or none")
        return y

    @property
    def edited(self) -> bool:
        return self.call == "edited"


def submit(session: Session, study: Study, assignment: Assignment,
           answer: RealOrEditedIn) -> RealOrEditedAnswer:
    """A new version; the same submission id twice stores it once. A click goes with an
    "edited" answer only: on "real" there is no change to point at, so it is not kept."""
    assignment_id = assignment.id
    assert assignment_id is not None
    keep_click = answer.edited and answer.click_x is not None

    def make(version: int) -> RealOrEditedAnswer:
        return RealOrEditedAnswer(
            assignment_id=assignment_id, version=version, submission_id=answer.submission_id,
            edited=answer.edited, confidence=answer.confidence,
            click_x=answer.click_x if keep_click else None,
            click_y=answer.click_y if keep_click else None,
            time_on_case_ms=answer.time_on_case_ms)

    return append_version(session, study, RealOrEditedAnswer, "assignment_id", assignment_id,
                          answer.submission_id, make)


def undo_last(session: Session, study: Study, user_id: int) -> Assignment | None:
    """Retract the reader's most recent answer in the study: a new version, nothing erased."""
    return retract_last(session, study, user_id, RealOrEditedAnswer,
                        ("edited", "confidence", "click_x", "click_y"))


@dataclass
class RealOrEditedView:
    """What the reader sees of one case: one image by the read's opaque uid, and the
    modality. Nothing that tells an original from an edit: no instruction (it names the
    change), no round, no judge."""

    study: Study
    assignment: Assignment
    uid: str
    modality: str
    answer: RealOrEditedAnswer | None  # the answer in force
    shown: RealOrEditedAnswer | None  # what the form starts from: the newest version, undone or not
    history: list[RealOrEditedAnswer]
    next_uid: str | None
    next_sequence: int | None
    previous_sequence: int | None
    tools: tuple[str, ...]  # window/level at most: the study never stores the paired tools

    def form_state(self) -> dict[str, object]:
        if self.shown is None:
            return {}
        return {"call": "edited" if self.shown.edited else "real",
                "confidence": self.shown.confidence,
                "click_x": self.shown.click_x, "click_y": self.shown.click_y}

    @staticmethod
    def submission_id() -> str:
        return secrets.token_urlsafe(18)


def case_view(session: Session, study: Study, assignment: Assignment) -> RealOrEditedView:
    item = session.get(StudyItem, assignment.item_id)
    task = session.get(Task, item.task_id) if item else None
    assert item is not None and task is not None and assignment.id is not None
    following = session.scalars(select(Assignment).where(
        col(Assignment.study_id) == study.id, col(Assignment.user_id) == assignment.user_id,
        col(Assignment.sequence) == assignment.sequence + 1)).first()
    history = list(session.scalars(select(RealOrEditedAnswer).where(
        col(RealOrEditedAnswer.assignment_id) == assignment.id)
        .order_by(col(RealOrEditedAnswer.version))))
    newest = history[-1] if history else None
    return RealOrEditedView(
        study=study, assignment=assignment, uid=assignment.uid, modality=task.modality,
        answer=None if newest is None or newest.retracted else newest, shown=newest,
        history=history, next_uid=following.uid if following else None,
        next_sequence=following.sequence if following else None,
        previous_sequence=assignment.sequence - 1 if assignment.sequence > 1 else None,
        tools=tuple(t for t in VIEWER_TOOLS if t in tools_of(study)))
