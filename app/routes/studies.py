"""Admins: create studies from a case filter, follow each reader's progress, lock."""

import json
from collections.abc import Iterator
from typing import Annotated

from fastapi import APIRouter, Form, Request
from fastapi.responses import HTMLResponse, RedirectResponse, Response, StreamingResponse
from sqlmodel import col, select

from app.adjudication import adjudicator_of
from app.answers import lock_study
from app.case_filter import recorded_criteria
from app.deps import CaseFilterDep, IdPath, SessionDep
from app.models import Role, User
from app.security import AdminUser
from app.study_design import STRATA_FACETS, StudyError, create_study
from app.study_export import iter_answer_csv, iter_design_csv, iter_long_csv
from app.study_forms import plan_from_form
from app.study_models import Reveal, Study
from app.web import render
from app.worklist import get_study, study_progress

router = APIRouter(include_in_schema=False)


def _readers(session: SessionDep) -> list[User]:
    return list(session.scalars(select(User).where(col(User.role) == Role.reader)
                                .order_by(col(User.name))))


@router.get("/studies", response_class=HTMLResponse)
def studies_page(request: Request, session: SessionDep) -> HTMLResponse:
    studies = [(s, study_progress(session, s)) for s in
               session.scalars(select(Study).order_by(col(Study.id).desc()))]
    return render(request, "studies/list.html", {"studies": studies})


@router.get("/studies/new", response_class=HTMLResponse)
def new_study_form(request: Request, session: SessionDep, case_filter: CaseFilterDep) -> HTMLResponse:
    context = {"filter": case_filter, "readers": _readers(session), "facets": STRATA_FACETS,
               "error": None, "form": {"seed": 42, "strata_facet": "direction",
                                       "strata": "add=50, remove=50", "blinded": True}}
    return render(request, "studies/new.html", context)


@router.post("/studies", response_class=HTMLResponse)
def create_study_route(
    request: Request, session: SessionDep, admin: AdminUser, case_filter: CaseFilterDep,
    name: Annotated[str, Form(max_length=200)],
    readers: Annotated[list[int], Form()],
    seed: Annotated[int, Form(ge=0, le=2**31 - 1)] = 42,
    strata_facet: Annotated[str, Form(max_length=32)] = "",
    strata: Annotated[str, Form(max_length=2000)] = "",
    total: Annotated[int | None, Form(ge=1, le=20_000)] = None,
    include_failed_rounds: Annotated[bool, Form()] = False,
    readers_per_case: Annotated[int | None, Form(ge=1, le=100)] = None,
    repeat_fraction: Annotated[float, Form(ge=0, le=0.5)] = 0.0,
    blinded: Annotated[bool, Form()] = False,
    reveal: Annotated[Reveal, Form()] = Reveal.never,
) -> Response:
    fields = dict(name=name, strata_facet=strata_facet, strata=strata, total=total, seed=seed,
                  include_failed_rounds=include_failed_rounds, reader_ids=readers,
                  readers_per_case=readers_per_case, repeat_fraction=repeat_fraction,
                  blinded=blinded, reveal=reveal)
    try:
        plan = plan_from_form(case_filter=case_filter, **fields)  # type: ignore[arg-type]
        study = create_study(session=session, plan=plan, created_by=admin)
    except StudyError as error:
        session.rollback()
        context = {"filter": case_filter, "readers": _readers(session), "facets": STRATA_FACETS,
                   "error": str(error), "form": fields}
        return render(request, "studies/new.html", context, status_code=422)
    return RedirectResponse(f"/studies/{study.id}", status_code=303)


@router.get("/studies/{study_id}", response_class=HTMLResponse)
def study_page(request: Request, session: SessionDep, study_id: IdPath) -> HTMLResponse:
    study = get_study(session, study_id)
    progress = study_progress(session, study)
    in_study = {r.id for r, _ in progress}
    selection = json.loads(study.selection)
    context = {"study": study, "progress": progress, "selection": selection,
               "criteria": recorded_criteria(selection["filter"]),
               "adjudicator": adjudicator_of(session, study),
               "candidates": [r for r in _readers(session) if r.id not in in_study]}
    return render(request, "studies/detail.html", context, partial="studies/_progress.html")


def _csv(rows: Iterator[str], filename: str) -> StreamingResponse:
    return StreamingResponse(rows, media_type="text/csv",
                             headers={"Content-Disposition": f'attachment; filename="{filename}"'})


@router.get("/studies/{study_id}/answers.csv")
def export_answers(session: SessionDep, study_id: IdPath) -> StreamingResponse:
    study = get_study(session, study_id)
    return _csv(iter_answer_csv(session, study), f"study-{study_id}-answers.csv")


@router.get("/studies/{study_id}/answers-long.csv")
def export_long(session: SessionDep, study_id: IdPath) -> StreamingResponse:
    """One row per case x reader x question, with the judge's answer beside the reader's."""
    study = get_study(session, study_id)
    return _csv(iter_long_csv(session, study), f"study-{study_id}-answers-long.csv")


@router.get("/studies/{study_id}/design.csv")
def export_design(session: SessionDep, study_id: IdPath) -> StreamingResponse:
    """The sample and every reader's seeded order, as drawn."""
    study = get_study(session, study_id)
    return _csv(iter_design_csv(session, study), f"study-{study_id}-design.csv")


@router.post("/studies/{study_id}/lock")
def lock_study_route(session: SessionDep, study_id: IdPath) -> RedirectResponse:
    lock_study(session, get_study(session, study_id))
    return RedirectResponse(f"/studies/{study_id}", status_code=303)
