"""Templates, and the one helper that decides between a full page and an htmx partial."""

import logging
from collections.abc import Iterator, Mapping
from typing import Any
from urllib.parse import urlencode

from fastapi import Request
from fastapi.responses import HTMLResponse, RedirectResponse, StreamingResponse
from fastapi.templating import Jinja2Templates

from app.jobs import BATCH_TARGET_HOURS, PRICES_AS_OF, dollars, duration, tokens
from app.resources import TEMPLATES_DIR
from app.studies.design_traits import traits_of
from app.web.security import csrf_token
from app.wording import plural, spaced
from pipeline.redaction import redact
from pipeline.rubric import rubric
from pipeline.vocabulary import LABELS, QUESTIONS, Dimension

templates = Jinja2Templates(directory=TEMPLATES_DIR)
templates.env.globals["urlencode"] = urlencode
# A design's traits and words, asked by its kind (templates never branch on its name).
templates.env.globals["design_traits"] = traits_of
# Errors stored before redaction was applied on the way in still never show a key.
templates.env.filters["redact"] = redact
templates.env.filters["plural"] = plural
# Vocabulary values as words ("chest_xray" as "chest xray"); a filter, which Jinja calls
# directly, where a method call in a template goes through its context (the case list
# makes hundreds of them a page).
templates.env.filters["spaced"] = spaced
# A job's estimate reads the same on the page as in the CLI.
templates.env.filters.update(duration=duration, dollars=dollars, token_count=tokens)
templates.env.globals.update(prices_as_of=PRICES_AS_OF, batch_hours=BATCH_TARGET_HOURS)
# The rubric, named once (pipeline/vocabulary.py) and written once (prompts/rubric.toml, which
# the judge prompt renders too) for every page that asks or shows it.
templates.env.globals.update(questions=QUESTIONS, labels=LABELS, rubric=rubric(),
                             dimensions=[(d.value, LABELS[d]) for d in Dimension])
logger = logging.getLogger(__name__)


def compile_templates() -> None:
    """Compile every template once when the server starts, so that no page's first view pays
    for it (the quality and agreement pages took 35-40 ms each). Logged, never raised: a page
    compiles its template itself if this failed."""
    try:
        for name in templates.env.list_templates(extensions=["html"]):
            templates.env.get_template(name)
    except Exception:
        logger.exception("the templates could not be compiled in advance")


def wants_partial(request: Request) -> bool:
    """htmx swaps want the region; a history restore (back button on a cache miss) wants it all."""
    return (request.headers.get("HX-Request") == "true"
            and request.headers.get("HX-History-Restore-Request") != "true")


def root_path(request: Request) -> str:
    """The prefix a reverse proxy serves the app under (MEDBANANA_ROOT_PATH), or ""."""
    return str(request.scope.get("root_path", "")).rstrip("/")


def app_path(request: Request) -> str:
    """The request's path inside the app, without the proxy's prefix."""
    return path_in_app(request.scope)


def path_in_app(scope: Mapping[str, Any]) -> str:
    """The path without the proxy's prefix when it carries it (a proxy that strips the
    prefix sends the bare path); for middleware, which has a scope and no request."""
    path, root = scope["path"], str(scope.get("root_path", "")).rstrip("/")
    return path[len(root):] if root and path.startswith(root + "/") else path


def csv_download(rows: Iterator[str], filename: str) -> StreamingResponse:
    """A CSV streamed as it is written, saved under ``filename``."""
    return StreamingResponse(rows, media_type="text/csv",
                             headers={"Content-Disposition": f'attachment; filename="{filename}"'})


def redirect(request: Request, path: str) -> RedirectResponse:
    """A 303 to a path of this app. Relative to the host, so it never repeats a Host header."""
    return RedirectResponse(root_path(request) + path, status_code=303)


def render(request: Request, page: str, context: dict[str, Any], *, partial: str | None = None,
           status_code: int = 200) -> HTMLResponse:
    template = partial if partial and wants_partial(request) else page
    context = {"user": getattr(request.state, "user", None), "csrf_token": csrf_token(request),
               "root": root_path(request),
               "synthetic": getattr(request.state, "synthetic", False),
               # A page answering a POST (a refused form): the browser must not post it again
               # on reload (static/app.js).
               "answers_post": request.method == "POST", **context}
    response = templates.TemplateResponse(request, template, context, status_code=status_code)
    # The same URL answers with a page or a fragment, so caches must keep them apart.
    response.headers["Vary"] = "HX-Request"
    return response
