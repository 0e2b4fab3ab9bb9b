"""`medbanana pipeline run|worker|cancel`: regeneration from the shell."""

import asyncio
from datetime import timedelta
from pathlib import Path

import typer
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TimeRemainingColumn
from sqlalchemy.engine import Engine
from sqlmodel import Session

from app.cases.filters import CaseFilter
from app.cases.listing import task_ids_matching
from app.errors import Conflict, Invalid
from app.images.metrics_store import compute_pending
from app.images.store import StoreError, store_for
from app.job_models import Job
from app.jobs import (
    BACKENDS,
    MIN_STALE,
    JobOptions,
    Lease,
    UnknownBackend,
    claim,
    create_job,
    describe,
    job_estimate,
    job_summary,
    make_backend,
    pipeline_output,
    request_cancel,
    run_job,
    work,
)
from app.models import Direction, Modality
from app.settings import get_settings
from app.studies import roi_metrics
from pipeline.vocabulary import Dimension, TaskOutcome

console = Console(stderr=True)


def matching_tasks(engine: Engine, case_filter: CaseFilter, limit: int | None) -> list[int]:
    with Session(engine) as session:
        return task_ids_matching(session, case_filter, limit)


def output_folder() -> str:
    location = pipeline_output(get_settings())
    try:
        store_for(location)
    except StoreError as error:
        typer.echo(f"error: MEDBANANA_IMAGE_STORE: {error}", err=True)
        raise typer.Exit(2) from None
    return location


def run_here(engine: Engine, lease: Lease) -> str:
    """Run a claimed job in this terminal, with a progress bar; its final status. The job
    keeps to the same quota, and records its calls, as a worker's would."""
    job_id = lease.job_id
    with Progress("[progress.description]{task.description}", BarColumn(), MofNCompleteColumn(),
                  TimeRemainingColumn(), console=console, disable=not console.is_terminal) as bar:
        with Session(engine) as session:
            job = session.get(Job, job_id)
            assert job is not None
            progress = bar.add_task(f"job {job_id}", total=job.total, completed=job.done)

        def show(job: Job) -> None:
            bar.update(progress, completed=job.done,
                       description=f"job {job_id}: {job.succeeded} ok, {job.failed} failed, "
                                   f"{job.api_failed} api_failed")

        return asyncio.run(run_job(engine, lease, make_backend, output_folder(), on_progress=show))


# Shared by `run` and `rejudge`: the quota a job keeps to, and how it is confirmed.
PER_MINUTE = typer.Option(None, "--per-minute", min=1,
                          help="Calls per minute per model, at most, shared by every job and worker.")
PER_DAY = typer.Option(None, "--per-day", min=1, help="Calls per day per model, at most.")
TOKENS_PER_MINUTE = typer.Option(None, "--tokens-per-minute", min=1,
                                 help="Input and output tokens per minute per model, at most.")
ESTIMATE_ONLY = typer.Option(False, "--estimate", help="Print the estimate and start nothing.")
YES = typer.Option(False, "--yes", "-y", help="Start without asking (asked only at a terminal).")
MODE = typer.Option("interactive", "--mode",
                    help="interactive (call by call) or batch (the Batch API: half the price, "
                         "each round answered within 24 h; gemini backend only).")
MODES = ("interactive", "batch")
MAX_QUOTA_WAIT = typer.Option(600.0, "--max-quota-wait", min=1.0, max=86_400.0,
                              help="Seconds, at most, of one wait on a used-up quota before "
                                   "the call is tried again (it is never failed for it).")
QUEUE = typer.Option(False, "--queue", help="Queue the job for the workers and return.")
SPLIT = typer.Option(1, "--split", min=1, max=1000,
                     help="Queue the tasks as this many jobs, one for each worker to take.")


