"""Candidate judges and their verdicts on a reference study's edits.

A candidate is stored with the full text of its prompt template, so a result always names
exactly what produced it; the judge of record's template stays in prompts/. Its verdicts are
kept apart from the judge_verdict table: scoring a candidate never touches an edit's verdict
of record, nor any study's frozen figures.
"""

import json
from datetime import datetime

from sqlalchemy import Boolean, Column, Float, String, Text, UniqueConstraint
from sqlmodel import Field, SQLModel

from app.models import utcnow


class JudgeCandidate(SQLModel, table=True):
    __tablename__ = "judge_candidate"
    id: int | None = Field(default=None, primary_key=True)
    name: str = Field(sa_column=Column(String(100), nullable=False, unique=True))
    backend: str = Field(sa_column=Column(String(16), nullable=False))  # offline | gemini
    model: str = Field(sa_column=Column(String(100), nullable=False))
    template: str = Field(sa_column=Column(Text, nullable=False))
    # pipeline.judge_spec.JudgeSpec.version of the candidate as it judges in the images'
    # usual order: what every verdict it gives names.
    version: str = Field(sa_column=Column(String(12), nullable=False))
    rubric_version: str = Field(sa_column=Column(String(12), nullable=False))
    thinking_budget: int | None = None
    temperature: float | None = Field(default=None, sa_column=Column(Float, nullable=True))
    repeats: int = 1
    bias: str | None = Field(default=None, sa_column=Column(String(16), nullable=True))
    note: str = Field(default="", sa_column=Column(Text, nullable=False, server_default=""))
    created_by: int | None = Field(default=None, foreign_key="app_user.id")
    created_at: datetime = Field(default_factory=utcnow)
    # A panel: its members' ids (JSON list) and how their answers are combined ("majority"
    # or "stacked"); a panel asks nothing itself, its answers are its members'.
    members: str | None = Field(default=None, sa_column=Column(Text, nullable=True))
    rule: str | None = Field(default=None, sa_column=Column(String(16), nullable=True))

    @property
    def member_ids(self) -> list[int]:
        return [int(m) for m in json.loads(self.members)] if self.members else []


class CandidateVerdict(SQLModel, table=True):
    """One answer of a candidate on one study item: which repeat, in which image order."""

    __tablename__ = "candidate_verdict"
    __table_args__ = (UniqueConstraint("candidate_id", "item_id", "repeat", "original_first"),)
    id: int | None = Field(default=None, primary_key=True)
    candidate_id: int = Field(foreign_key="judge_candidate.id", index=True)
    study_id: int = Field(foreign_key="study.id", index=True)
    item_id: int = Field(foreign_key="study_item.id")
    repeat: int = 0
    original_first: bool = Field(default=False, sa_column=Column(Boolean, nullable=False))
    compliance: bool | None = None
    structure: bool | None = None
    realism: bool | None = None
    fidelity: bool | None = None
    qualified: bool | None = None
    has_disease: bool | None = None
    weighted_score: float | None = Field(default=None, sa_column=Column(Float, nullable=True))
    reason: str | None = Field(default=None, sa_column=Column(Text, nullable=True))
    # The answer could not be read, or the call failed for good.
    error: str | None = Field(default=None, sa_column=Column(Text, nullable=True))
    spec_version: str = Field(sa_column=Column(String(12), nullable=False))
    # The model version the API said answered, for the drift watch.
    model_version: str | None = Field(default=None, sa_column=Column(String(100), nullable=True))
    created_at: datetime = Field(default_factory=utcnow)


class JudgePromotion(SQLModel, table=True):
    """Who judges new regeneration jobs from now on: the newest row's candidate, or the judge
    of record's own prompt (prompts/judge.j2) when it names none. Kept as a history."""

    __tablename__ = "judge_promotion"
    id: int | None = Field(default=None, primary_key=True)
    candidate_id: int | None = Field(default=None, foreign_key="judge_candidate.id")
    promoted_by: int | None = Field(default=None, foreign_key="app_user.id")
    promoted_at: datetime = Field(default_factory=utcnow)


class SentinelSet(SQLModel, table=True):
    """A reference drawn from several locked studies: a seeded sample of each one's settled
    edits, kept as the list it drew, so that a judge scored on it today is scored on the
    same edits next month."""

    __tablename__ = "sentinel_set"
    id: int | None = Field(default=None, primary_key=True)
    name: str = Field(sa_column=Column(String(100), nullable=False, unique=True))
    per_study: int | None = None  # edits drawn from each study; None: every settled edit
    seed: int = 0
    created_by: int | None = Field(default=None, foreign_key="app_user.id")
    created_at: datetime = Field(default_factory=utcnow)


class SentinelItem(SQLModel, table=True):
    __tablename__ = "sentinel_item"
    sentinel_id: int = Field(foreign_key="sentinel_set.id", primary_key=True)
    item_id: int = Field(foreign_key="study_item.id", primary_key=True)
    study_id: int = Field(foreign_key="study.id", index=True)


class DriftSchedule(SQLModel, table=True):
    """The judge of record asked again on a reference every so often, by the worker: one
    schedule per reference (a study's or a sentinel set's), kept so by app/judges/schedule.py:
    a unique constraint would not hold it, one of the two ids being always NULL."""

    __tablename__ = "drift_schedule"
    id: int | None = Field(default=None, primary_key=True)
    study_id: int | None = Field(default=None, foreign_key="study.id")
    sentinel_id: int | None = Field(default=None, foreign_key="sentinel_set.id")
    every_hours: int
    next_at: datetime
    last_job_id: int | None = None
    last_error: str | None = Field(default=None, sa_column=Column(Text, nullable=True))
    created_by: int | None = Field(default=None, foreign_key="app_user.id")
    created_at: datetime = Field(default_factory=utcnow)
