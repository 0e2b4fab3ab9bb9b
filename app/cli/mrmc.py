"""`medbanana mrmc analyse FILE [--json]`: the Obuchowski-Rockette analysis of an MRMC ratings
file, as the Iowa OR-DBM MRMC software reports it; `--algorithm READER` compares one reader
(a standalone algorithm) with the rest, as RJafroc's StCadVsRad does."""

import math
import sys
from pathlib import Path

import typer

from app.mrmc.data import MrmcInputError, read_ratings
from app.mrmc.orh import ONE_READER, Analysis, OrResult, analyse
from app.mrmc.sample_size import READER_COUNTS, Pilot, cases_for_power, cases_for_width, power
from app.mrmc.standalone import versus_panel
from app.strict_json import json_text


def _analysis_lines(a: Analysis) -> list[str]:
    lines = [f"{a.name.upper()}: results apply to {a.generalises}"]
    if a.test is not None:
        kind = "X2" if a.test.ddf is None else "F"
        ddf = "" if a.test.ddf is None else f", {a.test.ddf:.2f}"
        lines.append(f"  {kind}({a.test.ndf:g}{ddf}) = {a.test.statistic:.4f}, p = {a.test.p:.4f}")
    for d in a.differences:
        lines.append(f"  {d.a} - {d.b}: {d.difference:+.5f}, SE {d.se:.5f} ({_df(d.df)}), "
                     f"p = {d.p:.4f}, {_ci(d.ci, 5)}")
    for s in a.single:
        lines.append(f"  {s.modality}: AUC {s.auc:.8f}, SE {s.se:.8f} ({_df(s.df)}), {_ci(s.ci, 8)}")
    return lines


def _df(df: float | None) -> str:
    if df is None:
        return "z"
    # Every reader's AUC the same: Hillis's df has no bound, and t becomes the normal.
    return "df unbounded: z" if math.isinf(df) else f"df {df:.2f}"


def _ci(ci: tuple[float, float], places: int) -> str:
    if math.isnan(ci[0]):
        return "no interval: SE 0, nothing varies"
    return f"95% CI ({ci[0]:.{places}f}, {ci[1]:.{places}f})"


def as_text(result: OrResult) -> str:
    readers = f"{len(result.readers)} reader{'s' if len(result.readers) != 1 else ''}"
    lines = [f"{len(result.modalities)} modalities, {readers}, {result.cases} cases "
             f"({result.normal} non-diseased, {result.abnormal} diseased); trapezoidal AUC, "
             "jackknife covariances (Obuchowski & Rockette 1995; Hillis 2007, 2008)", "",
             "reader AUCs: " + "  ".join(result.modalities)]
    for j, reader in enumerate(result.readers):
        lines.append(f"  {reader:<10}" + "  ".join(f"{result.auc[i, j]:.8f}"
                                                  for i in range(len(result.modalities))))
    c = result.covariances
    if result.one_reader:
        return "\n".join([*lines, "", f"OR: Cov1 {c.cov1:.8f}  Var(Error) {c.var:.8f}", "",
                          f"Readers random (RRRC, RRFC): {ONE_READER}.", "",
                          *_analysis_lines(result.frrc), ""])
    lines += ["", f"OR: Var(R) {result.components['var_r']:.8f}  Var(T*R) {result.components['var_tr']:.8f}  "
              f"Cov1 {c.cov1:.8f}  Cov2 {c.cov2:.8f}  Cov3 {c.cov3:.8f}  Var(Error) {c.var:.8f}",
              "DBM: " + "  ".join(f"{k} {v:.8f}" for k, v in result.dbm.items()), ""]
    for analysis in (result.rrrc, result.frrc, result.rrfc):
        lines += [*_analysis_lines(analysis), ""]
    return "\n".join(lines)


def named(file: Path, error: Exception) -> str:
    """The error with the file it is about: the reader's own errors name it already."""
    text = str(error)
    return text if str(file) in text else f"{file}: {text}"


