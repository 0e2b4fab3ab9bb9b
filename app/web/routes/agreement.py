"""Admins: a study's agreement figures as a page, a JSON report and CSV tables."""

from typing import Annotated, Any

from fastapi import APIRouter, Depends, Form, Query, Request
from fastapi.responses import HTMLResponse, RedirectResponse, Response, StreamingResponse
from pydantic import Field

from app.accounts.users import get_user
from app.agreement.alternative_annotator import parse_epsilon
from app.agreement.report import Slice, slice_choices
from app.agreement.service import (
    charts_for,
    judge_as_reader_for,
    reference_shift_for,
    report_for,
    report_json,
)
from app.audit import head_of
from app.csv_cells import iter_dict_csv
from app.designs import (
    AGREEMENT_TABLES,
    DISAGREEMENT_KINDS,
    Disagreement,
    agreement_table,
    case_rows,
    csv_rows,
    design_of,
    disagreements,
    panel_roc_for,
    standalone_html,
)
from app.designs import real_or_edited_figures as real_or_edited
from app.errors import Invalid
from app.judges.follow_up import comparison
from app.models import Direction, Modality
from app.readers.checks import reader_checks
from app.studies.adjudication import assign_adjudicator
from app.studies.worklist import get_study, reads_so_far
from app.web.deps import MAX_DB_ID, DiseaseName, IdPath, QuestionQuery, SessionDep, SettingsDep
from app.web.json_response import StrictJSONResponse
from app.web.templating import redirect, render

router = APIRouter(include_in_schema=False)
RoundNumber = Annotated[int, Field(ge=1, le=1000)]
# The alternative annotator test's epsilon as typed: checked by the domain, which names it.
EpsilonQuery = Annotated[str | None, Query(max_length=40)]


async def case_slice(  # async: no I/O (see app/web/deps.py)
    modality: Annotated[list[Modality] | None, Query()] = None,
    disease: Annotated[list[DiseaseName] | None, Query()] = None,
    direction: Annotated[list[Direction] | None, Query()] = None,
    round: Annotated[list[RoundNumber] | None, Query()] = None,
) -> Slice:
    return Slice(modality=tuple(m.value for m in modality or ()), disease=tuple(disease or ()),
                 direction=tuple(d.value for d in direction or ()), round=tuple(round or ()))


SliceDep = Annotated[Slice, Depends(case_slice)]


@router.get("/studies/{study_id}/agreement", response_class=HTMLResponse)
def agreement_page(request: Request, session: SessionDep, study_id: IdPath,
                   scope: SliceDep) -> Response:
    study = get_study(session, study_id)
    figures = design_of(study).figures_page
    if figures != "agreement":  # a design without the rubric has figures of its own
        return redirect(request, f"/studies/{study_id}/{figures}")
    data, report = report_for(session, study, scope)
    context: dict[str, Any] = {"study": study, "report": report,
                               "choices": slice_choices(data.cases), "scope": scope,
                               "tables": AGREEMENT_TABLES, "query": request.url.query,
                               "before_after": comparison(session, study),
                               "checks": reader_checks(session, study)}
    return render(request, "agreement/study.html", context)


@router.get("/studies/{study_id}/real-or-edited", response_class=HTMLResponse)
def real_or_edited_page(request: Request, session: SessionDep, settings: SettingsDep,
                        study_id: IdPath) -> HTMLResponse:
    """Can readers tell an edit from a real image: ROC areas, sensitivity, specificity and
    localisation, per reader and over the readers."""
    study = get_study(session, study_id)
    results = real_or_edited.results(session, study, settings.resolved_cache_dir())
    panel = panel_roc_for(results)
    return render(request, "agreement/real_or_edited.html",
                  {"study": study, "results": results, "panel": panel,
                   "panel_chart": panel.chart(results) if panel.readers else None,
                   "pooled": real_or_edited.POOLED, "mean": real_or_edited.MEAN,
                   "reads": reads_so_far(session, study)})


