"""`medbanana stats STUDY`: the agreement report from the shell, as JSON, CSV or HTML."""

import sys
from enum import StrEnum
from pathlib import Path

import typer
from sqlalchemy.engine import Engine
from sqlmodel import Session, col, select

from app.agreement.reads import require_rubric
from app.agreement.report import Slice
from app.agreement.service import report_for, report_json
from app.csv_cells import iter_dict_csv
from app.designs import AGREEMENT_TABLES, agreement_table, standalone_html
from app.errors import DomainError
from app.strict_json import json_text
from app.studies.models import Study


class Format(StrEnum):
    json = "json"
    csv = "csv"
    html = "html"


def find_study(session: Session, ref: str) -> Study | None:
    """A study by id or by name."""
    if ref.isdigit():
        found = session.get(Study, int(ref))
        if found is not None:
            return found
    return session.scalars(select(Study).where(col(Study.name) == ref)).first()


def stats(engine: Engine, ref: str, fmt: Format, table: str, output: Path | None) -> str | None:
    """The report's text, written to ``output`` (whole or not at all) or returned for stdout.
    Returns an error message instead when the study or table is unknown."""
    if fmt is Format.csv and table not in AGREEMENT_TABLES:
        return f"no table {table!r}; tables: {', '.join(AGREEMENT_TABLES)}"
    with Session(engine) as session:
        study = find_study(session, ref)
        if study is None:
            return f"no study with id or name {ref!r}"
        try:
            require_rubric(study)
        except DomainError as refused:  # a pairwise or real-or-edited study: its own page
            return str(refused)
        if fmt is Format.html:
            text = standalone_html(session, study)
        else:
            _, report = report_for(session, study, Slice())
            if fmt is Format.json:
                text = json_text(report_json(study, report))
            else:
                text = "".join(iter_dict_csv(agreement_table(report, table)))
    if output is None:
        sys.stdout.write(text)
        return None
    partial = output.with_name(output.name + ".partial")
    partial.write_text(text, encoding="utf-8")
    partial.replace(output)  # never a half-written report under the real name
    return None


def register(cli: typer.Typer, engine_factory: object) -> None:
    @cli.command("stats")
    def stats_command(
        study: str = typer.Argument(..., help="Study id or name."),
        fmt: Format = typer.Option(Format.json, "--format", help="json, csv or html."),
        table: str = typer.Option("judge-vs-reference", "--table",
                                  help=f"For csv: one of {', '.join(AGREEMENT_TABLES)}."),
        output: Path | None = typer.Option(None, "--output", "-o",
                                           help="Write to this file instead of stdout."),
    ) -> None:
        """Agreement figures of a study: every figure as JSON, one table as CSV, or the
        self-contained HTML study report."""
        problem = stats(engine_factory(), study, fmt, table, output)  # type: ignore[operator]
        if problem is not None:
            typer.echo(f"error: {problem}", err=True)
            raise typer.Exit(1)
