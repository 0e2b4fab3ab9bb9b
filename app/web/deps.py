"""Dependencies shared by every route: the database session, settings and the case filter."""

import asyncio
import inspect
from collections.abc import AsyncIterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Annotated, Any, Literal

import anyio
from fastapi import Depends, Path, Query, Request
from pydantic import Field, StringConstraints, ValidationError, validate_call
from sqlmodel import Session

from app.cases.filters import CaseFilter
from app.models import MAX_DB_ID, Direction, Modality
from app.provenance.marker import Marker
from app.settings import Settings
from pipeline.vocabulary import QUESTIONS, Dimension, TaskOutcome

RoundCount = Annotated[int, Field(ge=0, le=1000)]
IdPath = Annotated[int, Path(ge=1, le=MAX_DB_ID, description="A database id")]
IdQuery = Annotated[int | None, Query(ge=1, le=MAX_DB_ID)]
# An id inside a form list (readers, tasks): bounded like a path id.
IdValue = Annotated[int, Field(ge=1, le=MAX_DB_ID)]
CursorQuery = Annotated[int | None, Query(ge=0, le=MAX_DB_ID, description="Keyset cursor: an id")]
# No control characters: PostgreSQL rejects NUL in text, and none belongs in a name.
NAME_PATTERN = r"^[^\x00-\x1f\x7f]*$"
NO_NUL = r"^[^\x00]*$"
DiseaseName = Annotated[str, StringConstraints(max_length=200, pattern=NAME_PATTERN)]
QuestionQuery = Annotated[str | None, Query(pattern="^(" + "|".join(QUESTIONS) + ")$")]


# Async where a dependency does no I/O: FastAPI runs a sync one in its thread pool, and each
# hand-over to a worker thread and back costs a request a fraction of a millisecond (2.5 ms of
# a 4.7 ms API list on this 2-core machine, with seven of them).
# Closing a session returns its connection with a rollback, a round trip on PostgreSQL, so
# it runs off the event loop, but never in the request threads: when every one of those
# waited for a pooled connection, and the connections belonged to finished requests whose
# close waited for a request thread, the server stood still until the pool's timeout (issue
# 54). These threads only ever close sessions, so a close never waits for a route.
_CLOSING = ThreadPoolExecutor(max_workers=4, thread_name_prefix="session-close")


async def get_session(request: Request) -> AsyncIterator[Session]:
    # Making a session takes no connection (it is taken at the first query, in the thread
    # the route runs in).
    session = Session(request.app.state.engine)
    try:
        yield session
    finally:
        # Shielded: a request cancelled by a client that went away must still give its
        # connection back to the pool.
        with anyio.CancelScope(shield=True):
            if _local(session):
                session.close()
            else:
                await asyncio.get_running_loop().run_in_executor(_CLOSING, session.close)


def _local(session: Session) -> bool:
    """Whether closing the session is a local call (SQLite's rollback touches no network
    and, after the write transactions a route commits, no disk): done on the event loop,
    it saves the request two thread hand-overs, each a wake-up of an idle core."""
    return session.get_bind().dialect.name == "sqlite"


async def get_app_settings(request: Request) -> Settings:
    settings: Settings = request.app.state.settings
    return settings


async def get_marker(request: Request) -> Marker:
    marker: Marker = request.app.state.marker
    return marker


SessionDep = Annotated[Session, Depends(get_session)]
SettingsDep = Annotated[Settings, Depends(get_app_settings)]
MarkerDep = Annotated[Marker, Depends(get_marker)]


