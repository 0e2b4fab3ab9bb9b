"""`medbanana mrmc analyse FILE [--json]`: the Obuchowski-Rockette analysis of an MRMC ratings
file, as the Iowa OR-DBM MRMC software reports it; `--algorithm READER` compares one reader
(a standalone algorithm) with the rest, as RJafroc's StCadVsRad does."""

import json
import sys
from pathlib import Path

import typer

from app.mrmc.data import MrmcInputError, read_ratings
from app.mrmc.orh import Analysis, OrResult, analyse
from app.mrmc.standalone import versus_panel


def _analysis_lines(a: Analysis) -> list[str]:
    lines = [f"{a.name.upper()}: results apply to {a.generalises}"]
    if a.test is not None:
        kind = "X2" if a.test.ddf is None else "F"
        ddf = "" if a.test.ddf is None else f", {a.test.ddf:.2f}"
        lines.append(f"  {kind}({a.test.ndf:g}{ddf}) = {a.test.statistic:.4f}, p = {a.test.p:.4f}")
    for d in a.differences:
        df = "z" if d.df is None else f"df {d.df:.2f}"
        lines.append(f"  {d.a} - {d.b}: {d.difference:+.5f}, SE {d.se:.5f} ({df}), p = {d.p:.4f}, "
                     f"95% CI ({d.ci[0]:.5f}, {d.ci[1]:.5f})")
    for s in a.single:
        df = "z" if s.df is None else f"df {s.df:.2f}"
        lines.append(f"  {s.modality}: AUC {s.auc:.8f}, SE {s.se:.8f} ({df}), "
                     f"95% CI ({s.ci[0]:.8f}, {s.ci[1]:.8f})")
    return lines


def as_text(result: OrResult) -> str:
    lines = [f"{len(result.modalities)} modalities, {len(result.readers)} readers, {result.cases} cases "
             f"({result.normal} non-diseased, {result.abnormal} diseased); trapezoidal AUC, "
             "jackknife covariances (Obuchowski & Rockette 1995; Hillis 2007, 2008)", "",
             "reader AUCs: " + "  ".join(result.modalities)]
    for j, reader in enumerate(result.readers):
        lines.append(f"  {reader:<10}" + "  ".join(f"{result.auc[i, j]:.8f}"
                                                  for i in range(len(result.modalities))))
    c = result.covariances
    lines += ["", f"OR: Var(R) {result.components['var_r']:.8f}  Var(T*R) {result.components['var_tr']:.8f}  "
              f"Cov1 {c.cov1:.8f}  Cov2 {c.cov2:.8f}  Cov3 {c.cov3:.8f}  Var(Error) {c.var:.8f}",
              "DBM: " + "  ".join(f"{k} {v:.8f}" for k, v in result.dbm.items()), ""]
    for analysis in (result.rrrc, result.frrc, result.rrfc):
        lines += [*_analysis_lines(analysis), ""]
    return "\n".join(lines)


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
                print(json.dumps(found, indent=2) if as_json else "\n".join(
                    f"{k}: {v}" for k, v in found.items()))
                return
            result = analyse(data)
        except MrmcInputError as error:
            print(f"error: {error}", file=sys.stderr)
            raise typer.Exit(2) from None
        print(json.dumps(result.as_dict(), indent=2) if as_json else as_text(result))
