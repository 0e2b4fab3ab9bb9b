"""The FastAPI application factory."""

import asyncio
import contextlib
import logging
import threading
from collections.abc import AsyncIterator
from typing import Any

import anyio.to_thread
from fastapi import Depends, FastAPI
from fastapi.staticfiles import StaticFiles
from sqlalchemy.engine import Engine
from starlette.middleware.sessions import SessionMiddleware

from app import __version__
from app.agreement.warm import warm_figures
from app.audit import keep_log
from app.db import make_engine
from app.jobs import warm_judge_renders
from app.logging_setup import configure_logging
from app.memo import settle_heap
from app.provenance.marker import Marker
from app.quality.report import warm as warm_quality
from app.readers.warm import warm_bars
from app.resources import STATIC_DIR
from app.settings import Settings, get_settings
from app.studies.judged_pool import warm as warm_judged_pool
from app.studies.previews import keep_prepared
from app.web.admission import AdmissionGate
from app.web.errors import install_error_handlers
from app.web.request_guard import RequestGuard
from app.web.request_log import RequestLogMiddleware
from app.web.routes import (
    accounts,
    adjudication,
    agreement,
    api,
    auth,
    cases,
    health,
    images,
    imports,
    jobs,
    judges,
    overview,
    pairwise,
    quality,
    readers,
    reading,
    studies,
)
from app.web.schemas import ErrorOut
from app.web.security import current_user, require_admin
from app.web.security_headers import SecurityHeaders
from app.web.templating import compile_templates

logger = logging.getLogger(__name__)


def _warm_pool_and_quality(engine: Engine) -> None:
    warm_judged_pool(engine)
    warm_quality(engine)


def _settle(warming: list[threading.Thread]) -> None:
    for thread in warming:
        thread.join()
    settle_heap()


@contextlib.asynccontextmanager
async def lifespan(app: FastAPI) -> AsyncIterator[None]:
    """With the app, an in-process pipeline worker (unless settings.worker is false): it
    runs queued jobs and resumes those a dead process left behind."""
    settings: Settings = app.state.settings
    # The route threads, as many as the database pool has connections for them (app/db.py).
    anyio.to_thread.current_default_thread_limiter().total_tokens = settings.request_threads
    # A study stays closed to its readers until its images are drawn: one a command made or a
    # stopped process left is drawn here, in the background.
    preparing = threading.Event()
    threading.Thread(target=keep_prepared, args=(app.state.engine, settings.resolved_cache_dir(),
                                                 preparing), name="prepare-studies",
                     daemon=True).start()
    # The judged-edit pool the new-study form reads, built before anyone asks for it, and
    # then the quality report /quality opens on, which reads its frame from the pool.
    warming = [threading.Thread(target=_warm_pool_and_quality, args=(app.state.engine,),
                                name="judged-pool", daemon=True),
               # The figures' one-time costs paid before the first agreement page (app/
               # agreement/warm.py), and every template compiled before its first page.
               threading.Thread(target=warm_figures, name="warm-figures", daemon=True),
               # The readers' change-point bars (app/readers/warm.py).
               threading.Thread(target=warm_bars, args=(app.state.engine,), name="warm-bars",
                                daemon=True),
               threading.Thread(target=compile_templates, name="compile-templates", daemon=True)]
    for thread in warming:
        thread.start()
    # The judge templates' render process, ready before the first candidate is added.
    warm_judge_renders()
    if app.state.settle:
        threading.Thread(target=_settle, args=(warming,), name="settle-heap", daemon=True).start()
    if not settings.worker:
        try:
            yield
        finally:
            preparing.set()
        return
    from app.jobs import pipeline_output, work

    stop = asyncio.Event()
    task = asyncio.create_task(work(app.state.engine, pipeline_output(settings), stop=stop,
                                    poll=1.0))
    try:
        yield
    finally:
        preparing.set()
        stop.set()
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task


