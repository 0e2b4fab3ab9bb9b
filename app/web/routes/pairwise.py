"""Admins: pairwise studies, made from their own form (the kind of pairs, stratified and
seeded), and their figures."""

import shutil
import tempfile
from pathlib import Path
from typing import Annotated, Any

from fastapi import APIRouter, Depends, Query, Request
from fastapi.responses import FileResponse, HTMLResponse, Response
from pydantic import BaseModel, Field
from sqlmodel import Session
from starlette.background import BackgroundTask
from starlette.datastructures import FormData

from app.accounts.users import reader_accounts
from app.background import run_in_background
from app.cases.filters import CaseFilter
from app.designs import (
    PAIRWISE,
    PairKind,
    pairs_left_out,
    pairwise_figures,
    strengths_plots,
    zipped_pairwise,
)
from app.errors import NotFound
from app.models import MAX_DB_ID
from app.studies.design import StudyError, StudyPlan
from app.studies.design_traits import PAIR_FACETS, Design
from app.studies.previews import warm_previews
from app.studies.worklist import get_study
from app.web.deps import CaseFilterDep, IdPath, SessionDep, SettingsDep
from app.web.forms import posted_form, read_form
from app.web.security import AdminUser
from app.web.templating import redirect, render

router = APIRouter(include_in_schema=False)
MAX_PER_STRATUM = 5000


class PairwiseForm(BaseModel):
    name: str = Field(max_length=200)
    kind: str = Field(max_length=16)
    readers: list[Annotated[int, Field(ge=1, le=MAX_DB_ID)]] = Field(default_factory=list,
                                                                    max_length=1000)
    facets: list[str] = Field(default_factory=list, max_length=len(PAIR_FACETS))
    per_stratum: int = Field(default=10, ge=1, le=MAX_PER_STRATUM)
    seed: int = Field(default=42, ge=0, le=2**31 - 1)
    readers_per_case: int | None = Field(default=None, ge=1, le=200)


def _context(session: Session, case_filter: CaseFilter, typed: dict[str, Any],
             errors: dict[str, str]) -> dict[str, Any]:
    kind = str(typed.get("kind") or PairKind.consecutive.value)
    facets = tuple(f for f in PAIR_FACETS if f in (typed.get("facets") or ()))
    drafted = StudyPlan(name="", case_filter=case_filter, reader_ids=[], design=PAIRWISE.kind,
                        strata_facets=facets, pair_kind=kind)
    design = PAIRWISE
    rows, _ = design.strata(session, drafted)
    return {"form": typed, "errors": errors, "kinds": list(PairKind), "filter": case_filter,
            "left_out": pairs_left_out(session, drafted),
            "facet_choices": design.facet_choices,
            "readers": reader_accounts(session), "counts": {row.key: row.pool for row in rows},
            "kind": kind, "facets": facets}


@router.get("/studies/new/pairwise", response_class=HTMLResponse)
def new_pairwise_form(request: Request, session: SessionDep, case_filter: CaseFilterDep,
                      kind: Annotated[str, Query(max_length=16)] = PairKind.consecutive.value,
                      facets: Annotated[list[str] | None, Query(max_length=3)] = None) -> HTMLResponse:
    typed = {"kind": kind, "facets": facets if facets is not None else list(PAIR_FACETS),
             "per_stratum": 10, "seed": 42, "readers": []}
    return render(request, "studies/new_pairwise.html", _context(session, case_filter, typed, {}))


@router.post("/studies/new/pairwise", response_class=HTMLResponse)
def create_pairwise(request: Request, session: SessionDep, admin: AdminUser,
                    case_filter: CaseFilterDep, settings: SettingsDep,
                    form: Annotated[FormData, Depends(posted_form)]) -> Response:
    posted = read_form(form, PairwiseForm)
    if posted.value is not None:
        chosen = posted.value
        facets = tuple(chosen.facets)  # as posted: one the pairs have not is refused, not dropped
        plan = StudyPlan(name=chosen.name, case_filter=case_filter, reader_ids=chosen.readers,
                         design=PAIRWISE.kind, seed=chosen.seed, strata_facets=facets,
                         readers_per_case=chosen.readers_per_case, pair_kind=chosen.kind)
        design = PAIRWISE
        try:
            study = design.create(session, design.up_to(session, plan, chosen.per_stratum), admin)
            # Readers wait until its images are drawn, after this answer is sent.
            run_in_background(("prepare", study.id or 0), warm_previews, request.app.state.engine,
                              study.id or 0, settings.resolved_cache_dir())
            return redirect(request, f"/studies/{study.id}")
        except StudyError as error:
            session.rollback()
            posted = posted.refused(error)
    typed = dict(posted.fields)
    typed["facets"] = [str(f) for f in form.getlist("facets")]
    typed["readers"] = [int(r) for r in map(str, form.getlist("readers")) if r.isdigit() and len(r) < 12]
    return render(request, "studies/new_pairwise.html",
                  _context(session, case_filter, typed, posted.errors), status_code=422)


@router.get("/studies/{study_id}/pairwise", response_class=HTMLResponse)
def pairwise_page(request: Request, session: SessionDep, study_id: IdPath) -> HTMLResponse:
    study = get_study(session, study_id)
    if not Design(study.design).pairs:
        raise NotFound(f"study {study.name!r} is not a pairwise study")
    figures = pairwise_figures(session, study)
    return render(request, "agreement/pairwise.html",
                  {"study": study, "figures": figures, "plots": strengths_plots(figures)})


@router.get("/studies/{study_id}/pairwise/pairs.zip")
def pairwise_pairs(request: Request, session: SessionDep, admin: AdminUser,
                   study_id: IdPath) -> Response:
    """The human-verified preference pairs: JSON Lines, Parquet, the images and a manifest."""
    study = get_study(session, study_id)
    if not Design(study.design).pairs:
        raise NotFound(f"study {study.name!r} is not a pairwise study")
    scratch = Path(tempfile.mkdtemp(prefix="pairwise-"))
    archive = scratch / "pairs.zip"
    try:
        zipped_pairwise(request.app.state.engine, study_id, archive, request.app.state.marker,
                        actor=admin.name)
    except BaseException:
        shutil.rmtree(scratch, ignore_errors=True)
        raise
    # Sent from disk, and removed once sent.
    return FileResponse(archive, media_type="application/zip",
                        filename=f"pairwise-study-{study_id}.zip",
                        background=BackgroundTask(shutil.rmtree, scratch, ignore_errors=True))
