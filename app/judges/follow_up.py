"""The follow-up on a targeted regeneration: a study of the edits the regeneration made, read
by the readers of the study that found the old ones wanting, and the comparison of the two on
the same source images."""

import json
from dataclasses import dataclass

from sqlalchemy import select
from sqlmodel import Session, col

from app.agreement import reads
from app.agreement.report import settled_consensus
from app.cases.filters import CaseFilter
from app.errors import Conflict, Invalid, NotFound
from app.job_models import Job, JobStatus, JobTask
from app.judges.before_after import BeforeAfter, before_after
from app.models import Attempt, JudgeVerdict, Run, Task, User
from app.studies.design import StudyError, StudyPlan, create_study_of
from app.studies.design_traits import default_design
from app.studies.models import Assignment, Study, StudyItem, in_figures
from app.studies.pool import Candidate

MADE_FROM = "regenerated_from"


def _final_attempt(session: Session, run: Run) -> int | None:
    """The run's accepted edit, else its last round with an image."""
    query = (select(col(Attempt.id), col(Attempt.round)).where(
        col(Attempt.run_id) == run.id, col(Attempt.image_present).is_(True))
        .order_by(col(Attempt.round).desc()))
    rounds = list(session.execute(query))
    for attempt_id, number in rounds:
        if run.success_round is not None and number == run.success_round:
            return int(attempt_id)
    return int(rounds[0][0]) if rounds else None


def regenerated(session: Session, job_id: int) -> tuple[Job, int, list[Candidate]]:
    """The finished regeneration job, the study it came from, and each task's new edit."""
    job = session.get(Job, job_id)
    if job is None:
        raise NotFound(f"no job {job_id}")
    source = json.loads(job.options).get("study_id")
    if job.kind != "regenerate" or source is None:
        raise Conflict(f"job {job_id} is not a regeneration of a study's disagreements")
    if job.status != JobStatus.done:
        raise Conflict(f"job {job_id} is {job.status}: a follow-up reads the edits of a finished job")
    units = []
    rows = session.execute(select(col(JobTask.task_id), col(JobTask.run_id)).where(
        col(JobTask.job_id) == job_id).order_by(col(JobTask.task_id)))
    for task_id, run_id in rows:
        run = session.get(Run, run_id) if run_id else None
        task = session.get(Task, task_id)
        attempt = _final_attempt(session, run) if run is not None else None
        if attempt is not None and task is not None:
            units.append(Candidate(task_id, attempt, {}, task.source_image_id))
    return job, int(source), units


def create_follow_up(session: Session, job_id: int, name: str, reader_ids: list[int] | None,
                     created_by: User) -> Study:
    """A study of the regenerated edits, made from the job's own runs; read by the source
    study's readers unless others are named."""
    _, source, units = regenerated(session, job_id)
    if not units:
        raise Conflict(f"job {job_id} made no edit with an image to read")
    if reader_ids is None:
        reader_ids = sorted(set(session.scalars(select(col(Assignment.user_id)).where(
            col(Assignment.study_id) == source))))
    # A validation study, stratified as every one is by the judge's verdict: here the
    # verdict the promoted judge gave the new edit.
    sample: dict[str, list[Candidate]] = {}
    for unit in units:
        passed = session.scalar(select(col(JudgeVerdict.qualified)).where(
            col(JudgeVerdict.attempt_id) == unit.attempt_id).order_by(col(JudgeVerdict.id)).limit(1))
        sample.setdefault("pass" if passed else "fail", []).append(unit)
    plan = StudyPlan(name=name, case_filter=CaseFilter(), reader_ids=reader_ids,
                     design=default_design(), strata_facets=("verdict",),
                     per_stratum={k: len(v) for k, v in sample.items()})
    try:
        return create_study_of(session=session, plan=plan, sample=sample,
                               created_by=created_by,
                               made_from={MADE_FROM: {"study": source, "job": job_id}})
    except StudyError as error:
        raise Invalid(str(error), getattr(error, "field", None)) from None


@dataclass(frozen=True)
class Comparison:
    source: Study
    job_id: int
    figures: BeforeAfter | None  # None until a task is settled in both studies
    settled_after: int
    tasks: int


def comparison(session: Session, study: Study) -> Comparison | None:
    """Before and after for a follow-up study; None for any other study."""
    made_from = json.loads(study.selection or "{}").get(MADE_FROM)
    if not made_from:
        return None
    source = session.get(Study, made_from["study"])
    if source is None:
        return None
    after = _overall_by_task(session, study)
    # Before: the edit the judge accepted, which is what the regeneration replaced.
    before = _overall_by_task(session, source, judge_accepted=True)
    both = sorted(t for t in after if t in before)
    clusters = {t: s for t, s in session.execute(select(col(Task.id), col(Task.source_image_id))
                                                 .where(col(Task.id).in_(both)))}
    figures = (before_after([clusters[t] for t in both], [before[t] for t in both],
                            [after[t] for t in both]) if both else None)
    tasks = len(set(session.scalars(select(col(StudyItem.task_id)).where(
        col(StudyItem.study_id) == study.id, in_figures()))))
    return Comparison(source, int(made_from["job"]), figures, len(after), tasks)


def _overall_by_task(session: Session, study: Study, *,
                     judge_accepted: bool = False) -> dict[int, bool]:
    """The readers' settled overall verdict per task (the task's first settled item; with
    ``judge_accepted``, only among the items the judge accepted)."""
    data = reads.load(session, study)
    settled = settled_consensus(data)
    found: dict[int, bool] = {}
    for case in data.cases:
        if judge_accepted and case.judge.get("overall") is not True:
            continue
        value = settled.get(case.item_id, {}).get("overall")
        if value is not None:
            found.setdefault(case.task_id, value)
    return found
