"""Reader-study tables: studies, what is read, who reads it in which order, and the answers.

Answers are append-only: an edit is a new version row, never an update.
"""

import secrets
from datetime import datetime
from enum import StrEnum

from sqlalchemy import (
    BigInteger,
    Boolean,
    Column,
    Float,
    Integer,
    String,
    Text,
    UniqueConstraint,
    false,
    true,
)
from sqlalchemy.sql.elements import ColumnElement
from sqlmodel import Field, SQLModel, col

from app.models import utcnow
from app.studies.design_traits import Design  # a study's design, by the name its rows keep
from app.studies.reader_models import KnownAnswer  # noqa: F401  (an item names its known answer)


class StudyStatus(StrEnum):
    open = "open"
    locked = "locked"


class Shows(StrEnum):
    """Which image of its item a study shows: the edit (every design), or in a real-or-edited
    study the task's original, in the edit's place."""

    edit = "edit"
    original = "original"


class Reveal(StrEnum):
    """What a reader sees of the judge after submitting a case."""

    never = "never"
    after_submit = "after_submit"


class Study(SQLModel, table=True):
    __tablename__ = "study"
    id: int | None = Field(default=None, primary_key=True)
    name: str = Field(sa_column=Column(String(200), nullable=False, unique=True))
    status: str = Field(default=StudyStatus.open.value, sa_column=Column(String(16), nullable=False))
    blinded: bool = True
    reveal: str = Field(default=Reveal.never.value, sa_column=Column(String(16), nullable=False))
    design: str = Field(sa_column=Column(String(16), nullable=False))
    # The one pre-specified primary endpoint; every other question is secondary (Holm).
    primary_question: str = Field(default="overall", sa_column=Column(String(16), nullable=False))
    # The sample-size plan the study was made with (app/studies/planner.py), as JSON.
    plan: str | None = Field(default=None, sa_column=Column(Text, nullable=True))
    # None: every reader reads every case (fully crossed); k: that many readers per case.
    readers_per_case: int | None = None
    # The judge is "within" the readers' agreement with each other only when the whole
    # interval of the difference lies inside +- this margin (app/agreement/ceiling.py).
    margin: float = Field(default=0.05, sa_column=Column(Float, nullable=False, server_default="0.05"))
    # The half-width wanted per endpoint, as JSON ({"agreement": 0.05, ...}): the study may
    # stop once its anytime-valid interval is that narrow (app/agreement/monitoring.py).
    targets: str | None = Field(default=None, sa_column=Column(Text, nullable=True))
    repeat_fraction: float = 0.0
    seed: int = 0
    # Every image a reader will be shown is drawn before any reader may open the study
    # (app/studies/previews.py): a first view slower than a cached one would tell a reader
    # that nobody had opened that image before. Studies made before this are ready.
    images_ready: bool = Field(default=True, sa_column=Column(
        Boolean, nullable=False, server_default=true()))
    images_drawn: int = Field(default=0, sa_column=Column(Integer, nullable=False, server_default="0"))
    # Draws which reader reads which case and each reader's order. Unlike the seed (a design
    # choice, shown with the study), no reader can learn it, so no reader can rebuild the
    # order in which the accepted edit of a task comes up.
    order_secret: str = Field(default="", sa_column=Column(String(64), nullable=False))
    # Off: readers judge the edits without the instruction (compliance becomes the
    # question whether the intended finding is there, as the task says).
    show_instructions: bool = True
    # What readers are told about this study, written by the admin; frozen once the first
    # answer is in, so every reader read under the same words (app/studies/design.py).
    instructions: str | None = Field(default=None, sa_column=Column(Text, nullable=True))
    # The image tools readers get, as JSON (app/studies/viewer_tools.py): flicker, swipe and
    # the difference map point straight at an edit, so a blinded study may leave them out.
    viewer_tools: str = Field(default='["window", "flicker", "swipe", "difference"]',
                              sa_column=Column(String(200), nullable=False))
    # How the cases were chosen (filter, strata and counts), as JSON, so the sample can be redrawn.
    selection: str = Field(sa_column=Column(Text, nullable=False))
    created_by: int = Field(foreign_key="app_user.id")
    created_at: datetime = Field(default_factory=utcnow)
    locked_at: datetime | None = None
    # A practice study (app/studies/practice.py): every case a known-answer case, the settled
    # answer, the other readers' answers and the judge's reasons shown after each answer.
    practice: bool = Field(default=False, sa_column=Column(Boolean, nullable=False,
                                                           server_default=false()))
    # What a reader must reach in a practice study before reading this one, as JSON
    # (app/studies/practice.py Requirement); None: no qualification asked.
    qualification: str | None = Field(default=None, sa_column=Column(Text, nullable=True))


