"""`medbanana audit verify`: the tamper-evident log checked, record by record and row by row."""

import typer
from sqlmodel import Session


def register(cli: typer.Typer, engine_factory: object) -> None:
    group = typer.Typer(help="The tamper-evident audit log.", no_args_is_help=True)
    cli.add_typer(group, name="audit")

    @group.command("verify")
    def verify_command() -> None:
        """Check every record's link to the one before and every answer and decision it
        vouches for. Exit 0 naming the records and the head; 1 naming the first record that
        does not fit."""
        import app.studies.models  # noqa: F401  (the answer tables the log vouches for)
        from app.audit import verify

        engine = engine_factory()  # type: ignore[operator]
        with Session(engine) as session:
            verdict = verify(session)
        if not verdict.holds:
            typer.echo(f"audit log does not hold: {verdict.problem}", err=True)
            raise typer.Exit(1)
        before = sum(verdict.before_the_log.values())
        predating = (f"; {before:,} answers and decisions were stored before the log began and "
                     "are not covered" if before else "")
        typer.echo(f"audit log holds: {verdict.records:,} records, head {verdict.head}; "
                   f"{verdict.rows_checked:,} answers and decisions match their records{predating}")