# Every error the API answers with, in the published schema (FastAPI would otherwise
# document 422 as its own list-of-errors shape, which this app does not send).
ERROR_RESPONSES: dict[int | str, dict[str, Any]] = {
    status: {"model": ErrorOut, "description": description} for status, description in (
        (401, "Not logged in, or the token is not valid"), (403, "Not allowed for this account"),
        (404, "No such thing"), (413, "The request body is too large"),
        (422, "A parameter or the body is not valid"))}


def create_app(settings: Settings | None = None, engine: Engine | None = None, *,
               settle: bool | None = None) -> FastAPI:
    """``settle``: take what the start built out of the cyclic collector's way once it is
    built (app/memo.py settle_heap); by default when the app makes its own engine, as a
    server does. A process that makes many apps (the tests) keeps collecting them."""
    settings = settings or get_settings()
    # The docs are served by routes/auth.py, behind a login like every other page.
    configure_logging(settings)
    secret_key = settings.resolved_secret_key()  # SettingsError stops start-up, with its reason
    app = FastAPI(title="MedBanana Review", version=__version__, docs_url=None, redoc_url=None,
                  openapi_url=None, lifespan=lifespan, root_path=settings.root_path.rstrip("/"),
                  # A trailing-slash redirect is built from the Host header; none is made.
                  redirect_slashes=False,
                  description="Review Med-Banana-50K edits: cases, runs, rounds and judge verdicts. "
                              "Send 'Authorization: Bearer TOKEN' (medbanana users token NAME).")
    app.state.settings = settings
    # Made (or checked) before the first request: a certificate that cannot sign stops
    # start-up with the setting's name, like a bad secret key.
    app.state.marker = Marker.from_settings(settings)
    keep_log(settings.audit_log)
    logger.info("C2PA manifests are signed with %s", app.state.marker.identity.source)
    app.state.engine = engine or make_engine(settings.resolved_database_url(),
                                             settings.request_threads)
    app.state.settle = engine is None if settle is None else settle
    app.mount("/static", StaticFiles(directory=STATIC_DIR), name="static")
    # Inside the session middleware: it needs the decoded session to tell who is asking.
    app.add_middleware(RequestGuard)
    app.add_middleware(SessionMiddleware, secret_key=secret_key,
                       session_cookie="medbanana_session", same_site="lax",
                       https_only=settings.resolved_secure_cookies())
    app.add_middleware(SecurityHeaders, hsts=settings.resolved_secure_cookies())
    # Twice the route threads inside, the rest waiting their turn (app/web/admission.py).
    app.add_middleware(AdmissionGate, capacity=2 * settings.request_threads,
                       wait=settings.queue_wait)
    app.add_middleware(RequestLogMiddleware)
    app.include_router(health.router)
    app.include_router(auth.router)
    # Cases, imports, their API and images show the judge: admins only, so that blinded
    # readers cannot reach a verdict by any URL. Readers work in /read.
    for router in (cases.router, imports.router, api.router, images.router):
        app.include_router(router, dependencies=[Depends(require_admin)],
                           responses=ERROR_RESPONSES)
    app.include_router(reading.router, dependencies=[Depends(current_user)])
    app.include_router(adjudication.router, dependencies=[Depends(current_user)])
    # Before the studies' routes: /studies/new/pairwise is not a study id.
    app.include_router(pairwise.router, dependencies=[Depends(require_admin)])
    app.include_router(studies.router, dependencies=[Depends(require_admin)])
    app.include_router(readers.router, dependencies=[Depends(require_admin)])
    app.include_router(accounts.router, dependencies=[Depends(require_admin)])
    app.include_router(agreement.router, dependencies=[Depends(require_admin)])
    app.include_router(overview.router, dependencies=[Depends(require_admin)])
    app.include_router(quality.router, dependencies=[Depends(require_admin)])
    app.include_router(quality.api, dependencies=[Depends(require_admin)],
                       responses=ERROR_RESPONSES)
    app.include_router(jobs.router, dependencies=[Depends(require_admin)])
    app.include_router(judges.router, dependencies=[Depends(require_admin)])
    install_error_handlers(app)
    return app
