"""`medbanana judges`: candidate judges, scored on a reference (a locked study's, or a
sentinel set drawn from several), the leaderboard as a table or as JSON, and drift checks."""

import sys
from pathlib import Path

import typer
from rich.console import Console
from sqlalchemy.engine import Engine
from sqlmodel import Session, col, select

from app.cli.pipeline import run_here
from app.cli.stats import find_study
from app.errors import DomainError, Invalid, NotFound
from app.jobs import claim, start_drift_check, start_scoring
from app.judges.board import leaderboard
from app.judges.candidates import CandidatePlan, candidates, create_candidate, get_candidate
from app.judges.leaderboard import Board, Figure, Row
from app.judges.models import SentinelSet
from app.judges.reference import Ref, SentinelPlan, create_sentinel, sentinel_sizes
from app.judges.schedule import set_schedule, stop_schedule
from app.judges.scoring import cost_lines, judge_for, plan
from app.models import MAX_DB_ID
from app.settings import get_settings
from app.strict_json import json_text

NONE = "\N{EN DASH}"
STUDY_HELP = "A locked study's id or name."
SENTINEL_HELP = "A sentinel set's id or name (instead of --study)."


def find_ref(session: Session, study: str | None, sentinel: str | None) -> Ref:
    """The reference the options name; DomainError naming what is wrong."""
    if (study is None) == (sentinel is None):
        raise Invalid("name one reference: --study for a locked study, or --sentinel for a "
                      "sentinel set", "study")
    if study is not None:
        found = find_study(session, study) if not study.isdigit() or int(study) <= MAX_DB_ID else None
        if found is None:
            raise NotFound(f"no study with id or name {study!r}")
        return Ref("study", found.id or 0)
    assert sentinel is not None
    chosen = (session.get(SentinelSet, int(sentinel))
              if sentinel.isdigit() and int(sentinel) <= MAX_DB_ID else None)
    chosen = chosen or session.scalars(select(SentinelSet).where(
        col(SentinelSet.name) == sentinel)).first()
    if chosen is None:
        raise NotFound(f"no sentinel set with id or name {sentinel!r}")
    return Ref("sentinel", chosen.id or 0)


def _figure(f: Figure | None, style: str = "share") -> str:
    """A figure and its interval: a share in %, a difference in points, or a plain number."""
    if f is None or f.value is None:
        return NONE

    def one(x: float) -> str:
        if style == "points":
            return f"{x * 100:+.1f}"
        return f"{x:.1%}" if style == "share" else f"{x:.2f}"

    unit = " pts" if style == "points" else ""
    if f.low is None or f.high is None:
        return f"{one(f.value)}{unit} (no interval)"
    return f"{one(f.value)}{unit} [{one(f.low)}, {one(f.high)}]"


def board_text(board: Board) -> str:
    # names are shown whole: two candidates often differ only in their last characters
    width = max([len("judge"), *(len(r.name) for r in board.rows)]) + 2
    lines = [f"{board.question}: judges by agreement with the readers' reference "
             f"(95 % cluster-bootstrap intervals over source images)",
             f"{'judge':<{width}}{'n':>5}  {'agreement':<24}{'kappa':<24}{'too strict':<24}"
             f"{'too lenient':<24}{'vs record':<26}{'Holm p':>8}"]
    for row in board.rows:
        paired = row.paired
        vs = NONE if paired is None else _figure(paired.difference, "points")
        holm = NONE if paired is None or paired.holm_p is None else f"{paired.holm_p:.3g}"
        lines.append(f"{row.name:<{width}}{row.n:>5}  {_figure(row.figures['agreement']):<24}"
                     f"{_figure(row.figures['kappa'], 'number'):<24}"
                     f"{_figure(row.figures['a_stricter']):<24}"
                     f"{_figure(row.figures['a_more_lenient']):<24}{vs:<26}{holm:>8}")
    letters = board.letters()
    lines.append("ranks, where paired intervals support them: " + board.ranks_line())
    lines.append("groups (judges sharing a letter are not shown to differ): " + ", ".join(
        f"{name} {letters[name]}" for name in letters))
    for row in board.rows:
        extra = _extras(row)
        if extra:
            lines.append(f"  {row.name}: {extra}")
    return "\n".join(lines) + "\n"


def _extras(row: Row) -> str:
    bits = []
    if row.unanswered:
        bits.append(f"{row.unanswered} edits without a readable answer, left out")
    if row.auc is not None:
        bits.append(f"AUC of its score {_figure(row.auc, 'number')}")
    if row.consistency is not None:
        bits.append(f"self-consistency {_figure(row.consistency)}")
    if row.order is not None:
        chance = ("chance level unknown (one repeat)" if row.chance_flips is None
                  else f"chance level {_figure(row.chance_flips)}")
        bits.append(f"verdicts that flip with the images' order {_figure(row.order.flipped)} "
                    f"({chance}), pass rate change {_figure(row.order.pass_rate_change, 'points')}")
    if row.panel:
        bits.append("a panel: its Holm p is adjusted among the panels")
    return "; ".join(bits)


