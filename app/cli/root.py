"""The ``medbanana`` command line."""

import os
import sys
from pathlib import Path

import typer
from pydantic import ValidationError
from rich.console import Console
from rich.progress import (
    BarColumn,
    DownloadColumn,
    TaskProgressColumn,
    TimeRemainingColumn,
)
from rich.table import Table
from sqlalchemy.engine import Engine, make_url
from sqlalchemy.exc import OperationalError

from app.cli.lazy import LazyGroup, engine_factory
from app.cli.progress import progress
from app.cli.users import demo_users, users_cli
from app.db import make_engine, migrate
from app.importer import ImportFileError, ImportReport, import_tree
from app.logging_setup import configure_logging
from app.settings import SettingsError, get_settings
from pipeline.vocabulary import Outcome

cli = typer.Typer(cls=LazyGroup, add_completion=False, no_args_is_help=True,
                  help="MedBanana Review: import, browse and re-run Med-Banana edits.")
console = Console(stderr=True)
# How many problems the summary prints; every one is stored in the database.
PROBLEMS_SHOWN = 20


def _engine() -> Engine:
    url = get_settings().resolved_database_url()
    engine = make_engine(url)
    try:
        migrate(engine)
    except OperationalError as error:
        shown = make_url(url).render_as_string(hide_password=True)
        reason = str(error.orig).strip().splitlines()[0] if error.orig else str(error)
        _say(f"error: cannot reach the database {shown}: {reason}")
        raise typer.Exit(1) from None
    return engine


@cli.command("import")
def import_command(
    run_root: Path = typer.Argument(..., help="Folder holding {dataset}-{edit|remove} folders."),
    source: Path | None = typer.Option(None, "--source", help="Folder of the original images."),
) -> None:
    """Import a Med-Banana run (scripts' layout or the paper's schema). Safe to repeat."""
    engine = _engine()
    with progress(console, "importing", BarColumn(), TaskProgressColumn(), DownloadColumn(),
                  TimeRemainingColumn(), unit="bytes of run files") as update:
        try:
            report = import_tree(engine, run_root, source, on_progress=update)
        except ImportFileError as error:
            _say(f"error: {error.path}: {error.problem}")
            _say("Nothing from that file was written; files before it are imported.")
            raise typer.Exit(1) from None
    _print_report(report)


def _print_report(report: ImportReport) -> None:
    table = Table(title="Import summary", show_header=False)
    table.add_row("files imported", str(report.files_imported))
    table.add_row("files unchanged (skipped)", str(report.files_unchanged))
    table.add_row("tasks added", str(report.tasks_added))
    for outcome in (Outcome.success, Outcome.failed, Outcome.unjudged, Outcome.api_failed):
        table.add_row(f"runs added: {outcome}", str(report.runs_added[outcome]))
    table.add_row("runs already imported", str(report.runs_unchanged))
    table.add_row("attempts added", str(report.attempts_added))
    table.add_row("judge verdicts added", str(report.verdicts_added))
    for kind, count in sorted(report.problem_counts.items()):
        table.add_row(f"problems: {kind}", str(count))
    Console().print(table)
    for name in report.files_ignored:
        _say(f"ignored (not a Med-Banana file): {name}")
    for problem in report.problems[:PROBLEMS_SHOWN]:
        _say(f"{problem.kind}: {problem.file}: {problem.task_key}: {problem.detail}")
    if report.problem_total > PROBLEMS_SHOWN:
        _say(f"... and {report.problem_total - PROBLEMS_SHOWN} more: every one is listed at /imports")


def _say(line: str) -> None:
    """Unwrapped and without markup, so paths and keys can be copied whole."""
    console.print(line, markup=False, highlight=False, soft_wrap=True)


