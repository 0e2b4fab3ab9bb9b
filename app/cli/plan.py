"""`medbanana plan`: how many cases a study needs for a chosen interval half-width."""

import typer

from app.strict_json import json_text
from app.studies.planner import PlanError, plan_cases


def register(cli: typer.Typer) -> None:
    @cli.command("plan")
    def plan_command(
        agreement: float = typer.Option(..., "--agreement", help="Expected agreement, e.g. 0.81."),
        half_width: float = typer.Option(..., "--half-width", help="Wanted ± half-width, e.g. 0.05."),
        edits_per_image: float = typer.Option(1.0, "--edits-per-image",
                                              help="Average edits per source image in the sample."),
        icc: float | None = typer.Option(None, "--icc", help="Intraclass correlation within an "
                                         "image; without it each image counts once (conservative)."),
        kappa: float | None = typer.Option(None, "--kappa", help="Expected Cohen's kappa, to plan it too."),
        prevalence: float | None = typer.Option(None, "--prevalence",
                                                help="Share of edits that pass, with --kappa."),
        as_json: bool = typer.Option(False, "--json", help="Print the plan as JSON."),
    ) -> None:
        """Cases needed for agreement (and kappa) within ± the half-width, 95 % interval,
        with the design effect of edits clustered in source images."""
        try:
            plan = plan_cases(agreement, half_width, edits_per_image=edits_per_image, icc=icc,
                              kappa=kappa, prevalence=prevalence)
        except PlanError as error:
            typer.echo(f"error: {error}", err=True)
            raise typer.Exit(1) from None
        if as_json:
            typer.echo(json_text(plan.as_dict()))
            return
        clustering = (f"ICC {plan.icc}" if plan.icc is not None else "each image counted once")
        typer.echo(f"{plan.cases} cases for agreement {plan.agreement} ± {plan.half_width} "
                   f"({plan.independent_cases} if every case were its own source image; design "
                   f"effect {plan.design_effect:.2f} from {plan.edits_per_image} edits per image, "
                   f"{clustering})")
        if plan.kappa_cases is not None:
            typer.echo(f"{plan.kappa_cases} cases for kappa {plan.kappa} ± {plan.half_width} at "
                       f"prevalence {plan.prevalence}")