def board_json(boards: dict[str, Board]) -> str:
    def row(r: Row) -> dict[str, object]:
        return {"name": r.name, "n": r.n, "unanswered": r.unanswered,
                **{k: f.as_dict() for k, f in r.figures.items()},
                "auc": r.auc.as_dict() if r.auc else None,
                "self_consistency": r.consistency.as_dict() if r.consistency else None,
                "vs_record": None if r.paired is None else {
                    "difference": r.paired.difference.as_dict(),
                    "only_candidate_right": r.paired.only_candidate_right,
                    "only_record_right": r.paired.only_record_right,
                    "mcnemar_clustered_p": r.paired.mcnemar_clustered_p,
                    "holm_p": r.paired.holm_p},
                "panel": r.panel,
                "order_bias": None if r.order is None else {
                    "flipped": r.order.flipped.as_dict(),
                    "chance_level": r.chance_flips.as_dict() if r.chance_flips else None,
                    "pass_rate_change": r.order.pass_rate_change.as_dict()},
                "ranked_above": list(r.above)}
    return json_text({q: {"rows": [row(r) for r in b.rows], "letters": b.letters(),
                          "separated": [list(p) for p in b.separations()],
                          "ranks": b.ranks_line()}
                      for q, b in boards.items()}) + "\n"


