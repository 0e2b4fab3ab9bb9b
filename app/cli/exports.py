"""`medbanana export-pairs` and `medbanana export-curated`: training exports as folders
(images, JSON Lines, Parquet, manifest), with a progress bar on a terminal."""

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

import typer
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TimeRemainingColumn

from app.cli.marking import cli_marker
from app.exports import (
    CuratedFilter,
    ExportError,
    ExportSummary,
    PairRule,
    ReadersRule,
    write_curated,
    write_pairs,
)
from app.exports.curated import Layout
from app.models import Direction, Modality

if TYPE_CHECKING:
    from app.dicom.build import Built

console = Console(stderr=True)


def _run(describe: str, work: Callable[[Callable[[int, int], None]], ExportSummary]) -> ExportSummary:
    with Progress("[progress.description]{task.description}", BarColumn(), MofNCompleteColumn(),
                  TimeRemainingColumn(), console=console, disable=not console.is_terminal) as bar:
        progress = bar.add_task(describe, total=None)
        try:
            return work(lambda done, total: bar.update(progress, completed=done, total=total))
        except ExportError as error:
            typer.echo(f"error: {error}", err=True)
            raise typer.Exit(1) from None


def _counts(summary: ExportSummary) -> str:
    return ", ".join(f"{k.replace('_', ' ')} {v:,}" for k, v in summary.counts.items())


def register(cli: typer.Typer, engine_factory: object) -> None:
    @cli.command("export-pairwise")
    def export_pairwise(
        study: str = typer.Argument(..., help="A pairwise study's id or name."),
        target: Path = typer.Argument(..., help="A new folder for the pairs."),
    ) -> None:
        """A pairwise study's human-verified preference pairs (EditReward layout: path_src,
        path1 preferred, path2, tie; both unacceptable kept apart; every reader's vote)."""
        from sqlmodel import Session

        from app.cli.stats import find_study
        from app.designs import write_pairwise
        from app.models import MAX_DB_ID
        from app.studies.models import Design

        engine = engine_factory()  # type: ignore[operator]
        with Session(engine) as session:
            found = (find_study(session, study)
                     if not study.isdigit() or int(study) <= MAX_DB_ID else None)
            if found is None or not Design(found.design).pairs:
                typer.echo(f"error: no pairwise study with id or name {study!r}", err=True)
                raise typer.Exit(1)
            study_id = found.id or 0
        summary = _run("pairs", lambda progress: write_pairwise(engine, study_id, target, cli_marker()))
        typer.echo(f"wrote {summary.rows:,} pairs and {summary.images:,} images to {target} "
                   f"({_counts(summary)})")

    @cli.command("export-pairs")
    def export_pairs(
        target: Path = typer.Argument(..., help="A new folder for the pairs."),
        rule: PairRule = typer.Option(PairRule.flip, help="What a pair the readers overturned becomes."),
        modality: list[Modality] = typer.Option([], help="Only these modalities (repeatable)."),
        direction: list[Direction] = typer.Option([], help="Only additions or removals."),
        disease: list[str] = typer.Option([], help="Only these diseases (repeatable)."),
        link: bool = typer.Option(False, help="Hard-link the originals instead of copying them "
                                                "(edits are written marked)."),
    ) -> None:
        """Preference pairs: each task's accepted edit against each failed round of its run
        (EditReward layout: path_src, path1 preferred, path2, tie)."""
        from app.cases.filters import CaseFilter

        engine = engine_factory()  # type: ignore[operator]
        chosen = CaseFilter(modality=tuple(m.value for m in modality),
                            direction=tuple(d.value for d in direction), disease=tuple(disease))
        marker = cli_marker()
        summary = _run("pairs", lambda progress: write_pairs(
            engine, target, marker, rule=rule, case_filter=chosen, link=link, on_progress=progress))
        typer.echo(f"wrote {summary.rows:,} pairs and {summary.images:,} images to {target} "
                   f"({_counts(summary)})")

    @cli.command("export-curated")
    def export_curated(
        target: Path = typer.Argument(..., help="A new folder for the subset."),
        readers: ReadersRule = typer.Option(ReadersRule.not_rejected,
                                            help="Use of the readers' consensus where they read an edit."),
        ssim_outside_min: float | None = typer.Option(None, help="Least SSIM outside the change (0 to 1)."),
        changed_max: float | None = typer.Option(None, help="Most of the image changed, in percent."),
        psnr_min: float | None = typer.Option(None, help="Least PSNR against the original, in dB."),
        modality: list[Modality] = typer.Option([], help="Only these modalities (repeatable)."),
        direction: list[Direction] = typer.Option([], help="Only additions or removals."),
        disease: list[str] = typer.Option([], help="Only these diseases (repeatable)."),
        layout: Layout = typer.Option(Layout.parquet,
                                      help="parquet (with JSON Lines) or the scripts' layout."),
        link: bool = typer.Option(False, help="Hard-link the originals instead of copying them "
                                                "(edits are written marked)."),
    ) -> None:
        """Accepted edits filtered by the readers and the preservation metrics, with a manifest
        stating the filter, the counts and the subset's estimated quality."""
        engine = engine_factory()  # type: ignore[operator]
        chosen = CuratedFilter(modality=tuple(m.value for m in modality),
                               direction=tuple(d.value for d in direction), disease=tuple(disease),
                               readers=readers, ssim_outside_min=ssim_outside_min,
                               changed_max=changed_max, psnr_min=psnr_min)
        marker = cli_marker()
        summary = _run("curated", lambda progress: write_curated(
            engine, target, chosen, marker, layout=layout, link=link, on_progress=progress))
        typer.echo(f"wrote {summary.rows:,} edits to {target} ({_counts(summary)})")


