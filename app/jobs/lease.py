"""A worker's hold on a job: the fencing token its claim got, checked by every write.

A worker can stall (a pause, a long garbage collection, a lost network) for longer than the
job's heartbeat allows; another worker then takes the job over with a higher lease. When the
first one wakes, its writes must not land: each write of a job first updates the job row
where the lease is still its own. That UPDATE locks the row (PostgreSQL) or the database
(SQLite) until the write commits, so no claim can slip in between the check and the commit.
"""

from dataclasses import dataclass

from sqlalchemy import update
from sqlmodel import Session, col

from app.db import end_if_stalled
from app.job_models import Job
from app.models import utcnow


class Displaced(Exception):
    """The job was taken over by another worker: this one stops without writing."""


@dataclass(frozen=True)
class Lease:
    job_id: int
    token: int

    def hold(self, session: Session) -> None:
        """Inside the caller's transaction: keep the job to this lease until commit, or
        raise Displaced. Also a heartbeat, since the worker is evidently alive."""
        end_if_stalled(session)  # a worker paused while holding the row must not block
        touched = session.execute(
            update(Job).where(col(Job.id) == self.job_id, col(Job.lease) == self.token)
            .values(heartbeat_at=utcnow()))
        if touched.rowcount != 1:  # type: ignore[attr-defined]
            session.rollback()
            raise Displaced(f"job {self.job_id} was taken over by another worker "
                            f"(this worker's lease {self.token} is no longer current)")


def hold(session: Session, lease: "Lease | None") -> None:
    """Check the lease when there is one: runs outside a job (a one-off regeneration from
    the CLI) have nothing to be displaced from."""
    if lease is not None:
        lease.hold(session)
