"""`medbanana quality`: the whole data set's quality from a study, as a table or as JSON."""

import sys
from enum import StrEnum
from pathlib import Path

import typer
from sqlalchemy.engine import Engine
from sqlmodel import Session

from app.cli.stats import find_study
from app.errors import Invalid
from app.quality.calibration import Calibration, Figure
from app.quality.estimates import Interval
from app.quality.report import ORDER, QualityReport, checked_target, quality_report
from app.strict_json import json_text

NONE = "\N{EN DASH}"  # an empty cell, as the page shows it


class Format(StrEnum):
    text = "text"
    json = "json"


def _interval(i: Interval | None) -> str:
    if i is None:
        return NONE
    return f"{i.value:6.1%} (no interval)" if i.collapsed else f"{i.value:6.1%} [{i.low:.1%}, {i.high:.1%}]"


def _figure(f: Figure | None) -> str:
    if f is None or f.value is None:
        return NONE
    return f"{f.value:.1%}" + ("" if f.low is None else f" [{f.low:.1%}, {f.high:.1%}]")


def _calibration(calibration: Calibration) -> list[str]:
    lines = ["", f"Judge vs readers on {calibration.reads} read edits ({calibration.images} source images)"]
    if calibration.auc is not None and calibration.auc.value is not None:
        low, high = calibration.auc.low, calibration.auc.high
        interval = "" if low is None else f" [{low:.3f}, {high:.3f}]"
        lines.append(f"ROC AUC of the score: {calibration.auc.value:.3f}{interval}")
        lines.append(f"score: {calibration.score_source}")
        for t in calibration.thresholds:
            lines.append(f"  {t.label} {t.threshold:.2f}: sensitivity {_figure(t.sensitivity)}, "
                         f"specificity {_figure(t.specificity)}")
    if calibration.reason:
        lines.append(calibration.reason)
    for q, figures in calibration.questions.items():
        lines.append(f"  {q:<12} sensitivity {_figure(figures['sensitivity']):<24} "
                     f"specificity {_figure(figures['specificity'])}")
    if calibration.failures:
        lines.append("Where the judge fails (disease, direction, round: disagreements of reads):")
        for f in calibration.failures[:5]:
            tags = ", ".join(f"{t} x{n}" for t, n in f.tags) or "no tags"
            lines.append(f"  {f.disease} {f.direction} round {f.round}: {f.disagree} of {f.reads} "
                         f"({f.too_strict} too strict, {f.too_lenient} too lenient; {tags})")
    return lines


def as_text(report: QualityReport, question: str) -> str:
    lines = []
    if report.study:
        lines.append(f"Study {report.study['id']}: {report.study['name']} ({report.study['design']})")
    if report.reason:
        return "\n".join([*lines, report.reason, ""])
    for population in report.populations:
        lines += ["", f"{population.label} ({population.edits:,} edits)",
                  f"{'question':<12}{'judge':>8}  {'corrected (PPI++)':<26}{'readers alone':<26}"
                  f"{'Rogan-Gladen':<26}{'read':>6}{'more':>7}"]
        for q, row in population.parts[0].rows.items():
            judge = NONE if row.judge_rate is None else f"{row.judge_rate:.1%}"
            more = NONE if row.plan is None else str(row.plan.more)
            lines.append(f"{q:<12}{judge:>8}  {_interval(row.ppi):<26}{_interval(row.readers):<26}"
                         f"{_interval(row.rogan_gladen):<26}{row.reads:>6}{more:>7}")
    widest = report.widest(question)
    if widest is not None:
        row = widest.rows[question]
        assert row.plan is not None
        assumed = f" ({row.plan.assumed})" if row.plan.assumed else ""
        lines += ["", f"Widest on {question}: {widest.label}; about {row.plan.more} more edits read "
                      f"for ±{report.target * 100:g} points{assumed}"]
    if report.calibration is not None:
        lines += _calibration(report.calibration)
    lines += [*(f"note: {n}" for n in report.notes), ""]
    return "\n".join(lines)


def quality(engine: Engine, ref: str | None, target: float | None, fmt: Format,
            question: str, output: Path | None) -> str | None:
    """Writes the report (whole or not at all); returns an error message instead on bad input."""
    try:
        goal = checked_target(target)
    except Invalid as error:
        return str(error)
    if question not in ORDER:
        return f"no question {question!r}; questions: {', '.join(ORDER)}"
    with Session(engine) as session:
        study_id = None
        if ref is not None:
            study = find_study(session, ref)
            if study is None:
                return f"no study with id or name {ref!r}"
            study_id = study.id
        report = quality_report(session, study_id, goal)
    text = (json_text(report.as_dict()) + "\n" if fmt is Format.json
            else as_text(report, question))
    if output is None:
        sys.stdout.write(text)
        return None
    partial = output.with_name(output.name + ".partial")
    partial.write_text(text, encoding="utf-8")
    partial.replace(output)
    return None


def register(cli: typer.Typer, engine_factory: object) -> None:
    @cli.command("quality")
    def quality_command(
        study: str | None = typer.Option(
            None, "--study", help="Study id or name (default: the newest that can give one)."),
        target: float | None = typer.Option(
            None, "--target", help="The planner's half-width in points (1-25; default 5)."),
        fmt: Format = typer.Option(Format.text, "--format", help="text or json."),
        question: str = typer.Option("overall", "--question",
                                     help="The question the planner looks at."),
        output: Path | None = typer.Option(None, "--output", "-o",
                                           help="Write to this file instead of stdout."),
    ) -> None:
        """How good the whole data set is: the judge's verdicts on every edit corrected by a
        study's readers (PPI++), beside the readers alone and Rogan-Gladen, with the reads
        the planner asks for."""
        problem = quality(engine_factory(), study, target, fmt, question, output)  # type: ignore[operator]
        if problem is not None:
            typer.echo(f"error: {problem}", err=True)
            raise typer.Exit(1)
