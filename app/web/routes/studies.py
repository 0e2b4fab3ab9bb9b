"""Admins: create studies from a case filter, follow each reader's progress, lock."""

import json
import math
from typing import Annotated, Any

from fastapi import APIRouter, Depends, Form, Query, Request
from fastapi.responses import HTMLResponse, RedirectResponse, Response, StreamingResponse
from starlette.datastructures import FormData

from app.accounts.users import describe_user, reader_accounts
from app.agreement.facts import recorded_selection
from app.agreement.reads import require_rubric
from app.agreement.service import observed_in_finished, watch_for, watch_plot
from app.background import run_in_background
from app.cases.filters import CaseFilter, recorded_criteria
from app.designs import design_of, iter_long_csv, latest_steer, planned_budget, recorded_budget
from app.errors import Invalid
from app.readers.checks import reader_checks
from app.readers.detectable import outlook
from app.readers.qualification import standing
from app.readers.settled import settle_from
from app.studies.adjudication import adjudicator_of
from app.studies.allocation_outlook import allocation_outlook, default_counts
from app.studies.design import MAX_CASES, StudyError, StudyPlan, plan_apart
from app.studies.design_traits import default_design, designs
from app.studies.draw_plan import scope_of
from app.studies.forms import (
    COUNT_PREFIX,
    ReadingSetupForm,
    StudyForm,
    plan_from_form,
    planned_from_form,
    strata_counts,
)
from app.studies.known_answers import DEFAULT_SHARE, planned_known, pool_size
from app.studies.models import Design, Study, StudyStatus
from app.studies.planner import PlanError, plan_cases, sample_edits_per_image
from app.studies.pool import check_facets, practice_left_out
from app.studies.practice import practice_studies, requirement_of
from app.studies.previews import preparation, warm_previews
from app.studies.reading_setup import change_reading_setup, started
from app.studies.targets import PLANNED_AGREEMENT, PLANNED_HALF_WIDTH, units_to_meet
from app.studies.versions import lock_study
from app.studies.viewer_tools import VIEWER_TOOLS, tools_of
from app.studies.worklist import all_studies, get_study, study_progress, study_reader
from app.web.deps import CaseFilterDep, IdPath, SessionDep, SettingsDep
from app.web.forms import posted_form, read_form
from app.web.security import AdminUser
from app.web.templating import csv_download, redirect, render

router = APIRouter(include_in_schema=False)


@router.get("/studies", response_class=HTMLResponse)
def studies_page(request: Request, session: SessionDep) -> HTMLResponse:
    return render(request, "studies/list.html", {"studies": all_studies(session)})


def _design_args(design: Design, facets: list[str] | None) -> tuple[Design, tuple[str, ...]]:
    return design, tuple(facets) if facets is not None else design.default_facets


def _strata_context(session: SessionDep, case_filter: CaseFilter, design: Design,
                    facets: tuple[str, ...], counts: dict[str, int] | None) -> dict[str, Any]:
    problem = check_facets(design, facets)
    drafted = StudyPlan(name="", case_filter=case_filter, reader_ids=[], design=design,
                        strata_facets=facets)
    rows, sizes = ([], []) if problem else design_of(design).strata(session, drafted)
    # A pairwise form counts its own pools (app/designs/pairwise/study.py).
    left_out = 0 if problem or design.pairs else practice_left_out(session, case_filter, design,
                                                    plan_apart(session, drafted))
    counts = counts if counts is not None else default_counts(design.traits, rows)
    planned = sum(counts.values()) or 100
    return {"filter": case_filter, "design": design, "facets": facets,
            "facet_choices": design_of(design).facet_choices,
            # A pairwise study draws pairs, on a form of its own.
            "designs": {k: k.traits.words for k in designs() if not k.pairs},
            "rows": rows, "counts": counts, "planned_cases": planned,
            "practice_left_out": left_out,
            "pool_edits_per_image": sum(sizes) / len(sizes) if sizes else 1.0,
            "edits_per_image": sample_edits_per_image(sizes, planned), "strata_problem": problem,
            "allocation": allocation_outlook(design.traits, rows, counts)}


