"""Readers' answers: validated, append-only, idempotent, and closed by a study lock."""

import json
import logging
from collections.abc import Mapping
from enum import StrEnum
from typing import Annotated

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, ValidationError, field_validator
from sqlalchemy import func, or_, select, true, update
from sqlalchemy.exc import IntegrityError
from sqlmodel import Session, col

from app.errors import Conflict, Invalid
from app.images.roi import MAX_TEXT as ROI_TEXT
from app.images.roi import Roi, parse_roi
from app.models import utcnow
from app.studies.models import (
    Answer,
    Assignment,
    Draft,
    Reveal,
    Study,
)
from app.studies.versions import (
    append_version,
    commit_if_open,
    ensure_open,
    last_to_undo,
    retraction,
    store_version,
)
from app.studies.viewer_tools import tool_use_json, tools_of
from pipeline.vocabulary import DIMENSIONS, QUESTIONS

logger = logging.getLogger(__name__)
# The paper's failure reasons, as the tags a reader may add.
FAILURE_TAGS = ("too_subtle", "wrong_location", "overcorrection", "anatomical_distortion",
                "non_target_finding", "blending_artifact", "colour_shift", "repetitive_pattern",
                "unnatural_edge", "lost_grain", "excessive_change", "text_or_label")
MAX_DRAFT_BYTES = 16_000
MAX_TOOL_USE_CHARS = 2_000
# Two submits racing for the same version number: the loser retries with the next one.


class DimensionAnswer(StrEnum):
    yes = "yes"
    no = "no"
    cannot_assess = "cannot_assess"


class Overall(StrEnum):
    accept = "accept"
    reject = "reject"


def storable(text: str) -> str:
    """Text every database stores and every page can encode: no lone surrogate halves."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        raise ValueError("the text holds characters that are not valid Unicode") from None
    if "\x00" in text:
        raise ValueError("text may not contain NUL characters")
    return text


def known_tags(tags: list[str]) -> list[str]:
    unknown = sorted(set(tags) - set(FAILURE_TAGS))
    if unknown:
        raise ValueError(f"unknown tag(s) {', '.join(unknown)}; known: {', '.join(FAILURE_TAGS)}")
    return sorted(set(tags), key=FAILURE_TAGS.index)


# The fields an answer and its draft share, checked the same way in both.
Tags = Annotated[list[str], Field(max_length=len(FAILURE_TAGS)), AfterValidator(known_tags)]
Comment = Annotated[str, Field(max_length=5000), AfterValidator(storable)]
SUBMISSION_ID = r"^[A-Za-z0-9_-]{8,64}$"


class RubricAnswers(BaseModel):
    """The rubric's questions (pipeline/vocabulary.py's QUESTIONS, in order), as a reader
    answers them and an adjudicator decides them."""

    compliance: DimensionAnswer
    structure: DimensionAnswer
    realism: DimensionAnswer
    fidelity: DimensionAnswer
    overall: Overall


class AnswerIn(RubricAnswers):
    confidence: int = Field(ge=1, le=5)
    tags: Tags = []
    comment: Comment = ""
    time_on_case_ms: int | None = Field(default=None, ge=0, le=86_400_000)
    submission_id: str = Field(pattern=SUBMISSION_ID)
    roi: Roi | None = None  # where the reader says the edit should be, if they drew it
    # The image tools used on the case, as the page recorded them (app/studies/viewer_tools.py).
    tool_use: str | None = Field(default=None, max_length=MAX_TOOL_USE_CHARS)

    @field_validator("roi", mode="before")
    @classmethod
    def roi_from_text(cls, value: object) -> object:
        return parse_roi(value)


class DraftIn(BaseModel):
    """An unsent answer as the reading screen autosaves it: every field optional, but each
    one that is there must be what the answer form would accept, so a draft can never break
    the screen that shows it again."""

    model_config = ConfigDict(extra="forbid")
    compliance: DimensionAnswer | None = None
    structure: DimensionAnswer | None = None
    realism: DimensionAnswer | None = None
    fidelity: DimensionAnswer | None = None
    overall: Overall | None = None
    confidence: int | None = Field(default=None, ge=1, le=5)
    tags: Tags = []
    comment: Comment = ""
    submission_id: str | None = Field(default=None, pattern=SUBMISSION_ID)
    tool_use: str | None = Field(default=None, max_length=MAX_TOOL_USE_CHARS)
    elapsed_ms: int = Field(default=0, ge=0, le=86_400_000)
    roi: str = Field(default="", max_length=ROI_TEXT)  # the region as the form's JSON text
    # Which of the screen's saves this is (app/studies/models.py, Draft.edition); not kept in
    # the draft's fields.
    edition: int | None = Field(default=None, ge=0, le=2**53)

    @field_validator("roi")
    @classmethod
    def a_region_or_nothing(cls, roi: str) -> str:
        if roi:
            Roi.model_validate(parse_roi(roi))
        return roi


class DraftTooLarge(Invalid):
    pass


class StaleDraft(Conflict):
    """A newer draft of this read is stored already: an older save arrived late."""


def latest_answer(session: Session, assignment_id: int) -> Answer | None:
    """The answer in force: the newest version, unless that version retracted it."""
    query = (select(Answer).where(col(Answer.assignment_id) == assignment_id)
             .order_by(col(Answer.version).desc()).limit(1))
    newest = session.scalars(query).first()
    return None if newest is None or newest.retracted else newest


def unchanged(in_force: Answer | None, answer: AnswerIn) -> bool:
    """Whether ``answer`` says what the answer in force says (time and tool use aside): a
    reader who went back to look and pressed Enter changed nothing, and no version is made."""
    if in_force is None:
        return False
    said = answer.model_dump(include={*QUESTIONS, "confidence", "comment"})
    return (all(getattr(in_force, k) == v for k, v in said.items())
            and json.loads(in_force.tags) == list(answer.tags)
            and (in_force.roi or None) == (answer.roi.to_json() if answer.roi else None))


def submit_answer(session: Session, study: Study, assignment: Assignment, answer: AnswerIn) -> Answer:
    """Store a new version; the same submission_id twice stores it once, and an answer that
    changes nothing is not stored again."""
    assignment_id = assignment.id
    assert assignment_id is not None
    tool_use = tool_use_json(answer.tool_use, tools_of(study))
    in_force = latest_answer(session, assignment_id)
    if unchanged(in_force, answer):
        assert in_force is not None
        ensure_open(study)
        session.execute(Draft.__table__.delete().where(  # type: ignore[attr-defined]
            Draft.__table__.c.assignment_id == assignment_id))  # type: ignore[attr-defined]
        session.commit()
        return in_force

    def make(version: int) -> Answer:
        return Answer(assignment_id=assignment_id, version=version,
                      **answer.model_dump(exclude={"tags", "roi", "tool_use"}), tags=json.dumps(answer.tags),
                      roi=answer.roi.to_json() if answer.roi else None, tool_use=tool_use,
                      after_reveal=_revealed(study, version))

    def drop_draft() -> None:
        session.execute(Draft.__table__.delete().where(  # type: ignore[attr-defined]
            Draft.__table__.c.assignment_id == assignment_id))  # type: ignore[attr-defined]

    return append_version(session, study, Answer, "assignment_id", assignment_id,
                          answer.submission_id, make, then=drop_draft)


def _revealed(study: Study, version: int) -> bool:
    """Whether a version comes after the reader saw the judge: in a study that reveals the
    verdict on submit, every version after the first."""
    return study.reveal == Reveal.after_submit and version > 1


def undo_last(session: Session, study: Study, user_id: int) -> Assignment | None:
    """Retract the reader's most recent answer in the study (a new version, nothing erased)."""
    found = last_to_undo(session, study, user_id, Answer)
    if found is None:
        return None
    last, assignment = found
    kept = (*DIMENSIONS, "overall", "confidence", "tags", "comment", "roi")
    values = {name: getattr(last, name) for name in kept}
    # The retracted answer comes back as the draft, so the reader can correct it.
    save_draft(session, study, assignment, DraftIn.model_validate(
        {**values, "tags": json.loads(last.tags), "roi": last.roi or ""}), commit=False)
    store_version(session, study, retraction(last, kept,
                                             after_reveal=_revealed(study, last.version + 1)))
    return assignment


