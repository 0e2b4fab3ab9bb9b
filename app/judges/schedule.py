"""Drift checks on a schedule: the judge of record asked again on a reference every so many
hours, by whichever worker finds the check due (app/jobs/score_job.py starts it).

A due check is taken by moving its next time forward with a compare-and-set, so two workers
on one database never start the same check twice; a check that could not start keeps its
reason on the schedule, for the leaderboard to show, and is tried again at its next time."""

from dataclasses import dataclass
from datetime import datetime, timedelta

from sqlalchemy import update
from sqlalchemy.engine import Engine
from sqlmodel import Session, col, select

from app.errors import Invalid
from app.judges.models import DriftSchedule, SentinelSet
from app.judges.reference import Ref, load_reference
from app.models import User, utcnow
from app.studies.models import Study

MIN_HOURS = 1
MAX_HOURS = 24 * 365


def schedule_of(session: Session, ref: Ref) -> DriftSchedule | None:
    if ref.kind == "study":
        query = select(DriftSchedule).where(col(DriftSchedule.study_id) == ref.id,
                                            col(DriftSchedule.sentinel_id).is_(None))
    else:
        query = select(DriftSchedule).where(col(DriftSchedule.sentinel_id) == ref.id)
    return session.scalars(query).first()


def set_schedule(session: Session, ref: Ref, every_hours: int, by: User | None) -> DriftSchedule:
    """Check the reference every ``every_hours`` from now (replacing its schedule); Invalid
    for a period out of range, 404 or 409 for a reference that cannot be scored on."""
    if not MIN_HOURS <= every_hours <= MAX_HOURS:
        raise Invalid(f"check every {MIN_HOURS} to {MAX_HOURS:,} hours", "every_hours")
    load_reference(session, ref)
    schedule = schedule_of(session, ref) or DriftSchedule(
        study_id=ref.id if ref.kind == "study" else None,
        sentinel_id=ref.id if ref.kind == "sentinel" else None, every_hours=every_hours,
        next_at=utcnow(), created_by=by.id if by else None)
    schedule.every_hours = every_hours
    schedule.next_at = utcnow() + timedelta(hours=every_hours)
    schedule.last_error = None
    session.add(schedule)
    session.commit()
    session.refresh(schedule)
    return schedule


def stop_schedule(session: Session, ref: Ref) -> None:
    schedule = schedule_of(session, ref)
    if schedule is not None:
        session.delete(schedule)
        session.commit()


def ref_of(schedule: DriftSchedule) -> Ref:
    if schedule.sentinel_id is not None:
        return Ref("sentinel", schedule.sentinel_id)
    return Ref("study", schedule.study_id or 0)


@dataclass(frozen=True)
class Watch:
    """A schedule as the judges' page lists it."""

    schedule: DriftSchedule
    ref: Ref
    name: str


def watches(session: Session) -> list[Watch]:
    """Every schedule, with its reference's name, soonest first."""
    found = []
    for schedule in session.scalars(select(DriftSchedule).order_by(col(DriftSchedule.next_at))):
        ref = ref_of(schedule)
        named = session.get(Study if ref.kind == "study" else SentinelSet, ref.id)
        found.append(Watch(schedule, ref, getattr(named, "name", f"{ref.kind} {ref.id}")))
    return found


def take_due(engine: Engine, now: datetime | None = None) -> list[tuple[int, Ref]]:
    """The schedules due now, each taken for this worker: its next time moved on by its
    period (a worker that finds it taken already leaves it)."""
    now = now or utcnow()
    taken = []
    with Session(engine) as session:
        due = session.execute(select(col(DriftSchedule.id), col(DriftSchedule.next_at),
                                     col(DriftSchedule.every_hours))
                              .where(col(DriftSchedule.next_at) <= now)).all()
        for schedule_id, next_at, hours in due:
            # Missed periods (the server was down) are not made up: one check now, and the
            # next on the schedule's own beat, after now.
            period = timedelta(hours=hours)
            following = next_at + period * (int((now - next_at) / period) + 1)
            moved = session.execute(update(DriftSchedule).where(
                col(DriftSchedule.id) == schedule_id, col(DriftSchedule.next_at) == next_at)
                .values(next_at=following))
            session.commit()
            if moved.rowcount == 1:  # type: ignore[attr-defined]
                schedule = session.get(DriftSchedule, schedule_id)
                if schedule is not None:
                    taken.append((schedule_id, ref_of(schedule)))
    return taken


def record_start(engine: Engine, schedule_id: int, job_id: int | None, error: str | None) -> None:
    with Session(engine) as session:
        values: dict[str, object] = {"last_error": error}
        if job_id is not None:
            values["last_job_id"] = job_id
        session.execute(update(DriftSchedule).where(col(DriftSchedule.id) == schedule_id)
                        .values(**values))
        session.commit()