def _form_context(session: SessionDep, case_filter: CaseFilter, design: Design,
                  facets: tuple[str, ...], form: dict[str, Any], errors: dict[str, str],
                  counts: dict[str, int] | None = None) -> dict[str, Any]:
    return {"filter": case_filter, "readers": reader_accounts(session),
            "known_pool": pool_size(session), "practices": practice_studies(session),
            "observed": observed_in_finished(session),
            "errors": errors, "form": form, "prefix": COUNT_PREFIX, "viewer_tools": VIEWER_TOOLS,
            **_strata_context(session, case_filter, design, facets, counts)}


DesignQuery = Annotated[Design, Query()]
DEFAULT_DESIGN = default_design()
FacetsQuery = Annotated[list[str] | None, Query(max_length=8)]


@router.get("/studies/new", response_class=HTMLResponse)
def new_study_form(request: Request, session: SessionDep, case_filter: CaseFilterDep,
                   design: DesignQuery = DEFAULT_DESIGN, facets: FacetsQuery = None) -> Response:
    if design.pairs:  # its pairs are chosen on a form of its own
        return redirect(request, "/studies/new/pairwise")
    design, chosen = _design_args(design, facets)
    form = {"seed": 42, "blinded": True, "primary_question": "overall",
            "plan_agreement": f"{PLANNED_AGREEMENT:g}", "plan_half_width": f"{PLANNED_HALF_WIDTH:g}",
            "viewer_tools": list(VIEWER_TOOLS),
            # The default share, when there are settled cases to draw it from.
            "known_share": round(DEFAULT_SHARE * 100)
            if design.takes_known_answers and pool_size(session) else 0}
    return render(request, "studies/new.html",
                  _form_context(session, case_filter, design, chosen, form, {}))


@router.get("/studies/new/strata", response_class=HTMLResponse)
def strata_fragment(request: Request, session: SessionDep, case_filter: CaseFilterDep,
                    design: DesignQuery = DEFAULT_DESIGN, facets: FacetsQuery = None) -> HTMLResponse:
    """The strata table with each stratum's pool, for the design and facets chosen."""
    design, chosen = _design_args(design, facets)
    context = {"prefix": COUNT_PREFIX, **_strata_context(session, case_filter, design, chosen, None)}
    return render(request, "studies/_strata.html", context)


@router.get("/studies/new/allocation", response_class=HTMLResponse)
def allocation_fragment(request: Request, session: SessionDep, case_filter: CaseFilterDep,
                        design: DesignQuery = DEFAULT_DESIGN,
                        facets: FacetsQuery = None) -> HTMLResponse:
    """What the counts typed estimate, and what they cost against a proportional allocation,
    as the form is filled in."""
    design, chosen = _design_args(design, facets)
    counts = {k[len(COUNT_PREFIX):]: _whole(v) or 0 for k, v in request.query_params.multi_items()
              if k.startswith(COUNT_PREFIX)}
    context = _strata_context(session, case_filter, design, chosen, dict(list(counts.items())[:1000]))
    return render(request, "studies/_allocation.html", context)