class StudyBatch(SQLModel, table=True):
    """One batch of an adaptive study's draws, with the state its probabilities came from
    (app/designs/adaptive/prior.py State), so that it can be replayed exactly."""

    __tablename__ = "study_batch"
    __table_args__ = (UniqueConstraint("study_id", "batch"),)
    id: int | None = Field(default=None, primary_key=True)
    study_id: int = Field(foreign_key="study.id", index=True)
    batch: int
    state: str = Field(sa_column=Column(Text, nullable=False))
    # The largest weighted size of any pool image under this batch's probabilities: every
    # draw's observation is scaled by it (app/confidence_sequence.py needs a known bound).
    bound: float
    # Its items' images are drawn and its reads are in the readers' lists.
    ready: bool = False
    drawn_at: datetime = Field(default_factory=utcnow)


class StudyDraw(SQLModel, table=True):
    """One draw of an adaptive study: which judged edit (or, in a study made before edits
    were the unit, which source image), at what probability."""

    __tablename__ = "study_draw"
    __table_args__ = (UniqueConstraint("study_id", "batch", "position"),)
    id: int | None = Field(default=None, primary_key=True)
    study_id: int = Field(foreign_key="study.id", index=True)
    batch: int
    position: int
    source_image_id: int = Field(foreign_key="source_image.id")  # the drawn edit's image
    # The drawn edit; None when the unit was the source image, with all its edits.
    attempt_id: int | None = Field(default=None, foreign_key="attempt.id")
    probability: float  # q: the unit's chance on each draw of the batch
    pool_images: int  # N: the pool's units (edits, or images), so the weight is (1 / N) / q


class StudyItem(SQLModel, table=True):
    """One image to judge: an attempt (the accepted edit, or a failed round if chosen)."""

    __tablename__ = "study_item"
    __table_args__ = (UniqueConstraint("study_id", "attempt_id"),)
    id: int | None = Field(default=None, primary_key=True)
    study_id: int = Field(foreign_key="study.id", index=True)
    task_id: int = Field(foreign_key="task.id")
    attempt_id: int = Field(foreign_key="attempt.id")
    stratum: str = Field(default="", sa_column=Column(String(200), nullable=False))
    # The judge verdict this item is compared with, frozen when the study is made: a later
    # re-judgement never changes the study's figures (it is reported apart, as another judge).
    judge_verdict_id: int | None = Field(default=None, foreign_key="judge_verdict.id")
    # Opaque to readers: URLs carry this, never an attempt id or a file name.
    uid: str = Field(sa_column=Column(String(32), nullable=False, unique=True))
    # What readers see as the instruction, frozen at creation (app/studies/reader_instruction.py):
    # the same for every round of a task, so it tells no round or verdict apart.
    reader_instruction: str | None = Field(default=None, sa_column=Column(Text, nullable=True))
    # The truth of a real-or-edited case: the item's accepted edit or the task's original.
    shows: str = Field(default=Shows.edit.value, sa_column=Column(String(8), nullable=False,
                                                                   server_default=Shows.edit.value))
    # A known-answer case (app/studies/known_answers.py): read like every other case, scored
    # against this settled answer, and kept out of every figure about the judge or the data.
    known_answer_id: int | None = Field(default=None, foreign_key="known_answer.id", index=True)


def in_figures() -> ColumnElement[bool]:
    """The items a study's figures read: every item but its known-answer cases, which check
    the readers and never enter a figure about the judge or the data set."""
    return col(StudyItem.known_answer_id).is_(None)


class StudyReader(SQLModel, table=True):
    __tablename__ = "study_reader"
    __table_args__ = (UniqueConstraint("study_id", "user_id"),)
    id: int | None = Field(default=None, primary_key=True)
    study_id: int = Field(foreign_key="study.id", index=True)
    user_id: int = Field(foreign_key="app_user.id", index=True)
    order_seed: int
    # A digest of the study instructions this reader was last shown in full
    # (app/studies/instructions_seen.py): shown again whenever they differ from it.
    instructions_seen: str | None = Field(default=None, sa_column=Column(String(64), nullable=True))


