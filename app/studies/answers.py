"""Readers' answers: validated, append-only, idempotent, and closed by a study lock."""

import json
import logging
import secrets
from collections.abc import Callable, Mapping
from enum import StrEnum
from typing import Annotated, Any, TypeVar

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, ValidationError, field_validator
from sqlalchemy import func, or_, select, true, update
from sqlalchemy.exc import IntegrityError
from sqlmodel import Session, col

from app.audit import append, record_row
from app.errors import Conflict, Invalid
from app.images.roi import MAX_TEXT as ROI_TEXT
from app.images.roi import Roi, parse_roi
from app.models import utcnow
from app.studies.models import (
    Adjudication,
    Answer,
    Assignment,
    Draft,
    PairAnswer,
    RealOrEditedAnswer,
    Reveal,
    Study,
    StudyStatus,
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
VERSION_RETRIES = 5


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


class StudyLocked(Conflict):
    """The study is locked: nothing about its answers may change."""


class DraftTooLarge(Invalid):
    pass


class StaleDraft(Conflict):
    """A newer draft of this read is stored already: an older save arrived late."""


class SubmissionIdReused(Conflict):
    """A submission id already stored for another case: storing nothing is the only safe
    answer, since returning that other answer would drop this one without a word."""


def ensure_open(study: Study) -> None:
    if study.status == StudyStatus.locked:
        raise StudyLocked(f"study {study.name!r} is locked; answers can no longer change")


def commit_if_open(session: Session, study: Study, *,
                   record: Callable[[], object] = lambda: None) -> None:
    """Commit the pending writes unless the study was locked meanwhile.

    The status is read again after the writes are flushed: SQLite then holds the write lock,
    and PostgreSQL's FOR SHARE waits for a lock being committed, so an answer either commits
    before the lock or not at all. ``record`` appends to the audit log after that check:
    the study's row first and the log's lock second, in the order a lock takes them too.
    """
    session.flush()
    status = session.scalar(select(Study.status).where(  # type: ignore[call-overload]
        col(Study.id) == study.id).with_for_update(read=True))
    if status == StudyStatus.locked:
        session.rollback()
        raise StudyLocked(f"study {study.name!r} is locked; answers can no longer change")
    record()
    session.commit()


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


Versioned = TypeVar("Versioned", Answer, Adjudication, RealOrEditedAnswer, PairAnswer)
Answered = TypeVar("Answered", Answer, RealOrEditedAnswer, PairAnswer)


def append_version(session: Session, study: Study, table: type[Versioned], owner: str,
                   owner_id: int, submission_id: str, make: Callable[[int], Versioned], *,
                   then: Callable[[], None] = lambda: None) -> Versioned:
    """Store a new version of the row that ``owner`` = ``owner_id`` keeps (an assignment's
    answer, an item's decision), numbered after its newest, with ``then``'s writes, unless
    the study was locked meanwhile. The same submission id twice stores it once; two
    submits racing for one version number: the loser retries with the next."""
    ensure_open(study)
    for _ in range(VERSION_RETRIES):
        existing = session.scalars(select(table).where(
            col(table.submission_id) == submission_id)).first()
        if existing is not None:
            if getattr(existing, owner) != owner_id:
                raise SubmissionIdReused(f"submission id {submission_id!r} was already "
                                         "used for another case; send a new one")
            return existing
        newest = session.scalar(select(func.coalesce(func.max(col(table.version)), 0))
                                .where(col(getattr(table, owner)) == owner_id))
        row = make(int(newest or 0) + 1)
        session.add(row)
        try:
            session.flush()
            then()
            commit_if_open(session, study, record=_recorder(session, study, row))
        except IntegrityError:
            session.rollback()
            continue
        session.refresh(row)
        return row
    raise RuntimeError(f"could not store the {table.__name__.lower()} after repeated version "
                       "conflicts")


def _recorder(session: Session, study: Study, row: Versioned) -> Callable[[], object]:
    return lambda: record_row(session, row, actor=_actor(session, row), subject=f"study {study.id}")


def _actor(session: Session, row: Answer | Adjudication | RealOrEditedAnswer | PairAnswer) -> str:
    """Who stored the row: the decision's adjudicator, or the reader of the assignment."""
    if isinstance(row, Adjudication):
        return f"user {row.user_id}"
    assignment = session.get(Assignment, row.assignment_id)
    return f"user {assignment.user_id}" if assignment is not None else "unknown"


def _revealed(study: Study, version: int) -> bool:
    """Whether a version comes after the reader saw the judge: in a study that reveals the
    verdict on submit, every version after the first."""
    return study.reveal == Reveal.after_submit and version > 1


def last_to_undo(session: Session, study: Study, user_id: int,
                 table: type[Answered]) -> tuple[Answered, Assignment] | None:
    """The reader's most recent answer in the study (in ``table``, the design's) and its read;
    None when there is none, or it is a retraction already. Every design's undo starts here."""
    ensure_open(study)
    query = (select(table, Assignment).join(Assignment, col(Assignment.id) == table.assignment_id)
             .where(col(Assignment.study_id) == study.id, col(Assignment.user_id) == user_id)
             .order_by(col(table.id).desc()).limit(1))
    found = session.execute(query).first()
    if found is None or found[0].retracted:
        return None
    return found[0], found[1]


def retraction(last: Answered, kept: tuple[str, ...], **extra: Any) -> Answered:
    """The version that retracts ``last``: the fields named in ``kept`` carried over (what it
    said stays on record), with an undo's own submission id. Every design's undo adds one."""
    fields: dict[str, Any] = {name: getattr(last, name) for name in kept} | extra
    return type(last)(assignment_id=last.assignment_id, version=last.version + 1,
                      submission_id=f"undo-{secrets.token_hex(12)}", retracted=True, **fields)


def retract_last(session: Session, study: Study, user_id: int, table: type[Answered],
                 kept: tuple[str, ...]) -> Assignment | None:
    """A design's undo when nothing comes back as a draft: the reader's last answer in
    ``table`` retracted, and its read; None when there is nothing to undo."""
    found = last_to_undo(session, study, user_id, table)
    if found is None:
        return None
    last, assignment = found
    row = retraction(last, kept)
    session.add(row)
    session.flush()
    commit_if_open(session, study, record=_recorder(session, study, row))
    return assignment


def undo_last(session: Session, study: Study, user_id: int) -> Assignment | None:
    """Retract the reader's most recent answer in the study (a new version, nothing erased)."""
    found = last_to_undo(session, study, user_id, Answer)
    if found is None:
        return None
    last, assignment = found
    kept = (*DIMENSIONS, "overall", "confidence", "tags", "comment", "roi")
    row = retraction(last, kept, after_reveal=_revealed(study, last.version + 1))
    session.add(row)
    values = {name: getattr(last, name) for name in kept}
    # The retracted answer comes back as the draft, so the reader can correct it.
    save_draft(session, study, assignment, DraftIn.model_validate(
        {**values, "tags": json.loads(last.tags), "roi": last.roi or ""}), commit=False)
    session.flush()
    commit_if_open(session, study, record=_recorder(session, study, row))
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


def lock_study(session: Session, study: Study, *, actor: str = "shell") -> None:
    """Lock the study, recorded in the audit log with how many answers it holds."""
    study.status, study.locked_at = StudyStatus.locked.value, utcnow()
    session.add(study)
    session.flush()  # the study's row first, then the log's lock: as an answer takes them
    append(session, "study locked", actor=actor, subject=f"study {study.id}",
           body={"study": study.name, "answers": _answer_count(session, study)})
    session.commit()


def _answer_count(session: Session, study: Study) -> int:
    tables = (Answer, RealOrEditedAnswer, PairAnswer)
    return sum(int(session.scalar(
        select(func.count()).select_from(table).join(Assignment, col(Assignment.id) == table.assignment_id)
        .where(col(Assignment.study_id) == study.id)) or 0) for table in tables)