@router.get("/studies/new/budget", response_class=HTMLResponse)
def budget_fragment(request: Request, session: SessionDep, case_filter: CaseFilterDep,
                    design: DesignQuery = DEFAULT_DESIGN,
                    total: Annotated[str, Query(max_length=12)] = "",
                    readers: Annotated[list[int] | None, Query(max_length=1000)] = None,
                    readers_per_case: Annotated[str, Query(max_length=12)] = "",
                    target_agreement: Annotated[str, Query(max_length=20)] = "",
                    target_too_strict: Annotated[str, Query(max_length=20)] = "",
                    target_too_lenient: Annotated[str, Query(max_length=20)] = "",
                    plan_agreement: Annotated[str, Query(max_length=20)] = "") -> HTMLResponse:
    """An adaptive study's budget of draws in reads, and the draws its targets are expected to
    need, as the form is filled in; nothing for the other designs (their cases are counted in
    their strata)."""
    draws, per_case = _whole(total), _whole(readers_per_case)
    context: dict[str, Any] = {"budget": None, "problem": None, "needed": None}
    if design.draws_in_batches:
        if draws is None:
            context["problem"] = "Give the most edits to draw to see the reads it implies."
        else:
            context["budget"] = planned_budget(session, case_filter, draws, len(set(readers or [])),
                                               per_case)
            if context["budget"] is None:
                context["problem"] = "No judged edits match the filter."
        typed = {"agreement": target_agreement, "too_strict": target_too_strict,
                 "too_lenient": target_too_lenient}
        targets = {k: v for k, text in typed.items() if (v := _fraction(text)) is not None}
        # Worked out up to twice the budget (cheap, and all the form needs to say).
        context["most"] = most = 2 * min(draws or 1000, 5000)
        context["needed"] = units_to_meet(targets, anticipated_agreement=_fraction(plan_agreement),
                                          most=most)
    return render(request, "studies/_budget.html", context)


@router.get("/studies/new/known-outlook", response_class=HTMLResponse)
def known_outlook_fragment(request: Request,
                           known_share: Annotated[str, Query(max_length=12)] = "",
                           total: Annotated[str, Query(max_length=12)] = "",
                           readers: Annotated[list[int] | None, Query(max_length=1000)] = None,
                           readers_per_case: Annotated[str, Query(max_length=12)] = "",
                           repeat_fraction: Annotated[str, Query(max_length=12)] = "") -> HTMLResponse:
    """How many known-answer cases each reader would get, and what the pause can see with
    them, as the form is filled in."""
    share = _number(known_share)
    counts = [_whole(v) or 0 for k, v in request.query_params.multi_items()
              if k.startswith(COUNT_PREFIX)][:1000]
    cases = min(sum(counts) or _whole(total) or 0, MAX_CASES)
    chosen = len(set(readers or []))
    context: dict[str, Any] = {"share": share, "cases": cases, "readers": chosen, "outlook": None}
    if share is not None and 0 < share <= 50 and cases and chosen:
        repeats = _number(repeat_fraction) or 0.0
        known = planned_known(share / 100, cases, chosen, _whole(readers_per_case),
                              min(max(repeats, 0.0), 0.5))
        context["outlook"] = outlook(known, chosen)
    return render(request, "studies/_known_outlook.html", context)


def _number(text: str) -> float | None:
    try:
        value = float(text)
    except ValueError:
        return None
    return value if math.isfinite(value) else None


def _fraction(text: str) -> float | None:
    """A number strictly between 0 and 1 as typed, or None (the form's own check names it)."""
    try:
        value = float(text)
    except ValueError:
        return None
    return value if 0 < value < 1 else None


def _whole(text: str) -> int | None:
    """A positive whole number as typed, or None (the form's own check names the field).
    Nine digits at most: a count past that is no count, and thousands of digits are past
    what Python turns into a number at all."""
    text = text.strip()
    return int(text) if text.isdigit() and len(text) <= 9 and int(text) > 0 else None