@router.get("/studies/{study_id}/real-or-edited.json")
def real_or_edited_json(session: SessionDep, settings: SettingsDep, study_id: IdPath) -> StrictJSONResponse:
    """Every figure of the results page, with its interval."""
    study = get_study(session, study_id)
    found = real_or_edited.results(session, study, settings.resolved_cache_dir())
    return StrictJSONResponse(found.as_dict() | {"readers_random": panel_roc_for(found).as_dict()})


@router.get("/studies/{study_id}/real-or-edited.csv")
def real_or_edited_csv(session: SessionDep, study_id: IdPath) -> StreamingResponse:
    """The first reads in long format: reader, case, truth, score, and what the score is made of."""
    study = get_study(session, study_id)
    return StreamingResponse(iter_dict_csv(real_or_edited.long_rows(session, study)),
                             media_type="text/csv", headers={"Content-Disposition":
                             f'attachment; filename="study-{study_id}-real-or-edited.csv"'})


@router.get("/studies/{study_id}/real-or-edited.imrmc")
def real_or_edited_imrmc(session: SessionDep, study_id: IdPath) -> StreamingResponse:
    """The first reads in the iMRMC input format, for MRMC software (readers as random too)."""
    study = get_study(session, study_id)
    lines = real_or_edited.imrmc(session, study)
    return StreamingResponse(lines, media_type="text/plain; charset=utf-8", headers={
        "Content-Disposition": f'attachment; filename="study-{study_id}-real-or-edited.imrmc"'})


@router.get("/studies/{study_id}/agreement/charts", response_class=HTMLResponse)
def agreement_charts(request: Request, session: SessionDep, study_id: IdPath,
                     scope: SliceDep) -> HTMLResponse:
    """The charts as a fragment, fetched by the page once its tables are shown."""
    study = get_study(session, study_id)
    context = {"charts": charts_for(session, study, scope)}
    return render(request, "agreement/_charts.html", context)


@router.get("/studies/{study_id}/agreement/skill-weighted", response_class=HTMLResponse)
def agreement_skill_weighted(request: Request, session: SessionDep, study_id: IdPath) -> HTMLResponse:
    """The figures under the skill-weighted reference, a fragment fetched after the page: the
    model's fit takes a moment the page's own figures need not wait for."""
    study = get_study(session, study_id)
    return render(request, "agreement/_skill_weighted.html",
                  {"study": study, "shift": reference_shift_for(session, study)})


@router.get("/studies/{study_id}/agreement/random-readers", response_class=HTMLResponse)
def agreement_random_readers(request: Request, session: SessionDep, study_id: IdPath,
                             epsilon: EpsilonQuery = None) -> HTMLResponse:
    """Can the judge stand in for a reader: readers random, a fragment fetched after the page."""
    study = get_study(session, study_id)
    try:
        value = parse_epsilon(epsilon)
    except Invalid as error:
        return render(request, "agreement/_random_readers.html",
                      {"study": study, "result": None, "epsilon": epsilon, "error": str(error)},
                      status_code=422)
    result = judge_as_reader_for(session, study, value)
    return render(request, "agreement/_random_readers.html",
                  {"study": study, "result": result, "epsilon": epsilon or "", "chart": result.chart()})


@router.get("/studies/{study_id}/agreement/random-readers.json")
def agreement_random_readers_json(session: SessionDep, study_id: IdPath,
                                  epsilon: EpsilonQuery = None) -> StrictJSONResponse:
    """The readers-random figures as JSON: the judge as one more reader, the alternative
    annotator test at ``epsilon``, the kappa z-score and the readers x images table."""
    study = get_study(session, study_id)
    return StrictJSONResponse(judge_as_reader_for(session, study, parse_epsilon(epsilon)).as_dict())