class Assignment(SQLModel, table=True):
    """One read in one reader's worklist, at its place in that reader's own order."""

    __tablename__ = "assignment"
    __table_args__ = (UniqueConstraint("study_id", "user_id", "sequence"),)
    id: int | None = Field(default=None, primary_key=True)
    study_id: int = Field(foreign_key="study.id", index=True)
    user_id: int = Field(foreign_key="app_user.id", index=True)
    item_id: int = Field(foreign_key="study_item.id", index=True)
    sequence: int
    # A hidden second read of the same item, for intra-reader agreement.
    repeat_of: int | None = Field(default=None, foreign_key="assignment.id")
    # What the reader's URLs carry: every read its own, repeats included, so a repeat is
    # never recognisable by its address.
    uid: str = Field(default_factory=lambda: secrets.token_hex(12),
                     sa_column=Column(String(32), nullable=False, index=True, unique=True))


class Answer(SQLModel, table=True):
    """A version of a reader's answer. Never updated: the newest version is the answer."""

    __tablename__ = "answer"
    __table_args__ = (UniqueConstraint("assignment_id", "version"),)
    id: int | None = Field(default=None, primary_key=True)
    assignment_id: int = Field(foreign_key="assignment.id", index=True)
    version: int
    # Sent by the page with each submit, so a double click or a retry stores one version.
    submission_id: str = Field(sa_column=Column(String(64), nullable=False, unique=True))
    compliance: str = Field(sa_column=Column(String(16), nullable=False))
    structure: str = Field(sa_column=Column(String(16), nullable=False))
    realism: str = Field(sa_column=Column(String(16), nullable=False))
    fidelity: str = Field(sa_column=Column(String(16), nullable=False))
    overall: str = Field(sa_column=Column(String(16), nullable=False))
    confidence: int
    tags: str = Field(default="[]", sa_column=Column(Text, nullable=False))
    comment: str = Field(default="", sa_column=Column(Text, nullable=False))
    time_on_case_ms: int | None = None
    # The reader's region of interest as JSON (app/images/roi.py), or None when none was drawn.
    roi: str | None = Field(default=None, sa_column=Column(Text, nullable=True))
    # "undo" versions retract the previous answer, and the case is open again.
    retracted: bool = False
    # Given after the study showed this reader the judge's verdict on the case: stored, but
    # the figures use the answer given before the reveal.
    after_reveal: bool = False
    # Which image tools the reader used on this case and for how long, as JSON
    # ({"flicker": {"uses": 3, "ms": 2100}, ...}); None when the page sent nothing.
    tool_use: str | None = Field(default=None, sa_column=Column(Text, nullable=True))
    created_at: datetime = Field(default_factory=utcnow)


class RealOrEditedAnswer(SQLModel, table=True):
    """A version of a reader's answer in a real-or-edited study: append-only like ``Answer``."""

    __tablename__ = "real_or_edited_answer"
    __table_args__ = (UniqueConstraint("assignment_id", "version"),)
    id: int | None = Field(default=None, primary_key=True)
    assignment_id: int = Field(foreign_key="assignment.id", index=True)
    version: int
    submission_id: str = Field(sa_column=Column(String(64), nullable=False, unique=True))
    edited: bool
    confidence: int
    # Where the reader says the change is, in shares of the image's width and height (0-1);
    # only for an "edited" answer, and optional there.
    click_x: float | None = None
    click_y: float | None = None
    time_on_case_ms: int | None = None
    retracted: bool = False
    created_at: datetime = Field(default_factory=utcnow)


class StudyPair(SQLModel, table=True):
    """The other edit of a pairwise study's item (app/designs/pairwise): the item's own
    attempt is the pair's second edit (the later round, a rejected round, the later run's),
    this its first, both of one task. Verdicts of record are frozen for both."""

    __tablename__ = "study_pair"
    item_id: int = Field(foreign_key="study_item.id", primary_key=True)
    kind: str = Field(sa_column=Column(String(16), nullable=False))
    first_attempt_id: int = Field(foreign_key="attempt.id")
    first_verdict_id: int | None = Field(default=None, foreign_key="judge_verdict.id")
    first_run_id: int = Field(foreign_key="run.id")
    second_run_id: int = Field(foreign_key="run.id")
    first_round: int
    second_round: int