@router.get("/studies/new/plan", response_class=HTMLResponse)
def plan_fragment(
    request: Request,
    plan_agreement: Annotated[float, Query(allow_inf_nan=False)],
    plan_half_width: Annotated[float, Query(allow_inf_nan=False)],
    plan_edits_per_image: Annotated[float, Query(allow_inf_nan=False)] = 1.0,
    plan_icc: Annotated[str, Query(max_length=20)] = "",
    plan_kappa: Annotated[str, Query(max_length=20)] = "",
    plan_prevalence: Annotated[str, Query(max_length=20)] = "",
) -> HTMLResponse:
    """How many cases the chosen precision needs; impossible values are a 422 with the reason."""
    try:
        plan = plan_cases(plan_agreement, plan_half_width, edits_per_image=plan_edits_per_image,
                          icc=_optional(plan_icc, "ICC"), kappa=_optional(plan_kappa, "kappa"),
                          prevalence=_optional(plan_prevalence, "prevalence"))
    except PlanError as error:
        response = render(request, "studies/_plan.html",
                          {"plan": None, "error": str(error), "field": error.field},
                          status_code=422)
        response.headers["HX-Reswap"] = "innerHTML"  # show the reason where the answer goes
        return response
    return render(request, "studies/_plan.html", {"plan": plan, "error": None})


def _optional(text: str, what: str) -> float | None:
    if not text.strip():
        return None
    try:
        return float(text)
    except ValueError:
        raise PlanError(f"the {what} must be a number, not {text!r}",
                        f"plan_{what.lower()}") from None


@router.post("/studies", response_class=HTMLResponse)
def create_study_route(
    request: Request, session: SessionDep, admin: AdminUser, case_filter: CaseFilterDep,
    settings: SettingsDep,
    posted_fields: Annotated[FormData, Depends(posted_form)],
) -> Response:
    posted = read_form(posted_fields, StudyForm)
    extra = {k: v for k, v in posted_fields.multi_items()
             if isinstance(v, str) and k.startswith((COUNT_PREFIX, "plan_"))}
    counts = None
    form = posted.value
    if form is not None:
        try:
            counts = strata_counts(extra)
            plan = plan_from_form(form, case_filter, counts, planned_from_form(extra))
            study = design_of(plan.design).create(session, plan, admin)
        except StudyError as error:
            session.rollback()
            posted = posted.refused(error)
    if posted.value is None or posted.errors:
        shown = form.as_shown(extra) if form else StudyForm.shown_as_typed(posted.fields, extra)
        design = form.design if form else _design_as_typed(posted.fields.get("design"))
        facets = tuple(form.facets) if form else ()
        context = _form_context(session, case_filter, design, facets, shown, posted.errors, counts)
        return render(request, "studies/new.html", context, status_code=422)
    # Readers wait until every image is drawn; the drawing runs in a thread of its own.
    assert study.id is not None
    run_in_background(("prepare", study.id), warm_previews, request.app.state.engine,
                      study.id, settings.resolved_cache_dir())
    return redirect(request, f"/studies/{study.id}")


def _design_as_typed(value: object) -> Design:
    return Design(value) if isinstance(value, str) and value in set(Design) else default_design()


def _study_context(session: SessionDep, study: Study) -> dict[str, Any]:
    progress = study_progress(session, study)
    in_study = {r.id for r, _ in progress}
    selection = recorded_selection(study)
    design = design_of(study)
    watched = watch_for(session, study)
    context = {"study": study, "progress": progress, "selection": selection,
               "kind": Design(study.design), "figures": design.figures, "exports": design.exports,
               "tools_allowed": design.tools,
               "preparing": preparation(session, study), "watch": watched,
               "watch_plot": watch_plot(watched) if watched else None,
               "design": selection.design.traits.words.as_dict(),
               "criteria": recorded_criteria(selection.filter),
               "adjudicator": adjudicator_of(session, study),
               "candidates": [r for r in reader_accounts(session) if r.id not in in_study],
               "viewer_tools": VIEWER_TOOLS, "tools": [t for t in VIEWER_TOOLS if t in tools_of(study)],
               "setup_open": study.status == StudyStatus.open and not started(session, study),
               "setup": {"instructions": study.instructions, "viewer_tools": tools_of(study)},
               "setup_errors": {}, "checks": reader_checks(session, study),
               "known_answers": json.loads(study.selection).get("known_answers"),
               "practice_left_out": json.loads(study.selection).get("practice_left_out", 0),
               "requirement": requirement_of(study),
               "standings": {r.id: standing(session, requirement, r.id or 0)
                             for r, _ in progress} if (requirement := requirement_of(study)) else {},
               "budget": recorded_budget(selection.budget, len(progress), study.readers_per_case),
               "scope": scope_of(study), "steer": latest_steer(session, study)}
    return context


