"""A reader's answer on a pair, as the screen gives it: the side they preferred (A is the
left edit, B the right), both equal, or both unacceptable; a confidence; reasons. It is
stored as which edit of the pair they preferred, with the side each was shown on."""

import json
import random
import secrets
from dataclasses import dataclass, replace
from typing import Literal

from pydantic import BaseModel, Field
from sqlmodel import Session, col, select

from app.images.files import ImageFile, ImageKind, ImageNotFound, resolve_image
from app.models import Task
from app.studies.answers import SUBMISSION_ID, Comment, Tags
from app.studies.images import BLINDED_MISSING, item_image
from app.studies.models import Assignment, PairAnswer, Study, StudyItem, StudyPair
from app.studies.versions import append_version, retract_last
from app.studies.viewer_tools import tools_of
from app.studies.worklist import Progress, reader_progress

# The image tools of a pair: window/level, and flicker between the two edits in place. Swipe
# and the difference map compare an edit with its original, which is not the question here.
PAIR_TOOLS = ("window", "flicker")


class PairAnswerIn(BaseModel):
    # a: the left edit is better; b: the right one; equal: both acceptable and equal;
    # neither: both unacceptable (not a tie: it says nothing of which is better).
    call: Literal["a", "b", "equal", "neither"]
    confidence: int = Field(ge=1, le=5)
    # Checked as the rubric's are: known reasons, text every database can store.
    tags: Tags = Field(default_factory=list)
    comment: Comment = ""
    time_on_case_ms: int | None = Field(default=None, ge=0, le=86_400_000)
    submission_id: str = Field(pattern=SUBMISSION_ID)


def first_left(study: Study, assignment: Assignment) -> bool:
    """Whether this read shows the pair's first edit on the left: drawn for each read from
    the study's secret, so a reload shows the same sides and nobody can predict them."""
    return random.Random(f"{study.order_secret}:side:{assignment.uid}").random() < 0.5


def choice_of(call: str, left_is_first: bool) -> str:
    """The pressed key as what it says of the pair's edits (strengths.py)."""
    if call == "a":
        return "first" if left_is_first else "second"
    if call == "b":
        return "second" if left_is_first else "first"
    return call


def call_of(choice: str, left_is_first: bool) -> str:
    """What was stored, as the key that says it on a read with these sides (choice_of undone)."""
    if choice == "first":
        return "a" if left_is_first else "b"
    if choice == "second":
        return "b" if left_is_first else "a"
    return choice


def submit(session: Session, study: Study, assignment: Assignment,
           answer: PairAnswerIn) -> PairAnswer:
    assignment_id = assignment.id
    assert assignment_id is not None
    left = first_left(study, assignment)

    def make(version: int) -> PairAnswer:
        return PairAnswer(assignment_id=assignment_id, version=version,
                          submission_id=answer.submission_id,
                          choice=choice_of(answer.call, left), first_left=left,
                          confidence=answer.confidence, tags=json.dumps(answer.tags),
                          comment=answer.comment.strip(), time_on_case_ms=answer.time_on_case_ms)

    return append_version(session, study, PairAnswer, "assignment_id", assignment_id,
                          answer.submission_id, make)


def undo_last(session: Session, study: Study, user_id: int) -> Assignment | None:
    """Retract the reader's most recent answer in the study: a new version, nothing erased."""
    return retract_last(session, study, user_id, PairAnswer,
                        ("choice", "first_left", "confidence", "tags", "comment"))


def pair_image(session: Session, study: Study, assignment: Assignment, item: StudyItem,
               which: str) -> ImageFile:
    """The original, or the edit shown on this read's left or right."""
    if which == "original":
        return item_image(session, item, "original")
    pair = session.get(StudyPair, item.id)
    if pair is None:
        raise ImageNotFound(BLINDED_MISSING)
    first = (which == "left") == first_left(study, assignment)
    try:
        image = resolve_image(session, ImageKind.attempt,
                              pair.first_attempt_id if first else item.attempt_id)
    except ImageNotFound:
        raise ImageNotFound(BLINDED_MISSING) from None
    return replace(image, hide=BLINDED_MISSING)


@dataclass
class PairView:
    """What the reader sees of one pair: the original and two edits by the read's opaque uid,
    the instruction both followed, the modality. Nothing that says which edit came later,
    which run it is from, or which one the judge accepted."""

    study: Study
    assignment: Assignment
    uid: str
    modality: str
    instruction: str | None
    answer: PairAnswer | None  # the answer in force
    shown: PairAnswer | None  # the newest version, undone or not
    history: list[PairAnswer]
    left_first: bool
    next_uid: str | None
    next_sequence: int | None
    previous_sequence: int | None
    tools: tuple[str, ...]
    progress: Progress

    def said(self, version: PairAnswer) -> str:
        """A version's answer in the screen's terms (sides, not edits)."""
        return {"a": "A", "b": "B", "equal": "equal", "neither": "both unacceptable"}[
            call_of(version.choice, version.first_left)]

    def state(self) -> dict[str, object]:
        """The form as the newest version left it."""
        if self.shown is None or self.shown.retracted:
            return {}
        return {"call": call_of(self.shown.choice, self.shown.first_left),
                "confidence": self.shown.confidence,
                "tags": json.loads(self.shown.tags), "comment": self.shown.comment}

    @staticmethod
    def submission_id() -> str:
        return secrets.token_urlsafe(18)


def pair_view(session: Session, study: Study, assignment: Assignment) -> PairView:
    item = session.get(StudyItem, assignment.item_id)
    assert item is not None and assignment.id is not None
    task = session.get(Task, item.task_id)
    assert task is not None
    history = list(session.scalars(select(PairAnswer).where(
        col(PairAnswer.assignment_id) == assignment.id).order_by(col(PairAnswer.version))))
    newest = history[-1] if history else None
    following = session.scalars(select(Assignment).where(
        col(Assignment.study_id) == study.id, col(Assignment.user_id) == assignment.user_id,
        col(Assignment.sequence) == assignment.sequence + 1)).first()
    return PairView(
        study=study, assignment=assignment, uid=assignment.uid, modality=task.modality,
        instruction=item.reader_instruction,
        answer=None if newest is None or newest.retracted else newest, shown=newest,
        history=history, left_first=first_left(study, assignment),
        next_uid=following.uid if following else None,
        next_sequence=following.sequence if following else None,
        previous_sequence=assignment.sequence - 1 if assignment.sequence > 1 else None,
        tools=tuple(t for t in PAIR_TOOLS if t in tools_of(study)),
        progress=reader_progress(session, study, assignment.user_id))