class PairAnswer(SQLModel, table=True):
    """A version of a reader's answer in a pairwise study: append-only like ``Answer``."""

    __tablename__ = "pair_answer"
    __table_args__ = (UniqueConstraint("assignment_id", "version"),)
    id: int | None = Field(default=None, primary_key=True)
    assignment_id: int = Field(foreign_key="assignment.id", index=True)
    version: int
    submission_id: str = Field(sa_column=Column(String(64), nullable=False, unique=True))
    # first | second | equal (both acceptable and equal) | neither (both unacceptable)
    choice: str = Field(sa_column=Column(String(8), nullable=False))
    # Which edit was on the left of this read: drawn per read, recorded with what was said.
    first_left: bool = Field(sa_column=Column(Boolean, nullable=False))
    confidence: int
    tags: str = Field(default="[]", sa_column=Column(Text, nullable=False))
    comment: str = Field(default="", sa_column=Column(Text, nullable=False))
    time_on_case_ms: int | None = None
    tool_use: str | None = Field(default=None, sa_column=Column(Text, nullable=True))
    retracted: bool = False
    created_at: datetime = Field(default_factory=utcnow)


def answer_table(study: Study) -> type[Answer] | type[RealOrEditedAnswer] | type[PairAnswer]:
    """Where a study's answers are kept: the rubric's, but for the designs with answers of
    their own."""
    design = Design(study.design)
    if design.pairs:
        return PairAnswer
    return RealOrEditedAnswer if design.single_image else Answer


class Draft(SQLModel, table=True):
    """The unsent state of a reading form, saved as the reader works."""

    __tablename__ = "draft"
    assignment_id: int = Field(foreign_key="assignment.id", primary_key=True)
    payload: str = Field(sa_column=Column(Text, nullable=False))
    updated_at: datetime = Field(default_factory=utcnow)
    # The reading screen's count of its saves (milliseconds since the epoch, rising): a save
    # still in flight from a page the reader has left never overwrites a newer one. None for
    # a draft the server wrote itself (an undone answer, a refused submit).
    edition: int | None = Field(default=None, sa_column=Column(BigInteger, nullable=True))


class StudyAdjudicator(SQLModel, table=True):
    """The third reader who decides the cases the study's readers left unresolved."""

    __tablename__ = "study_adjudicator"
    study_id: int = Field(foreign_key="study.id", primary_key=True)
    user_id: int = Field(foreign_key="app_user.id", index=True)
    assigned_at: datetime = Field(default_factory=utcnow)


class Adjudication(SQLModel, table=True):
    """An adjudicator's decision on one case, made with the earlier reads in view (recorded as
    such). Append-only like answers: a change is a new version."""

    __tablename__ = "adjudication"
    __table_args__ = (UniqueConstraint("item_id", "version"),)
    id: int | None = Field(default=None, primary_key=True)
    study_id: int = Field(foreign_key="study.id", index=True)
    item_id: int = Field(foreign_key="study_item.id", index=True)
    user_id: int = Field(foreign_key="app_user.id")
    version: int
    submission_id: str = Field(sa_column=Column(String(64), nullable=False, unique=True))
    compliance: str = Field(sa_column=Column(String(16), nullable=False))
    structure: str = Field(sa_column=Column(String(16), nullable=False))
    realism: str = Field(sa_column=Column(String(16), nullable=False))
    fidelity: str = Field(sa_column=Column(String(16), nullable=False))
    overall: str = Field(sa_column=Column(String(16), nullable=False))
    comment: str = Field(default="", sa_column=Column(Text, nullable=False))
    saw_earlier_reads: bool = True
    created_at: datetime = Field(default_factory=utcnow)


class RoiMetric(SQLModel, table=True):
    """How well an edit kept to a reader's region (app/studies/roi_metrics.py), per answer version."""

    __tablename__ = "roi_metric"
    answer_id: int = Field(foreign_key="answer.id", primary_key=True)
    # SSIM outside the region: 1 when the edit changed nothing there.
    ssim_outside_roi: float | None = None
    # Of the pixels the edit changed, the share outside the region.
    changed_outside_roi: float | None = None
    side: int = 0
    error: str | None = Field(default=None, sa_column=Column(Text))
    computed_at: datetime = Field(default_factory=utcnow)