@router.get("/studies/{study_id}", response_class=HTMLResponse)
def study_page(request: Request, session: SessionDep, study_id: IdPath,
               saved: Annotated[str, Query(max_length=40)] = "") -> HTMLResponse:
    """``saved`` names what a form just saved ("setup", "reader-7"), to confirm it there."""
    context = _study_context(session, get_study(session, study_id)) | {
        "saved": saved, "dicomweb": request.app.state.settings.dicomweb_url}
    return render(request, "studies/detail.html", context, partial="studies/_progress.html")


@router.post("/studies/{study_id}/setup", response_class=HTMLResponse)
def change_setup(request: Request, session: SessionDep, study_id: IdPath,
                 form: Annotated[FormData, Depends(posted_form)]) -> Response:
    """The study's instructions and image tools, until its first answer."""
    study = get_study(session, study_id)
    posted = read_form(form, ReadingSetupForm)
    if posted.value is not None:
        try:
            change_reading_setup(session, study, posted.value.instructions,
                                 list(posted.value.viewer_tools))
            return redirect(request, f"/studies/{study_id}?saved=setup#reading-setup")
        except Invalid as error:
            posted = posted.refused(error)
    context = _study_context(session, study) | {"setup": posted.fields, "setup_errors": posted.errors}
    return render(request, "studies/detail.html", context, status_code=422)


@router.get("/studies/{study_id}/answers.csv")
def export_answers(session: SessionDep, study_id: IdPath) -> StreamingResponse:
    study = get_study(session, study_id)
    return csv_download(design_of(study).answers_csv(session, study), f"study-{study_id}-answers.csv")


@router.get("/studies/{study_id}/answers-long.csv")
def export_long(session: SessionDep, study_id: IdPath) -> StreamingResponse:
    """One row per case x reader x question, with the judge's answer beside the reader's."""
    study = get_study(session, study_id)
    require_rubric(study)  # refused before the response starts, never mid-body
    return csv_download(iter_long_csv(session, study), f"study-{study_id}-answers-long.csv")


@router.get("/studies/{study_id}/design.csv")
def export_design(session: SessionDep, study_id: IdPath) -> StreamingResponse:
    """The sample and every reader's seeded order, as drawn."""
    study = get_study(session, study_id)
    return csv_download(design_of(study).design_csv(session, study), f"study-{study_id}-design.csv")


@router.post("/studies/{study_id}/readers/{user_id}")
def describe_reader(request: Request, session: SessionDep, admin: AdminUser, study_id: IdPath,
                    user_id: IdPath,
                    qualification: Annotated[str, Form(max_length=200)] = "",
                    experience_years: Annotated[int | None, Form(ge=0, le=70)] = None) -> Response:
    """An admin records what the report says of a reader: qualification and experience."""
    user = study_reader(session, get_study(session, study_id), user_id)
    describe_user(session=session, user=user, qualification=qualification,
                  experience_years=experience_years, replace_all=True, actor=admin,
                  board_certified=user.board_certified)  # this form does not show it: kept
    return redirect(request, f"/studies/{study_id}?saved=reader-{user.id}#readers")


@router.post("/studies/{study_id}/lock")
def lock_study_route(request: Request, session: SessionDep, admin: AdminUser,
                     study_id: IdPath) -> RedirectResponse:
    study = get_study(session, study_id)
    lock_study(session, study, actor=admin.name)
    settle_from(session, study)  # its settled edits join the known-answer pool
    return redirect(request, f"/studies/{study_id}")
