"""What a job is asked to do: its options, stored with it as JSON, and its estimate."""

import json
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING

from sqlmodel import Session

from app.errors import Invalid
from app.jobs.estimate import for_tasks
from app.jobs.rate_limit import Quota
from app.judges.promotion import checked_for_job
from app.judges.reference import Ref
from pipeline.estimate import Estimate, Limits
from pipeline.gemini import DEFAULT_MODELS

if TYPE_CHECKING:
    from app.settings import Settings


@dataclass
class JobOptions:
    backend: str = "offline"
    rounds: int = 5
    concurrency: int = 8
    # Each model's quota (Gemini counts each separately), shared by every job and worker.
    requests_per_minute: int | None = None
    requests_per_day: int | None = None
    tokens_per_minute: int | None = None
    use_reader_feedback: bool = False
    models: dict[str, str] = field(default_factory=dict)
    # "regenerate" (the refinement loop), "rejudge" (the judge again, on the latest edit),
    # "score" (a candidate judge on a locked study's edits, app/judges/scoring.py) or
    # "dicom" (a study's cases sent to a DICOMweb server, app/jobs/dicom_send.py)
    kind: str = "regenerate"
    # A "dicom" job's server: where it sends, and what its acknowledgements are recorded for.
    dicomweb_url: str | None = None
    # A "score" job's candidate judge and reference study; a regeneration's study whose
    # readers rejected what the judge accepted (app/judges/targets.py), when it came from one.
    candidate_id: int | None = None
    study_id: int | None = None
    # A "score" job's reference when it is a sentinel set (app/judges/reference.py).
    sentinel_id: int | None = None
    # The promoted candidate judging this job's verdicts (app/judges/promotion.py), recorded
    # when the job is made; None: the judge of record's own prompt.
    judge_candidate_id: int | None = None
    rejudge_times: int = 3
    # Per call: image edits with thinking can take minutes; a stuck connection must not.
    timeout_seconds: float = 300.0
    # "interactive" (calls one by one) or "batch" (the Batch API: each round's calls of
    # every task as one batch, at half the price, answered within 24 h).
    mode: str = "interactive"
    # The longest single wait on a used-up quota before the call is tried again (and waits
    # again if need be): the ceiling of the back-off, never a reason to fail.
    max_quota_wait: float = 600.0
    batch_poll_seconds: float = 30.0

    @property
    def reference(self) -> Ref:
        """A "score" job's reference."""
        if self.sentinel_id is not None:
            return Ref("sentinel", self.sentinel_id)
        return Ref("study", self.study_id or 0)

    def within(self, settings: "Settings") -> "JobOptions":
        """These options under the server's quota: each limit the lower of the job's and
        the server's, so no job can ask for more than the Gemini project allows."""
        def lower(own: int | None, server: int | None) -> int | None:
            return server if own is None else own if server is None else min(own, server)
        return replace(self, requests_per_minute=lower(self.requests_per_minute,
                                                       settings.gemini_requests_per_minute),
                       requests_per_day=lower(self.requests_per_day,
                                              settings.gemini_requests_per_day),
                       tokens_per_minute=lower(self.tokens_per_minute,
                                               settings.gemini_tokens_per_minute))

    def quota(self) -> Quota:
        return Quota(self.requests_per_minute, self.requests_per_day, self.tokens_per_minute)

    def limits(self) -> Limits:
        return Limits(self.requests_per_minute, self.requests_per_day, self.tokens_per_minute,
                      self.concurrency)

    def as_json(self) -> str:
        return json.dumps(self.__dict__)

    @classmethod
    def from_json(cls, text: str) -> "JobOptions":
        known = {k: v for k, v in json.loads(text or "{}").items() if k in cls.__dataclass_fields__}
        return cls(**known)


def job_estimate(session: Session, task_ids: list[int], options: JobOptions) -> Estimate:
    models = options.models if options.backend != "gemini" else DEFAULT_MODELS | options.models
    found = for_tasks(session, task_ids, backend=options.backend, kind=options.kind,
                      rounds=options.rounds, rejudge_times=options.rejudge_times, models=models,
                      limits=options.limits())
    return replace(found, batch_refused=batch_refused(session, options))


def batch_refused(session: Session, options: JobOptions) -> str | None:
    """Why this job could not go through the Batch API, or None when it could."""
    if options.backend != "gemini":
        return f"the Batch API is Gemini's, and this job runs {options.backend}"
    if options.kind in ("regenerate", "rejudge"):
        try:
            checked_for_job(session, options.backend, "batch")
        except Invalid as refused:
            return str(refused)
    return None
