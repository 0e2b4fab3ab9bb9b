"""Templates, and the one helper that decides between a full page and an htmx partial."""

from pathlib import Path
from typing import Any
from urllib.parse import urlencode

from fastapi import Request
from fastapi.responses import HTMLResponse
from fastapi.templating import Jinja2Templates

from app.security import csrf_token

TEMPLATES_DIR = Path(__file__).resolve().parent.parent / "templates"
STATIC_DIR = Path(__file__).resolve().parent.parent / "static"

templates = Jinja2Templates(directory=TEMPLATES_DIR)
templates.env.globals["urlencode"] = urlencode


def wants_partial(request: Request) -> bool:
    """htmx swaps want the region; a history restore (back button on a cache miss) wants it all."""
    return (request.headers.get("HX-Request") == "true"
            and request.headers.get("HX-History-Restore-Request") != "true")


def render(request: Request, page: str, context: dict[str, Any], *, partial: str | None = None,
           status_code: int = 200) -> HTMLResponse:
    template = partial if partial and wants_partial(request) else page
    context = {"user": getattr(request.state, "user", None), "csrf_token": csrf_token(request),
               "synthetic": getattr(request.state, "synthetic", False), **context}
    response = templates.TemplateResponse(request, template, context, status_code=status_code)
    # The same URL answers with a page or a fragment, so caches must keep them apart.
    response.headers["Vary"] = "HX-Request"
    return response