def save_draft(session: Session, study: Study, assignment: Assignment, draft: DraftIn,
               *, commit: bool = True) -> None:
    """Keep the read's draft. A save of the reading screen carries its edition, and one older
    than the stored draft's is refused (StaleDraft): two saves can arrive out of order, and a
    page's last save on leaving races the next page's. The check is the update's own
    condition, so two saves at once cannot both pass it."""
    ensure_open(study)
    tool_use_json(draft.tool_use, tools_of(study))  # checked now, so the submit cannot trip on it
    text = draft.model_dump_json(exclude_defaults=True, exclude={"edition"})
    if len(text) > MAX_DRAFT_BYTES:
        raise DraftTooLarge(f"a draft may hold at most {MAX_DRAFT_BYTES} bytes")
    assert assignment.id is not None
    edition = col(Draft.edition)
    this_one = col(Draft.assignment_id) == assignment.id
    not_older = true() if draft.edition is None else or_(edition.is_(None), edition <= draft.edition)
    for attempt in range(2):
        updated = session.execute(
            update(Draft).where(this_one, not_older)
            .values(payload=text, updated_at=utcnow(), edition=draft.edition)
            .execution_options(synchronize_session=False))
        if not updated.rowcount:  # type: ignore[attr-defined]
            if session.scalar(select(func.count()).select_from(Draft).where(this_one)):
                raise StaleDraft("a newer draft of this read is stored already")
            session.add(Draft(assignment_id=assignment.id, payload=text, edition=draft.edition))
        if not commit:
            return
        try:
            commit_if_open(session, study)
            return
        except IntegrityError:
            # Two autosaves raced to create the draft; the second becomes an update.
            session.rollback()
            if attempt:
                raise


def keep_as_draft(session: Session, study: Study, assignment: Assignment,
                  fields: Mapping[str, object]) -> None:
    """What a submit that could not be stored carried, kept as the read's draft: each field
    a draft would accept, the rest left out."""
    kept: dict[str, object] = {}
    for name in DraftIn.model_fields:
        if name in fields:
            try:
                DraftIn.model_validate({name: fields[name]})
            except ValidationError:
                continue
            kept[name] = fields[name]
    save_draft(session, study, assignment, DraftIn.model_validate(kept))


def load_draft(session: Session, assignment_id: int) -> dict[str, object] | None:
    """The saved draft, or None; one stored before drafts were validated and that the form
    would not accept is set aside (logged), so the reading screen still opens."""
    draft = session.get(Draft, assignment_id)
    if draft is None:
        return None
    try:
        return DraftIn.model_validate_json(draft.payload).model_dump(mode="json",
                                                                    exclude_defaults=True)
    except ValidationError:
        logger.warning("assignment %s: an unreadable draft was set aside", assignment_id)
        return None