def _start(engine: Engine, case_filter: CaseFilter, limit: int | None, options: JobOptions,
           *, estimate_only: bool = False, yes: bool = False, queue: bool = False,
           split: int = 1) -> None:
    if options.backend not in BACKENDS:
        typer.echo(f"error: no backend {options.backend!r}; backends: {', '.join(BACKENDS)}",
                   err=True)
        raise typer.Exit(1)
    if options.mode not in MODES:
        typer.echo(f"error: --mode must be one of: {', '.join(MODES)}", err=True)
        raise typer.Exit(2)
    if options.mode == "batch" and options.backend != "gemini":
        typer.echo("error: --mode batch needs --backend gemini (the Batch API is Gemini's)",
                   err=True)
        raise typer.Exit(2)
    options = options.within(get_settings())
    task_ids = matching_tasks(engine, case_filter, limit)
    if not task_ids:
        typer.echo("error: no task matches these filters", err=True)
        raise typer.Exit(1)
    with Session(engine) as session:
        for line in describe(job_estimate(session, task_ids, options)):
            typer.echo(line)
    if estimate_only:  # an estimate needs no key: it calls nothing
        return
    try:
        make_backend(options)
    except UnknownBackend as error:
        typer.echo(f"error: {error}", err=True)
        raise typer.Exit(1) from None
    if not yes and console.is_terminal:
        typer.confirm(f"Start the job on {len(task_ids):,} tasks?", abort=True)
    try:
        if queue or split > 1:
            # One job per share, so that as many workers (on as many machines) take one each.
            for share in range(split):
                part = task_ids[share::split]
                if part:
                    typer.echo(f"job {create_job(engine, part, options)} queued: {len(part)} tasks")
            return
        job_id = create_job(engine, task_ids, options)
    except (Invalid, Conflict) as error:  # the promoted judge runs elsewhere; the same job runs
        typer.echo(f"error: {error}", err=True)
        raise typer.Exit(1) from None
    lease = claim(engine, job_id)
    if lease is None:
        typer.echo(f"job {job_id} was taken by another worker", err=True)
        raise typer.Exit(1)
    status = run_here(engine, lease)
    with Session(engine) as session:
        job = session.get(Job, job_id)
        assert job is not None
        summary = job_summary(job)
    typer.echo(f"job {job_id} {status}: {summary['done']} of {summary['total']} done, "
               f"{summary['succeeded']} succeeded, {summary['failed']} failed, "
               f"{summary['api_failed']} api_failed")


def register(cli: typer.Typer, engine_factory: object) -> None:
    pipeline_cli = typer.Typer(no_args_is_help=True,
                               help="Regenerate tasks: instruction, edit, judge, refine.")
    cli.add_typer(pipeline_cli, name="pipeline")

    @pipeline_cli.command("run")
    def run_command(
        modality: list[Modality] = typer.Option([], help="Repeat for several."),
        disease: list[str] = typer.Option([]),
        direction: list[Direction] = typer.Option([]),
        outcome: list[TaskOutcome] = typer.Option([], help="Outcome of the latest run."),
        run_rounds: list[int] = typer.Option(
            [], help="Rounds of the latest run (the /cases 'rounds' filter)."),
        failed_dimension: list[Dimension] = typer.Option([]),
        q: str = typer.Option("", help="Words in instructions or judge reasons."),
        limit: int | None = typer.Option(None, min=1, help="At most this many tasks."),
        rounds: int = typer.Option(5, min=1, max=20, help="Refinement rounds per task."),
        backend: str = typer.Option("offline", help=f"One of: {', '.join(BACKENDS)}."),
        concurrency: int = typer.Option(8, min=1, max=256),
        per_minute: int | None = PER_MINUTE,
        per_day: int | None = PER_DAY,
        tokens_per_minute: int | None = TOKENS_PER_MINUTE,
        estimate_only: bool = ESTIMATE_ONLY,
        yes: bool = YES,
        mode: str = MODE,
        queue: bool = QUEUE,
        split: int = SPLIT,
        max_quota_wait: float = MAX_QUOTA_WAIT,
        use_feedback: bool = typer.Option(False, help="Put readers' answers into refinement."),
        timeout: float = typer.Option(300.0, min=5.0, max=3600.0, help="Seconds per API call."),
    ) -> None:
        """Regenerate every task matching the filters (the same as /cases), with a progress bar."""
        case_filter = CaseFilter(
            modality=tuple(m.value for m in modality), disease=tuple(disease),
            direction=tuple(d.value for d in direction), outcome=tuple(o.value for o in outcome),
            rounds=tuple(run_rounds), failed_dimension=tuple(d.value for d in failed_dimension), q=q)
        _start(engine_factory(), case_filter, limit, JobOptions(  # type: ignore[operator]
            backend=backend, rounds=rounds, concurrency=concurrency, requests_per_minute=per_minute,
            requests_per_day=per_day, tokens_per_minute=tokens_per_minute, mode=mode,
            max_quota_wait=max_quota_wait, use_reader_feedback=use_feedback, timeout_seconds=timeout),
            estimate_only=estimate_only, yes=yes, queue=queue, split=split)

    @pipeline_cli.command("rejudge")
    def rejudge_command(
        modality: list[Modality] = typer.Option([], help="Repeat for several."),
        disease: list[str] = typer.Option([]),
        direction: list[Direction] = typer.Option([]),
        outcome: list[TaskOutcome] = typer.Option([], help="Outcome of the latest run."),
        q: str = typer.Option("", help="Words in instructions or judge reasons."),
        limit: int | None = typer.Option(None, min=1, help="At most this many tasks."),
        times: int = typer.Option(3, min=1, max=20, help="New verdicts per edit."),
        backend: str = typer.Option("offline", help=f"One of: {', '.join(BACKENDS)}."),
        concurrency: int = typer.Option(8, min=1, max=256),
        timeout: float = typer.Option(300.0, min=5.0, max=3600.0, help="Seconds per API call."),
        per_minute: int | None = PER_MINUTE,
        per_day: int | None = PER_DAY,
        tokens_per_minute: int | None = TOKENS_PER_MINUTE,
        estimate_only: bool = ESTIMATE_ONLY,
        yes: bool = YES,
        mode: str = MODE,
        queue: bool = QUEUE,
        split: int = SPLIT,
        max_quota_wait: float = MAX_QUOTA_WAIT,
    ) -> None:
        """Run only the judge again, N times, on each matching task's latest edit (for the
        judge's self-consistency on the agreement pages)."""
        case_filter = CaseFilter(
            modality=tuple(m.value for m in modality), disease=tuple(disease),
            direction=tuple(d.value for d in direction), outcome=tuple(o.value for o in outcome),
            q=q)
        _start(engine_factory(), case_filter, limit, JobOptions(  # type: ignore[operator]
            backend=backend, concurrency=concurrency, kind="rejudge", rejudge_times=times,
            timeout_seconds=timeout, requests_per_minute=per_minute, requests_per_day=per_day,
            tokens_per_minute=tokens_per_minute, mode=mode, max_quota_wait=max_quota_wait),
            estimate_only=estimate_only, yes=yes,
            queue=queue, split=split)

    @pipeline_cli.command("worker")
    def worker_command(once: bool = typer.Option(False, help="Stop when no job is waiting."),
                       poll: float = typer.Option(2.0, min=0.1, help="Seconds between looks."),
                       stale_after: float = typer.Option(
                           30.0, min=MIN_STALE.total_seconds(),
                           help="Resume a running job silent this many seconds (at least three "
                                "heartbeats).")
                       ) -> None:
        """Run jobs with no web server, also against a shared PostgreSQL on another machine."""
        engine = engine_factory()  # type: ignore[operator]
        asyncio.run(work(engine, output_folder(), once=once, poll=poll,
                         stale_after=timedelta(seconds=stale_after)))

    @pipeline_cli.command("cancel")
    def cancel_command(job: int = typer.Argument(..., help="Job id.")) -> None:
        """Ask a job to stop after the rounds in flight."""
        try:
            request_cancel(engine_factory(), job)  # type: ignore[operator]
        except LookupError as error:
            typer.echo(f"error: {error}", err=True)
            raise typer.Exit(1) from None


