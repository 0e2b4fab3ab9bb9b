"""The one error renderer: JSON for the API, a fragment for htmx, a page for everything else."""

import logging
from typing import Any
from urllib.parse import urlencode

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import Response
from sqlalchemy.exc import TimeoutError as PoolTimeout
from starlette.concurrency import run_in_threadpool
from starlette.exceptions import HTTPException as StarletteHTTPException

from app.errors import Conflict, Forbidden, Invalid, NotFound
from app.web.forms import words
from app.web.json_response import StrictJSONResponse
from app.web.security import NotAuthenticated, remember_cookie_user
from app.web.templating import app_path, redirect, render, root_path, wants_partial

logger = logging.getLogger(__name__)

# The routes of the published API (OpenAPI): their errors are ErrorOut JSON whatever the
# Accept header, as the schema says; an image URL never answers with a page.
JSON_PREFIXES = ("/api/", "/images/")


def _wants_json(request: Request) -> bool:
    # A route named .json answers JSON, its errors too: a script that fetched it got a page.
    path = app_path(request)
    return (path.startswith(JSON_PREFIXES) or path.endswith(".json")
            or "application/json" in request.headers.get("accept", ""))


def _describe(errors: list[Any]) -> str:
    parts = []
    for error in errors:
        where = ".".join(str(p) for p in error.get("loc", ()) if p not in ("query", "path"))
        message = words(error)
        parts.append(f"{where.removeprefix('body.').replace('_', ' ')}: {message}" if where else message)
    return "; ".join(parts) or "invalid request"


def error_response(request: Request, status: int, message: str) -> Response:
    if _wants_json(request):
        return StrictJSONResponse({"detail": message, "status": status}, status_code=status)
    context = {"status": status, "message": message}
    response = render(request, "errors/error.html", context, partial="errors/_error.html",
                      status_code=status)
    if wants_partial(request):
        # htmx does not swap 4xx answers by default; this tells it to show the message.
        response.headers["HX-Retarget"] = "#flash"
        response.headers["HX-Reswap"] = "innerHTML"
    return response


def _domain_handler(status: int) -> Any:
    async def handle(request: Request, exc: Exception) -> Response:
        return error_response(request, status, str(exc))
    return handle


def _to_login(request: Request) -> Response:
    if _wants_json(request) or request.method != "GET":
        return error_response(request, 401, "log in first, or send an API token as "
                                            "'Authorization: Bearer …'")
    target = "/login?" + urlencode({"next": app_path(request) + (
        f"?{request.url.query}" if request.url.query else "")})
    if wants_partial(request):
        return Response(status_code=204, headers={"HX-Redirect": root_path(request) + target})
    return redirect(request, target)


# The domain's error family (app/errors.py) and the status each kind means on the web; a
# subclass (CaseNotFound, StudyLocked, ...) is answered as its kind.
DOMAIN_STATUS: dict[type[Exception], int] = {NotFound: 404, Forbidden: 403, Conflict: 409,
                                             Invalid: 422}


def install_error_handlers(app: FastAPI) -> None:
    for error_type, status in DOMAIN_STATUS.items():
        app.add_exception_handler(error_type, _domain_handler(status))

    @app.exception_handler(NotAuthenticated)
    async def not_authenticated(request: Request, exc: NotAuthenticated) -> Response:
        return _to_login(request)

    @app.exception_handler(StarletteHTTPException)
    async def http_error(request: Request, exc: StarletteHTTPException) -> Response:
        message = exc.detail if isinstance(exc.detail, str) else "error"
        if exc.status_code == 404 and not _wants_json(request):
            try:  # an unknown address ran no route: find the user for the navigation bar
                await run_in_threadpool(remember_cookie_user, request)
            except Exception:
                logger.exception("could not look up the user of a 404 page")
        response = error_response(request, exc.status_code, message)
        response.headers.update(exc.headers or {})  # e.g. WWW-Authenticate on a 401
        return response

    @app.exception_handler(PoolTimeout)
    async def pool_exhausted(request: Request, exc: PoolTimeout) -> Response:
        # The pool is sized for the route threads (app/db.py): this is a database that
        # stopped answering, or an engine given a smaller pool. Come back, never a 500.
        logger.warning("%s %s found no free database connection: 503", request.method,
                       request.url.path)
        response = error_response(request, 503, "the server is busy: try again in a few seconds")
        response.headers["Retry-After"] = "5"
        return response

    @app.exception_handler(RequestValidationError)
    async def validation_error(request: Request, exc: RequestValidationError) -> Response:
        return error_response(request, 422, _describe(list(exc.errors())))