@router.get("/studies/{study_id}/report.html", response_class=HTMLResponse)
def standalone_report(session: SessionDep, study_id: IdPath, scope: SliceDep) -> HTMLResponse:
    """One self-contained file to archive or send: styles and charts inline."""
    study = get_study(session, study_id)
    return HTMLResponse(standalone_html(session, study, scope, reader_checks(session, study)), headers={
        "Content-Disposition": f'inline; filename="study-{study_id}-report.html"',
        # Self-contained: inline styles and data: images, nothing else, no script at all.
        "Content-Security-Policy": "default-src 'none'; style-src 'unsafe-inline'; "
                                   "img-src data:; frame-ancestors 'none'"})


@router.get("/studies/{study_id}/agreement.json")
def agreement_json(session: SessionDep, study_id: IdPath, scope: SliceDep) -> StrictJSONResponse:
    study = get_study(session, study_id)
    _, report = report_for(session, study, scope)
    return StrictJSONResponse(report_json(study, report, head_of(session)))


@router.get("/studies/{study_id}/agreement/{table}.csv")
def agreement_csv(session: SessionDep, study_id: IdPath, table: str,
                  scope: SliceDep) -> StreamingResponse:
    study = get_study(session, study_id)
    _, report = report_for(session, study, scope)
    table_rows = agreement_table(report, table)
    filename = f"study-{study_id}-{table}.csv"
    return StreamingResponse(iter_dict_csv(table_rows), media_type="text/csv",
                             headers={"Content-Disposition": f'attachment; filename="{filename}"'})


KindQuery = Annotated[str | None, Query(pattern="^(" + "|".join(DISAGREEMENT_KINDS) + ")$")]


def _disagreement_rows(session: SessionDep, study_id: int, question: str | None,
                       kind: str | None) -> tuple[Any, list[str], list[Any]]:
    study = get_study(session, study_id)
    data, _ = report_for(session, study, Slice())
    return study, data.readers, disagreements(data, question, kind)


@router.get("/studies/{study_id}/disagreements", response_class=HTMLResponse)
def disagreements_page(request: Request, session: SessionDep, study_id: IdPath,
                       question: QuestionQuery = None, kind: KindQuery = None) -> HTMLResponse:
    study, readers, found = _disagreement_rows(session, study_id, question, kind)
    context = {"study": study, "rows": found, "kinds": DISAGREEMENT_KINDS,
               "reads": reads_so_far(session, study), "question": question, "kind": kind,
               "query": request.url.query, "readers": readers}
    return render(request, "agreement/disagreements.html", context)


def _case_csv(found: list[Disagreement], filename: str) -> StreamingResponse:
    return StreamingResponse(iter_dict_csv(csv_rows(found)), media_type="text/csv", headers={
        "Content-Disposition": f'attachment; filename="{filename}"'})


@router.get("/studies/{study_id}/disagreements.csv")
def disagreements_csv(session: SessionDep, study_id: IdPath, question: QuestionQuery = None,
                      kind: KindQuery = None) -> StreamingResponse:
    study, _, found = _disagreement_rows(session, study_id, question, kind)
    return _case_csv(found, f"study-{study.id}-disagreements.csv")


@router.get("/studies/{study_id}/reference.csv")
def reference_csv(session: SessionDep, study_id: IdPath) -> StreamingResponse:
    """Every case x question: the readers' answers, the reference and how it was decided."""
    study = get_study(session, study_id)
    data, _ = report_for(session, study, Slice())
    return _case_csv(case_rows(data), f"study-{study.id}-reference.csv")


@router.post("/studies/{study_id}/adjudicator")
def set_adjudicator(request: Request, session: SessionDep, study_id: IdPath,
                    user_id: Annotated[int, Form(ge=1, le=MAX_DB_ID)]) -> RedirectResponse:
    assign_adjudicator(session, get_study(session, study_id), get_user(session, user_id))
    return redirect(request, f"/studies/{study_id}")
