"""Requests past the server's capacity wait their turn, for a while, then get a 503.

A process works on settings.request_threads requests at once (its route threads, sized with
the database pool). Up to as many again wait for a thread; a request that waits longer than
settings.queue_wait is answered 503 with Retry-After, so a burst of readers is served in turn
or told to come back, never left to a timeout deep in the database pool (a 500), and the
server is itself again as soon as the burst ends.
"""

import asyncio
import logging
import weakref

from starlette.types import ASGIApp, Receive, Scope, Send

logger = logging.getLogger(__name__)

RETRY_AFTER = 5  # seconds: a reader's next case after a short wait
HEALTH = frozenset({"/healthz", "/readyz"})
BUSY = b"The server is busy with other readers: try again in a few seconds."


class AdmissionGate:
    """At most ``capacity`` requests inside the app; the next ones wait up to ``wait`` s."""

    def __init__(self, app: ASGIApp, capacity: int, wait: float) -> None:
        self.app, self.capacity, self.wait = app, capacity, wait
        # One semaphore per event loop: a test client runs its own loop.
        self._gates: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, asyncio.Semaphore] = (
            weakref.WeakKeyDictionary())

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        # Health checks answer at once: a load balancer must see a busy server as alive.
        if scope["type"] != "http" or scope.get("path") in HEALTH:
            await self.app(scope, receive, send)
            return
        gate = self._gates.setdefault(asyncio.get_running_loop(), asyncio.Semaphore(self.capacity))
        try:
            await asyncio.wait_for(gate.acquire(), self.wait)
        except TimeoutError:
            logger.warning("%s %s waited %.0f s for its turn: 503", scope.get("method"),
                           scope.get("path"), self.wait)
            await _busy(send)
            return
        try:
            await self.app(scope, receive, send)
        finally:
            gate.release()


async def _busy(send: Send) -> None:
    await send({"type": "http.response.start", "status": 503,
                "headers": [(b"content-type", b"text/plain; charset=utf-8"),
                            (b"retry-after", str(RETRY_AFTER).encode()),
                            (b"cache-control", b"no-store")]})
    await send({"type": "http.response.body", "body": BUSY})