def register_export(cli: typer.Typer, engine_factory: object) -> None:
    @cli.command("export-run")
    def export_run(
        target: Path = typer.Argument(..., help="A new folder for the scripts' layout."),
        only_regenerated: bool = typer.Option(False, help="Only tasks with a regenerated run."),
    ) -> None:
        """Write each task's latest run in the generation scripts' layout (JSON and images)."""
        from app.cli.marking import cli_marker
        from app.exports import ExportError, export_runs

        engine = engine_factory()  # type: ignore[operator]
        marker = cli_marker()
        with Progress("[progress.description]{task.description}", BarColumn(),
                      MofNCompleteColumn(), console=console,
                      disable=not console.is_terminal) as bar:
            progress = bar.add_task("exporting", total=None)
            try:
                written = export_runs(engine, target, marker, only_regenerated=only_regenerated,
                                      on_progress=lambda d, t: bar.update(progress, completed=d,
                                                                          total=t))
            except ExportError as error:
                typer.echo(f"error: {error}", err=True)
                raise typer.Exit(1) from None
        left_out = (f"; {len(written.left_out)} edits left out, an image unreadable (named in "
                    f"{target / 'manifest.json'})" if written.left_out else "")
        typer.echo(f"wrote {written.tasks} tasks and {written.edits} marked edits to {target}"
                   f"{left_out}")


def register_metrics(cli: typer.Typer, engine_factory: object) -> None:
    @cli.command("metrics")
    def metrics_command() -> None:
        """Compute the preservation metrics of every edit that has none yet (the app's worker
        does this in the background too)."""
        from app.images.metrics_store import pending_count

        engine = engine_factory()  # type: ignore[operator]
        with Session(engine) as session:
            total = pending_count(session)
        done = 0
        with Progress("[progress.description]{task.description}", BarColumn(),
                      MofNCompleteColumn(), TimeRemainingColumn(), console=console,
                      disable=not console.is_terminal) as bar:
            progress = bar.add_task("measuring edits", total=total)
            while True:
                base = done

                def show(n: int, base: int = base) -> None:
                    bar.update(progress, completed=base + n)

                stored = compute_pending(engine, on_progress=show)
                if not stored:
                    break
                done += stored
        regions = 0
        while stored := roi_metrics.compute_pending(engine):
            regions += stored
        typer.echo(f"measured {done} edits and {regions} readers' regions")
