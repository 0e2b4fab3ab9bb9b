"""Tables that check the readers: the settled answers of known-answer cases, and the pauses a
reader's drift test has called.

Kept beside the study tables (a study item names the settled answer it was drawn for); what is
done with them is in app/readers.
"""

import json
from datetime import datetime
from enum import StrEnum

from sqlalchemy import Column, Float, Integer, String, Text
from sqlmodel import Field, SQLModel

from app.models import utcnow


class Settled(StrEnum):
    """How a known answer was settled."""

    unanimous = "unanimous"  # every reader of a locked study gave it
    adjudicated = "adjudicated"  # the adjudicator decided the readers' tie
    marked = "marked"  # an admin marked the edit as unmistakable


class KnownAnswer(SQLModel, table=True):
    """The settled answer of one edit, per question it settles ("yes" / "no", "accept" /
    "reject"): what a known-answer case's reads are scored against. Never updated: an admin who
    takes a case back retires it, and its earlier studies keep the answer they were drawn with."""

    __tablename__ = "known_answer"
    id: int | None = Field(default=None, primary_key=True)
    attempt_id: int = Field(foreign_key="attempt.id", index=True)
    answers: str = Field(sa_column=Column(Text, nullable=False))  # JSON: question -> answer
    source: str = Field(sa_column=Column(String(16), nullable=False))  # Settled
    study_id: int | None = Field(default=None, foreign_key="study.id", index=True)
    marked_by: int | None = Field(default=None, foreign_key="app_user.id")
    note: str = Field(default="", sa_column=Column(Text, nullable=False, server_default=""))
    created_at: datetime = Field(default_factory=utcnow)
    retired_at: datetime | None = None

    def settled(self) -> dict[str, str]:
        return dict(json.loads(self.answers))


class PauseCause(StrEnum):
    accuracy = "accuracy"  # a drop in known-answer accuracy
    agreement = "agreement"  # a drop in agreement with the other readers' majority
    time = "time"  # a drop in time per case


class ReaderPause(SQLModel, table=True):
    """A reader stopped from reading one study until an admin resumes them. Nothing they typed
    is lost: drafts and answers stay, and they go on where they stopped."""

    __tablename__ = "reader_pause"
    id: int | None = Field(default=None, primary_key=True)
    study_id: int = Field(foreign_key="study.id", index=True)
    user_id: int = Field(foreign_key="app_user.id", index=True)
    cause: str = Field(sa_column=Column(String(16), nullable=False))  # PauseCause
    # What the admin is shown: the test, its statistic and threshold, and the cases behind it.
    reason: str = Field(sa_column=Column(Text, nullable=False))
    statistic: float = Field(sa_column=Column(Float, nullable=False))
    threshold: float = Field(sa_column=Column(Float, nullable=False))
    # The reader's known-answer cases (or cases, for time) when it fired.
    cases: int = Field(sa_column=Column(Integer, nullable=False))
    # The reader's reads done after which the pause holds: a random few past the read that
    # fired it, so the paused screen does not point at a known-answer case (None: at once).
    effective_after: int | None = Field(default=None, sa_column=Column(Integer, nullable=True))
    paused_at: datetime = Field(default_factory=utcnow)
    resumed_at: datetime | None = None
    resumed_by: int | None = Field(default=None, foreign_key="app_user.id")
    resume_note: str = Field(default="", sa_column=Column(Text, nullable=False, server_default=""))


class Qualification(SQLModel, table=True):
    """A reader reaching a study's required agreement in a practice study: when, and on what
    (the practice study, its cases and answers, the interval and the bar they cleared)."""

    __tablename__ = "qualification"
    id: int | None = Field(default=None, primary_key=True)
    user_id: int = Field(foreign_key="app_user.id", index=True)
    practice_id: int = Field(foreign_key="study.id", index=True)
    cases: int
    right: int
    asked: int
    low: float = Field(sa_column=Column(Float, nullable=False))
    high: float = Field(sa_column=Column(Float, nullable=False))
    # The bar: the least agreement, over at least min_cases cases, on the estimate or on the
    # interval's lower bound.
    threshold: float = Field(sa_column=Column(Float, nullable=False))
    min_cases: int
    on: str = Field(sa_column=Column(String(16), nullable=False))
    qualified_at: datetime = Field(default_factory=utcnow)