@cli.command("demo-data")
def demo_data(
    out: Path = typer.Argument(..., help="Folder to write DIR/run and DIR/source into."),
    size: int = typer.Option(1024, min=64, max=2048, help="Image side in pixels (data: 1024)."),
    workers: int = typer.Option(os.cpu_count() or 1, min=1, max=64,
                                help="Processes drawing images; the output is the same for any."),
) -> None:
    """Write a deterministic synthetic run (procedural phantoms, not patient images)."""
    from app.demo.generate import MISSING_ORIGINAL, write_demo

    console.print(f"drawing a synthetic demo run at {size} px with {workers} processes "
                  "(a minute or two here; longer on a busy machine)")
    with progress(console, "drawing phantoms") as update:
        tasks = write_demo(out, size, workers=workers, on_progress=update)
    console.print(f"wrote {len(tasks)} synthetic tasks to {out}/run and sources to {out}/source")
    dataset, disease, stem = MISSING_ORIGINAL
    _say(f"one original, {dataset}/{disease}/{stem}.jpeg, is left out on purpose: the import "
         "reports it and the case page shows how a missing image looks")
    console.print(f"next: medbanana import {out}/run --source {out}/source")


# Seconds an idle connection is kept open. A radiologist looks at a case for 10-30 s: at
# uvicorn's 5 s nearly every next case needed a new connection. nginx keeps 75 s.
KEEP_ALIVE = 75


@cli.command("serve")
def serve(
    host: str = typer.Option("127.0.0.1", help="Address to listen on; 0.0.0.0 in a container."),
    port: int = typer.Option(8000, min=1, max=65535),
    workers: int = typer.Option(1, min=1, max=64, help="Server processes (each has its own "
                                "pipeline worker unless MEDBANANA_WORKER=false)."),
) -> None:
    """Serve the web app with uvicorn on the database named by the settings."""
    import uvicorn

    from app.provenance.marker import Marker

    settings = get_settings()
    try:
        settings.resolved_secret_key()
        Marker.from_settings(settings)  # the C2PA signer, checked (or made) once here
    except SettingsError as error:
        _say(f"error: {error}")
        raise typer.Exit(2) from None
    _engine()
    # Behind a reverse proxy: its X-Forwarded-For/-Proto are believed from the listed
    # addresses only, so the client's address and https are right in logs and cookies.
    # None listed: no forwarded header is believed from anyone (uvicorn's own default
    # would believe 127.0.0.1, and any local process could then pick its address).
    trusted = settings.forwarded_allow_ips.strip()
    uvicorn.run("app.web.main:create_app", factory=True, host=host, port=port, workers=workers,
                proxy_headers=bool(trusted), forwarded_allow_ips=trusted or None,
                log_config=None, access_log=False, timeout_keep_alive=KEEP_ALIVE)


cli.add_typer(users_cli, name="users")
cli.command("demo-users")(demo_users)


@cli.command("backup")
def backup(target: Path = typer.Argument(..., help="New file for the copy.")) -> None:
    """Make a consistent copy of the database (SQLite online backup, or pg_dump)."""
    from app.backup import BackupError, backup_database

    try:
        backup_database(get_settings().resolved_database_url(), target)
    except BackupError as error:
        _say(f"error: {error}")
        raise typer.Exit(1) from None
    _say(f"backup written to {target}")


@cli.command("restore")
def restore(source: Path = typer.Argument(..., help="A file made by medbanana backup."),
            yes: bool = typer.Option(False, "--yes", help="Replace the database's contents.")) -> None:
    """Replace the database with a backup, then bring its schema up to date. Stop the server
    and the workers first."""
    from app.backup import BackupError, restore_database

    url = get_settings().resolved_database_url()
    if not yes:
        _say(f"error: this replaces everything in {make_url(url).render_as_string()} with "
             f"{source}; stop the server and workers, then run again with --yes")
        raise typer.Exit(2)
    try:
        restore_database(url, source)
    except BackupError as error:
        _say(f"error: {error}")
        raise typer.Exit(1) from None
    _engine()  # migrates a backup made by an older version
    _say(f"restored {source}; the schema is up to date")


@cli.command("migrate")
def migrate_command() -> None:
    """Bring the database schema up to date (every other command does this too)."""
    _engine()
    console.print("database is up to date")


engine_factory(_engine)  # the other commands are registered when run (app/cli/lazy.py)


def main() -> None:
    try:
        configure_logging(get_settings())
    except ValidationError as error:
        _say(f"error: a MEDBANANA_ setting is not valid: {error}")
        sys.exit(2)
    try:
        cli()
    except KeyboardInterrupt:
        sys.exit(130)


if __name__ == "__main__":
    main()