# Every list parameter may repeat: values of one parameter are alternatives, and
# different parameters all apply.
def case_filter_of(
    modality: Annotated[list[Modality] | None, Query(description="chest_xray, brain_mri or fundus")] = None,
    disease: Annotated[list[DiseaseName] | None, Query(description="As named in the data")] = None,
    direction: Annotated[list[Direction] | None, Query(description="add or remove")] = None,
    outcome: Annotated[
        list[TaskOutcome] | None, Query(description="success, failed or api_failed (latest run)")
    ] = None,
    rounds: Annotated[list[RoundCount] | None, Query(description="Rounds of the latest run")] = None,
    failed_dimension: Annotated[
        list[Dimension] | None, Query(description="A judge dimension that failed in any round")
    ] = None,
    # No NUL: the request guard refuses it in any query, so the schema must say so too.
    q: Annotated[str, Query(max_length=500, pattern=NO_NUL,
                            description="Words in instructions or judge reasons")] = "",
    changed_min: Annotated[float | None, Query(ge=0, le=100, description=(
        "Final edit's changed area at least this percent of the image"))] = None,
    changed_max: Annotated[float | None, Query(ge=0, le=100, description=(
        "Final edit's changed area at most this percent"))] = None,
    ssim_outside_max: Annotated[float | None, Query(ge=-1, le=1, description=(
        "SSIM outside the changed region at most this (context poorly preserved)"))] = None,
    regions_min: Annotated[int | None, Query(ge=0, le=1_000_000, description=(
        "At least this many separate changed regions"))] = None,
    sort: Annotated[Literal["", "changed", "ssim_outside", "regions", "psnr"], Query(description=(
        "Order: by id (empty), changed area, SSIM outside the change, regions, or PSNR"))] = "",
) -> CaseFilter:
    return CaseFilter(
        modality=tuple(m.value for m in modality or ()),
        disease=tuple(disease or ()),
        direction=tuple(d.value for d in direction or ()),
        outcome=tuple(o.value for o in outcome or ()),
        rounds=tuple(rounds or ()),
        failed_dimension=tuple(d.value for d in failed_dimension or ()),
        q=q, changed_min=changed_min, changed_max=changed_max,
        ssim_outside_max=ssim_outside_max, regions_min=regions_min, sort=sort,
    )


async def case_filter(**given: Any) -> CaseFilter:
    # The API's dependency: case_filter_of's parameters, without a thread-pool hop.
    return case_filter_of(**given)


case_filter.__signature__ = inspect.signature(case_filter_of)  # type: ignore[attr-defined]
CaseFilterDep = Annotated[CaseFilter, Depends(case_filter)]

# The same parameters as the pages read them. A bookmark with a bad value, or an address
# edited by hand, loses only that value, named in a notice, never the page; the API keeps its
# 422. The values are checked by case_filter_of's own signature, so both read the same rules.
_checked_filter = validate_call(case_filter_of)
# Read once: the pages ask for every one of them on each request.
CASE_PARAMS = tuple(inspect.signature(case_filter_of).parameters)
LIST_PARAMS = ("modality", "disease", "direction", "outcome", "rounds", "failed_dimension")
# Fixed vocabularies, matched whatever the case they are typed in.
FOLDED = ("modality", "direction", "outcome", "failed_dimension", "sort")


@dataclass(frozen=True)
class PageFilter:
    filter: CaseFilter
    ignored: tuple[str, ...]  # each dropped value as the address gave it, "name=value"


async def page_case_filter(request: Request) -> PageFilter:
    # Pure parsing (see get_app_settings).
    kept: dict[str, Any] = {}
    ignored: list[str] = []
    for name in CASE_PARAMS:
        many = name in LIST_PARAMS
        given = request.query_params.getlist(name)
        good: list[str] = []
        for raw in given if many else given[-1:]:
            if raw == "" and name != "q":  # an empty box of a form: no value, not a bad one
                continue
            value = raw.strip().lower() if name in FOLDED else raw
            one: dict[str, Any] = {name: [value] if many else value}
            try:
                _checked_filter(**one)
            except ValidationError:
                ignored.append(f"{name}={raw}")
                continue
            good.append(value)
        if good:
            kept[name] = good if many else good[0]
    return PageFilter(_checked_filter(**kept), tuple(ignored))


PageFilterDep = Annotated[PageFilter, Depends(page_case_filter)]

