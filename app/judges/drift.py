"""Drift: the judge of record asked again, today, on a locked study's edits, and compared with
what it said when the study was made. A warning when its agreement with the readers has moved
outside the interval it had, or when the API names a model version other than before.

Each check is a candidate of its own (the judge of record's own prompt and model, named by
the time it was asked), scored like any other, so every check stays on record."""

import json
from dataclasses import dataclass, replace

from sqlalchemy import select
from sqlmodel import Session, col

from app.judges.board import leaderboard
from app.judges.candidates import (
    CandidatePlan,
    add_candidate,
    checked,
    data_kinds,
    default_template,
)
from app.judges.leaderboard import RECORD, Figure
from app.judges.models import CandidateVerdict, JudgeCandidate
from app.judges.reference import Ref, Reference, as_ref, load_reference
from app.models import Attempt, User, utcnow
from app.settings import Settings
from app.studies.models import StudyItem
from pipeline.gemini import DEFAULT_MODELS

NOTE = "drift check: the judge of record's own prompt and model, asked again"


def note_for(ref: Ref) -> str:
    """A check's note: names the reference it was made for, so each reference lists its own."""
    return f"{NOTE} ({ref.query})"


def drift_plan(session: Session, settings: Settings, ref: Ref) -> CandidatePlan:
    """A new check's candidate, checked and ready to write (drift_candidate names it): on
    Gemini when this server has a key, else offline."""
    gemini = bool(settings.gemini_api_key.get_secret_value())
    return checked(CandidatePlan(
        name="drift check", backend="gemini" if gemini else "offline",
        model=DEFAULT_MODELS["judge"] if gemini else "offline-heuristic-1",
        template=default_template(), note=note_for(ref)), data_kinds(session))


def drift_candidate(session: Session, plan: CandidatePlan, by: User | None) -> JudgeCandidate:
    """The check's candidate, named by the time it was asked, written in the caller's
    transaction (which holds the job-creation lock: app/jobs/score_job.py)."""
    name = f"drift check {utcnow():%Y-%m-%d %H:%M:%S}"
    taken = set(session.scalars(select(col(JudgeCandidate.name)).where(
        col(JudgeCandidate.name).startswith(name))))
    # Named to the second: two checks made within one (two references, or a schedule and
    # a click) must not clash on the name.
    number = 2
    unique = name
    while unique in taken:
        unique, number = f"{name} ({number})", number + 1
    return add_candidate(session, replace(plan, name=unique), by.id if by else None)


@dataclass(frozen=True)
class DriftCheck:
    name: str
    candidate_id: int
    asked_at: str
    record: Figure  # the judge of record's agreement on the overall question, when the study was made
    now: Figure | None  # the check's; None until it is scored
    moved: bool  # the check's agreement lies outside the record's interval
    versions_then: tuple[str, ...]
    versions_now: tuple[str, ...]

    @property
    def new_version(self) -> bool:
        """The API named a version not seen then; unknown (False) when none was recorded then,
        as for imported runs, whose files do not keep it."""
        return bool(self.versions_then) and bool(set(self.versions_now) - set(self.versions_then))


def checks(session: Session, ref: Ref | int, loaded: Reference | None = None) -> list[DriftCheck]:
    """Every check on this reference (``loaded``: the reference, when at hand)."""
    ref = as_ref(ref)
    made = list(session.scalars(select(JudgeCandidate).where(
        col(JudgeCandidate.note).in_((NOTE, note_for(ref)))).order_by(col(JudgeCandidate.id))))
    if not made:
        return []
    loaded = loaded or load_reference(session, ref)
    board = leaderboard(session, loaded.ref, questions=("overall",), loaded=loaded)["overall"]
    rows = {r.name: r for r in board.rows}
    record = rows[RECORD].figures["agreement"]
    items = set(loaded.settled)
    then = _versions_then(session, loaded.study_ids, items)
    found = []
    for candidate in made:
        row = rows.get(candidate.name)
        if row is None and candidate.note == NOTE:
            continue  # a check made before checks named their reference, for another one
        now = row.figures["agreement"] if row is not None else None
        moved = (now is not None and now.value is not None and record.low is not None
                 and record.high is not None and not record.low <= now.value <= record.high)
        versions = tuple(sorted({v for i, v in session.execute(
            select(col(CandidateVerdict.item_id), col(CandidateVerdict.model_version)).where(
                col(CandidateVerdict.candidate_id) == candidate.id,
                col(CandidateVerdict.study_id).in_(loaded.study_ids))) if v and i in items}))
        found.append(DriftCheck(candidate.name, candidate.id or 0,
                                candidate.created_at.strftime("%Y-%m-%d %H:%M UTC"), record, now,
                                moved, then, versions))
    return found


def _versions_then(session: Session, study_ids: tuple[int, ...], items: set[int]) -> tuple[str, ...]:
    """The model versions the API named for the judge when the reference's edits were judged."""
    found = set()
    query = (select(col(StudyItem.id), col(Attempt.calls))
             .join(StudyItem, col(StudyItem.attempt_id) == Attempt.id)
             .where(col(StudyItem.study_id).in_(study_ids)))
    for item_id, calls in session.execute(query):
        if item_id not in items:
            continue
        try:
            judge = json.loads(calls or "{}").get("judge") or {}
        except ValueError:
            continue
        if isinstance(judge, dict) and judge.get("model_version"):
            found.add(str(judge["model_version"]))
    return tuple(sorted(found))
