"""One log line per request: method, path, status, time and user id; never a query string,
a cookie, a token or a form (they can hold secrets). A request that fails is logged with its
traceback, here, once."""

import logging
import time
from typing import Any

from starlette.types import ASGIApp, Message, Receive, Scope, Send

logger = logging.getLogger("medbanana.requests")


class RequestLogMiddleware:
    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        started = time.perf_counter()
        status = 500
        answered: float | None = None  # when the last byte of the response was sent
        # The state dict the routes' request.state writes to: who the user was, read below.
        scope.setdefault("state", {})

        async def send_with_status(message: Message) -> None:
            nonlocal status, answered
            if message["type"] == "http.response.start":
                status = message["status"]
            await send(message)
            if message["type"] == "http.response.body" and not message.get("more_body"):
                # The request's time is the answer's: work run after it is not the reader's wait.
                answered = time.perf_counter()

        try:
            await self.app(scope, receive, send_with_status)
        except Exception:
            logger.exception("%s %s failed", scope["method"], scope["path"],
                             extra=_fields(scope, 500, started))
            raise
        level = logging.WARNING if status >= 500 else logging.INFO
        ended = answered or time.perf_counter()
        logger.log(level, "%s %s %s %.1f ms", scope["method"], scope["path"], status,
                   (ended - started) * 1000, extra=_fields(scope, status, started, ended))


def _fields(scope: Scope, status: int, started: float,
            ended: float | None = None) -> dict[str, Any]:
    client = scope.get("client")
    return {"method": scope["method"], "path": scope["path"], "status": status,
            "duration_ms": round(((ended or time.perf_counter()) - started) * 1000, 1),
            "user_id": scope.get("state", {}).get("user_id"), "client": client[0] if client else None}
