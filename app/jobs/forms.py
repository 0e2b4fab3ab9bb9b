"""The job form: what to run on which tasks, and the quota to keep to, checked and turned
into a job's options (plain values in, options out; no web types)."""

from typing import Annotated

from pydantic import BaseModel, Field, field_validator
from sqlmodel import Session

from app.cases.filters import CaseFilter
from app.cases.listing import existing_task_ids, task_ids_matching
from app.errors import Invalid
from app.jobs.options import JobOptions
from app.models import MAX_DB_ID

MAX_TASKS = 100_000
MODEL_NAME = r"^$|^[A-Za-z0-9._-]+$"


class JobForm(BaseModel):
    """The job form: what to run on which tasks, and the quota to keep to; posted to start a
    job, and to estimate it as the form changes."""

    task: list[Annotated[int, Field(ge=1, le=MAX_DB_ID)]] | None = Field(None, max_length=100_000)
    everything: bool = False
    kind: str = Field("regenerate", pattern="^(regenerate|rejudge)$")
    rounds: int = Field(5, ge=1, le=20)
    rejudge_times: int = Field(3, ge=1, le=20)
    backend: str = Field("offline", max_length=32)
    concurrency: int = Field(8, ge=1, le=256)
    requests_per_minute: int | None = Field(None, ge=1, le=100_000)
    requests_per_day: int | None = Field(None, ge=1, le=100_000_000)
    tokens_per_minute: int | None = Field(None, ge=1, le=1_000_000_000)
    use_reader_feedback: bool = False
    mode: str = Field("interactive", pattern="^(interactive|batch)$")
    instruction_model: str = Field("", max_length=100, pattern=MODEL_NAME)
    edit_model: str = Field("", max_length=100, pattern=MODEL_NAME)
    judge_model: str = Field("", max_length=100, pattern=MODEL_NAME)

    @field_validator("requests_per_minute", "requests_per_day", "tokens_per_minute",
                     mode="before")
    @classmethod
    def blank_is_none(cls, value: object) -> object:
        return None if value == "" else value  # an empty box means no limit

    def options(self, backends: list[str]) -> JobOptions:
        if self.backend not in backends:
            raise Invalid(f"backend must be one of: {', '.join(backends)}", field="backend")
        if self.mode == "batch" and self.backend != "gemini":
            raise Invalid("the Batch API needs the gemini backend", field="mode")
        models = {step: name for step, name in (("instruction", self.instruction_model),
                                                 ("edit", self.edit_model),
                                                 ("judge", self.judge_model)) if name}
        return JobOptions(backend=self.backend, rounds=self.rounds, concurrency=self.concurrency,
                          requests_per_minute=self.requests_per_minute,
                          requests_per_day=self.requests_per_day,
                          tokens_per_minute=self.tokens_per_minute, kind=self.kind,
                          rejudge_times=self.rejudge_times, models=models,
                          use_reader_feedback=self.use_reader_feedback, mode=self.mode)


def job_selection(session: Session, case_filter: CaseFilter, task_ids: list[int] | None,
                  everything: bool) -> list[int]:
    """The tasks a job is for: every task the filter matches, or the ticked ones that exist."""
    if everything:
        chosen = task_ids_matching(session, case_filter, MAX_TASKS)
    else:
        chosen = existing_task_ids(session, [t for t in task_ids or [] if 1 <= t <= MAX_DB_ID])
    if not chosen:
        raise Invalid("tick at least one case, or choose all cases matching the filter")
    return chosen
