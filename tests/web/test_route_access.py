"""Every route of the app, walked from its route table: nobody reaches one without logging in
(except the login itself, health and static files), and a reader reaches none of the admins'.
A route added later is walked too, so a router included without its guard fails here."""

import re
from collections.abc import Iterator

import pytest
from fastapi import FastAPI
from fastapi.routing import APIRoute
from fastapi.testclient import TestClient
from sqlalchemy.engine import Engine
from starlette.routing import BaseRoute

from app.models import Role
from app.settings import Settings
from app.web.main import create_app
from app.web.security import require_admin
from tests.web.routes.test_accounts import client_for

# Open to anyone: logging in and out, the health checks.
PUBLIC = re.compile(r"^/(login|logout|health|healthz|ready|livez|readyz)(/|$)")


def _guards(route: APIRoute) -> set[object]:
    found: set[object] = set()
    stack = list(route.dependant.dependencies)
    while stack:
        dependency = stack.pop()
        found.add(dependency.call)
        stack.extend(dependency.dependencies)
    return found


def _walk(routes: list[BaseRoute], prefix: str = "",
          inherited: frozenset[object] = frozenset()) -> Iterator[tuple[str, APIRoute, set[object]]]:
    for route in routes:
        if isinstance(route, APIRoute):
            yield prefix + route.path, route, set(inherited) | _guards(route)
        elif hasattr(route, "original_router"):
            # An included router, kept apart from its routes (FastAPI includes lazily): its
            # include-time dependencies guard every route under it.
            context = route.include_context  # type: ignore[attr-defined]
            guards = inherited | {d.dependency for d in context.dependencies}
            yield from _walk(route.original_router.routes, prefix + context.prefix, guards)  # type: ignore[attr-defined]


def _routes(app: FastAPI) -> Iterator[tuple[str, str, bool]]:
    """(method, a concrete path, whether admins only) for every API route."""
    for template, route, guards in _walk(app.routes):
        path = re.sub(r"\{[^}]*id[^}]*\}", "1", template)  # ids: a number
        path = re.sub(r"\{[^}:]*(:path)?\}", "x", path)  # anything else: a word
        for method in sorted(route.methods - {"HEAD", "OPTIONS"}):
            yield method, path, require_admin in guards


@pytest.fixture
def app_routes(settings: Settings, engine: Engine) -> list[tuple[str, str, bool]]:
    return list(_routes(create_app(settings, engine)))


def test_the_route_table_is_walked(app_routes: list[tuple[str, str, bool]]) -> None:
    paths = {path for _, path, _ in app_routes}
    # The sweep is only worth something if it sees the app's main doors.
    for expected in ("/cases", "/studies", "/studies/new/pairwise", "/read", "/judges",
                     "/quality", "/accounts"):
        assert expected in paths, expected
    assert sum(admin for _, _, admin in app_routes) > 50


def test_nobody_gets_past_the_login(engine: Engine, settings: Settings,
                                    app_routes: list[tuple[str, str, bool]]) -> None:
    client = TestClient(create_app(settings, engine), raise_server_exceptions=False)
    for method, path, _ in app_routes:
        if PUBLIC.match(path):
            continue
        response = client.request(method, path, follow_redirects=False)
        if response.status_code in (301, 302, 303, 307):
            assert response.headers["location"].startswith("/login"), (method, path)
        else:
            # 401 (or, for a form post, the CSRF check's 403), never the page itself.
            assert response.status_code in (401, 403), (method, path, response.status_code)


def test_a_reader_reaches_none_of_the_admins_routes(engine: Engine, settings: Settings,
                                                    app_routes: list[tuple[str, str, bool]]) -> None:
    reader = client_for(engine, settings, "dr-reader", Role.reader)
    admins_only = [(m, p) for m, p, admin in app_routes if admin]
    for method, path in admins_only:
        response = reader.request(method, path, follow_redirects=False)
        assert response.status_code == 403, (method, path, response.status_code)
    # And every route that is not the admins' is one a reader works in (their reading and
    # adjudication, checked per study by the routes), the home page, or an open door.
    for _, path, admin in app_routes:
        if not admin and not PUBLIC.match(path):
            assert path == "/" or re.match(r"^/(read|adjudicate)(/|$)", path), path
