"""The request log times the answer, not work run after it: a submit was logged as slow for
the batch drawn after its response was sent."""

import logging
import time

import pytest
from starlette.applications import Starlette
from starlette.background import BackgroundTask
from starlette.requests import Request
from starlette.responses import PlainTextResponse
from starlette.routing import Route
from starlette.testclient import TestClient

from app.web.request_log import RequestLogMiddleware


def test_work_after_the_answer_is_not_counted(caplog: pytest.LogCaptureFixture) -> None:
    def answer(_: Request) -> PlainTextResponse:
        return PlainTextResponse("ok", background=BackgroundTask(time.sleep, 1.0))

    app = Starlette(routes=[Route("/answer", answer)])
    app.add_middleware(RequestLogMiddleware)
    with caplog.at_level(logging.INFO, logger="medbanana.requests"):
        assert TestClient(app).get("/answer").status_code == 200
    [record] = [r for r in caplog.records if r.name == "medbanana.requests"]
    assert record.duration_ms < 500  # type: ignore[attr-defined]