def register(cli: typer.Typer) -> None:
    mrmc = typer.Typer(help="Multi-reader multi-case analysis of a ratings file.", no_args_is_help=True)
    cli.add_typer(mrmc, name="mrmc")

    @mrmc.command("analyse")
    def analyse_command(
        file: Path = typer.Argument(..., help="CSV (modality, reader, case, truth, rating), or the "
                                    "iMRMC file a real-or-edited study downloads."),
        as_json: bool = typer.Option(False, "--json", help="Print every figure as JSON."),
        algorithm: str | None = typer.Option(
            None, "--algorithm", help="A reader to compare with the others (one modality): the "
            "standalone algorithm against the panel, readers and cases random."),
    ) -> None:
        """Readers and cases random, readers fixed, cases fixed: each reader's AUC, the OR and
        DBM variance components, the F test, every difference and each modality's interval."""
        try:
            data = read_ratings(file)
            if algorithm is not None:
                found = versus_panel(data, algorithm).as_dict()
                print(json_text(found) if as_json else "\n".join(
                    f"{k}: {v}" for k, v in found.items()))
                return
            result = analyse(data)
        except MrmcInputError as error:
            print(f"error: {named(file, error)}", file=sys.stderr)
            raise typer.Exit(2) from None
        print(json_text(result.as_dict()) if as_json else as_text(result))

    @mrmc.command("size")
    def size_command(
        file: Path = typer.Argument(..., help="A pilot study's ratings: CSV (modality, reader, "
                                    "case, truth, rating) with two modalities, or the iMRMC file."),
        effect: float | None = typer.Option(None, "--effect", help="The difference of mean AUCs "
                                            "to detect; default: the pilot's own."),
        target: float = typer.Option(0.8, "--power", min=0.05, max=0.999, help="Power wanted."),
        half_width: float | None = typer.Option(None, "--half-width", min=1e-6, max=1.0,
                                                help="Instead of power: the 95 % half-width wanted."),
        readers: list[int] = typer.Option(list(READER_COUNTS), "--readers", min=2, max=1000,
                                          help="Numbers of readers to tabulate (repeat the option)."),
        cases: int | None = typer.Option(None, "--cases", min=2, max=10_000_000,
                                         help="With one --readers: the power of that many cases."),
        analysis: str = typer.Option("rrrc", "--analysis", help="rrrc, frrc or rrfc."),
        as_json: bool = typer.Option(False, "--json", help="Print the table as JSON."),
    ) -> None:
        """Readers x cases for a pivotal study, from the pilot's OR variance components
        (Hillis, Obuchowski & Berbaum 2011), as RJafroc's SsSampleSizeKGivenJ and
        SsPowerGivenJK: the fewest cases for each number of readers."""
        if analysis not in ("rrrc", "frrc", "rrfc"):
            print(f"error: --analysis {analysis!r}: rrrc, frrc or rrfc", file=sys.stderr)
            raise typer.Exit(2)
        try:
            result = analyse(read_ratings(file))
        except MrmcInputError as error:
            print(f"error: {named(file, error)}", file=sys.stderr)
            raise typer.Exit(2) from None
        if result.one_reader:
            print(f"error: {file}: a sample size needs a pilot of two readers or more (this one "
                  "has one): how readers differ cannot be estimated from one", file=sys.stderr)
            raise typer.Exit(2)
        if len(result.modalities) != 2:
            print(f"error: {file}: a sample size compares two modalities; this file has "
                  f"{len(result.modalities)}", file=sys.stderr)
            raise typer.Exit(2)
        pilot = Pilot.from_or(result)
        if cases is not None and len(readers) != 1:
            print("error: --cases goes with exactly one --readers", file=sys.stderr)
            raise typer.Exit(2)
        try:
            found = [power(pilot, readers[0], cases, effect, analysis)] if cases is not None else [
                cases_for_width(pilot, j, half_width, analysis) if half_width is not None
                else cases_for_power(pilot, j, effect, target, analysis) for j in readers]
        except ValueError as error:  # a pilot with no variance at all
            print(f"error: {file}: {error}", file=sys.stderr)
            raise typer.Exit(2) from None
        rows: list[dict[str, float | None]] = [
            {"readers": j, "cases": got.cases if got else None, "power": got.power if got else None,
             "half_width": got.half_width if got else None}
            for j, got in zip([readers[0]] if cases is not None else readers, found, strict=True)]
        chosen = pilot.effect if effect is None else effect
        if as_json:
            print(json_text({"analysis": analysis, "effect": chosen, "pilot_cases": pilot.k_star,
                             "rows": rows}))
            return
        goal = f"half-width {half_width:g}" if half_width is not None else f"power {target:g}"
        print(f"{analysis.upper()}, effect {chosen:+.5f}, pilot of {pilot.k_star} cases "
              f"(Hillis, Obuchowski & Berbaum 2011); {goal}:")
        for row in rows:
            if row["cases"] is None:
                print(f"  {row['readers']:>4} readers: no number of cases reaches it")
            else:
                print(f"  {row['readers']:>4} readers: {row['cases']:>7} cases "
                      f"(power {row['power']:.4f}, half-width {row['half_width']:.4f})")