def register_dicom(cli: typer.Typer, engine_factory: object) -> None:
    @cli.command("export-dicom")
    def export_dicom(
        target: Path = typer.Argument(..., help="A new folder for the DICOM files."),
        study: int | None = typer.Option(None, help="The edits a study's readers read."),
        modality: Modality | None = typer.Option(None, help="Every round of one modality's tasks."),
        task: list[int] = typer.Option([], help="Every round of these tasks (repeatable)."),
    ) -> None:
        """The originals and their edits as DICOM Part 10 files: Secondary Capture with
        Synthetic Data YES on every edit and NO on every original, and a Structured Report of
        the judge's verdict and the readers' consensus per edit."""
        from app.dicom.export import write_dicom
        from app.dicom.selection import DicomSelection
        from app.dicom.uids import Uids
        from app.errors import Invalid, NotFound
        from app.settings import get_settings

        engine = engine_factory()  # type: ignore[operator]
        chosen = DicomSelection(study_id=study, modality=modality.value if modality else None,
                                task_ids=tuple(task))
        uids = Uids(get_settings().dicom_uid_root)
        try:
            built = _run("DICOM", lambda progress: _as_summary(target, write_dicom(
                engine, target, chosen, uids, on_progress=progress)))
        except (Invalid, NotFound) as error:
            typer.echo(f"error: {error}", err=True)
            raise typer.Exit(1) from None
        typer.echo(f"wrote {built.counts['originals']:,} originals, {built.counts['edits']:,} edits "
                   f"and {built.counts['reports']:,} reports to {target}"
                   + (f"; {built.counts['left_out']:,} images left out, named in "
                      f"{target / 'manifest.json'}" if built.counts["left_out"] else ""))


def _as_summary(target: Path, built: "Built") -> ExportSummary:
    return ExportSummary(target, built.edits, built.originals + built.edits, {
        "originals": built.originals, "edits": built.edits, "reports": built.reports,
        "left_out": len(built.left_out)})


def register_check_mark(cli: typer.Typer) -> None:
    @cli.command("check-mark")
    def check_mark(files: list[Path] = typer.Argument(..., help="Image files to read.")) -> None:
        """Read each file's C2PA manifest: whether it is valid, who signed it (and whether the
        certificate is a server's own, self-signed), and its digital source type. Exit 1 when
        any file has none or an invalid one."""
        from app.provenance.marks import UnmarkableImage, read_mark

        failed = False
        for path in files:
            try:
                reading = read_mark(path.read_bytes())
            except (OSError, UnmarkableImage) as error:
                typer.echo(f"{path}: {getattr(error, 'strerror', None) or error}")
                failed = True
                continue
            if reading is None or reading.state == "Invalid":
                failed = True
            typer.echo(f"{path}: {reading.describe() if reading else 'no C2PA manifest'}")
        if failed:
            raise typer.Exit(1)