def register(cli: typer.Typer, engine_factory: object) -> None:
    judges = typer.Typer(help="Candidate judges scored against the readers of a locked study.",
                         no_args_is_help=True)
    cli.add_typer(judges, name="judges")

    def engine() -> Engine:
        return engine_factory()  # type: ignore[operator]

    def fail(message: str) -> None:
        typer.echo(f"error: {message}", err=True)
        raise typer.Exit(1)

    @judges.command("add")
    def add(
        name: str = typer.Argument(..., help="A name for the candidate."),
        template: Path = typer.Option(..., "--template", exists=True, dir_okay=False,
                                      help="The prompt template (Jinja), e.g. a copy of prompts/judge.j2."),
        backend: str = typer.Option("offline", "--backend", help="offline or gemini."),
        model: str = typer.Option("offline-heuristic-1", "--model", help="The model's API name."),
        repeats: int = typer.Option(1, "--repeats", help="Answers per edit (1-5), for self-consistency."),
        thinking_budget: int | None = typer.Option(None, "--thinking-budget"),
        temperature: float | None = typer.Option(None, "--temperature"),
        bias: str | None = typer.Option(None, "--bias", help="Offline only: lenient, strict, "
                                                             "order_biased or noisy."),
    ) -> None:
        """Keep a candidate judge; its template is checked before anything is stored."""
        try:
            text = template.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as error:
            fail(f"{template}: {error}")
            return
        try:
            with Session(engine()) as session:
                made = create_candidate(session, CandidatePlan(
                    name=name, backend=backend, model=model, template=text, repeats=repeats,
                    thinking_budget=thinking_budget, temperature=temperature, bias=bias), None)
        except DomainError as error:
            fail(f"{template}: {error}" if getattr(error, "field", None) == "template" else str(error))
            return
        typer.echo(f"candidate {made.id}: {made.name} (version {made.version})")

    @judges.command("list")
    def list_command() -> None:
        """The candidates, with what each runs."""
        with Session(engine()) as session:
            for c in candidates(session):
                extra = f", {c.bias}" if c.bias else ""
                typer.echo(f"{c.id:>4}  {c.name:<30} {c.backend}/{c.model}{extra}, "
                           f"{c.repeats} repeat(s), version {c.version}")

    @judges.command("score")
    def score_command(
        candidate: int = typer.Argument(..., min=1, max=MAX_DB_ID, help="The candidate's id."),
        study: str | None = typer.Option(None, "--study", help=STUDY_HELP),
        sentinel: str | None = typer.Option(None, "--sentinel", help=SENTINEL_HELP),
        mode: str = typer.Option("interactive", "--mode",
                                 help="interactive (here, now) or batch (a job for the worker, "
                                      "through Gemini's Batch API at half the price)."),
        yes: bool = typer.Option(False, "--yes", help="Start without asking after the estimate."),
    ) -> None:
        """Ask the candidate for every answer it has not given on the reference's edits (each
        repeat, and once with the original first), after showing what that costs."""
        console = Console(stderr=True)
        db = engine()
        if mode not in ("interactive", "batch"):
            fail(f"--mode is interactive or batch, not {mode!r}")
        try:
            with Session(db) as session:
                ref = find_ref(session, study, sentinel)
                chosen = get_candidate(session, candidate)
                todo = plan(session, chosen, ref)
                for line in cost_lines(chosen, todo):
                    console.print(line, markup=False, highlight=False)
                judge_for(chosen, get_settings())  # no key: refused before the question
        except DomainError as error:
            fail(str(error))
            return
        if not todo:
            typer.echo("nothing left to ask: every answer is stored")
            return
        if not yes and not typer.confirm(f"Ask for {len(todo):,} answers"
                                         f"{' through the Batch API' if mode == 'batch' else ''}?"):
            raise typer.Exit(1)
        if mode == "batch":
            try:
                job_id = start_scoring(db, chosen.id or 0, ref, get_settings(), mode="batch")
            except DomainError as error:
                fail(str(error))
                return
            typer.echo(f"job {job_id} queued: a worker (medbanana pipeline worker, or the web "
                       "app's) submits the batch and stores the answers as they come")
            return
        # A job run here, not a loop of its own: it keeps to the model's quota with every
        # other job and worker, records its calls, and can be cancelled from the jobs page.
        try:
            job_id = start_scoring(db, chosen.id or 0, ref, get_settings())
        except DomainError as error:
            fail(str(error))
            return
        lease = claim(db, job_id)
        if lease is None:
            typer.echo(f"job {job_id} queued: a worker took it first (follow it at /jobs/{job_id})")
            return
        status = run_here(db, lease)
        with Session(db) as session:
            left = len(plan(session, chosen, ref))
        typer.echo(f"job {job_id} {status}: {len(todo) - left:,} of {len(todo):,} answers stored; "
                   f"{left:,} without a usable answer (a failed one is stored with its error, "
                   "left out of the figures, and asked again by the next scoring)")

    @judges.command("sentinel")
    def sentinel_command(
        name: str = typer.Argument(..., help="A name for the sentinel set."),
        study: list[str] = typer.Option(..., "--study", help="A locked study's id or name; "
                                                             "give two or more."),
        per_study: int | None = typer.Option(None, "--per-study", min=1, max=100_000,
                                             help="Edits drawn from each study (default: all)."),
        seed: int = typer.Option(0, "--seed", min=0, max=999_999_999),
    ) -> None:
        """Draw a sentinel set: a seeded sample of the settled edits of several locked
        studies, kept as drawn, to score candidates and check drift on."""
        try:
            with Session(engine()) as session:
                ids = [find_ref(session, s, None).id for s in study]
                made = create_sentinel(session, SentinelPlan(name, ids, per_study, seed), None)
                size = sentinel_sizes(session).get(made.id or 0, (0, 0))[0]
        except DomainError as error:
            fail(str(error))
            return
        typer.echo(f"sentinel set {made.id}: {made.name}, {size} edits from {len(set(ids))} studies")

    @judges.command("drift")
    def drift_command(
        study: str | None = typer.Option(None, "--study", help=STUDY_HELP),
        sentinel: str | None = typer.Option(None, "--sentinel", help=SENTINEL_HELP),
        every: int | None = typer.Option(None, "--every", min=1, max=8760,
                                         help="Check on a schedule, every so many hours."),
        stop: bool = typer.Option(False, "--stop", help="Stop the reference's schedule."),
    ) -> None:
        """Ask the judge of record again on the reference now (a job for the worker), or on a
        schedule (--every HOURS), or stop its schedule (--stop)."""
        db = engine()
        try:
            with Session(db) as session:
                ref = find_ref(session, study, sentinel)
                if stop:
                    stop_schedule(session, ref)
                    typer.echo(f"no more scheduled checks on {ref.query}")
                    return
                if every is not None:
                    made = set_schedule(session, ref, every, None)
                    typer.echo(f"checked every {every} hours by the worker; the first at "
                               f"{made.next_at:%Y-%m-%d %H:%M} UTC")
                    return
            job_id = start_drift_check(db, ref, get_settings(), None)
        except DomainError as error:
            fail(str(error))
            return
        typer.echo(f"job {job_id} queued: the judge of record asked again on {ref.query}")

    @judges.command("leaderboard")
    def leaderboard_command(
        study: str | None = typer.Option(None, "--study", help=STUDY_HELP),
        sentinel: str | None = typer.Option(None, "--sentinel", help=SENTINEL_HELP),
        question: str = typer.Option("overall", "--question",
                                     help="compliance, structure, realism, fidelity or overall."),
        as_json: bool = typer.Option(False, "--json", help="Every question, as JSON."),
        output: Path | None = typer.Option(None, "--output", "-o",
                                           help="Write to this file instead of stdout."),
    ) -> None:
        """The judge of record and every scored candidate against the reference."""
        try:
            with Session(engine()) as session:
                boards = leaderboard(session, find_ref(session, study, sentinel))
        except DomainError as error:
            fail(str(error))
            return
        if question not in boards:
            fail(f"no question {question!r}; questions: {', '.join(boards)}")
            return
        text = board_json(boards) if as_json else board_text(boards[question])
        if output is None:
            sys.stdout.write(text)
            return
        partial = output.with_name(output.name + ".partial")
        partial.write_text(text, encoding="utf-8")
        partial.replace(output)
