"""Work a request starts and no one waits for: drawing a new study's images, an adaptive
study's next batch.

Starlette's background tasks run after the response is sent but before the request is
finished, and the server reads the next request on the same keep-alive connection only then:
the reader's browser, following the redirect after Enter, waited for the whole batch draw
(5-30 s). Here the work goes to threads of its own; the request returns at once. Work for a
key already queued or running is not queued again (a second answer asking for the same
top-up). A failure is logged, and the next request asks again.
"""

import logging
import threading
import time
from collections.abc import Callable, Hashable
from concurrent.futures import ThreadPoolExecutor
from typing import Any

logger = logging.getLogger(__name__)
# Two: one study's images being drawn never holds up another study's batch.
WORKERS = 2

_executor = ThreadPoolExecutor(max_workers=WORKERS, thread_name_prefix="background")
_pending: set[Hashable] = set()
_running: set[Hashable] = set()  # coalesced work that has started
_again: set[Hashable] = set()  # coalesced work asked for while it ran: run once more after
_lock = threading.Lock()


def run_in_background(key: Hashable, work: Callable[..., Any], *args: Any) -> bool:
    """Queue ``work(*args)`` unless work under ``key`` is queued or running; whether queued."""
    with _lock:
        if key in _pending:
            return False
        _pending.add(key)

    def run() -> None:
        try:
            _logged(key, work, *args)
        finally:
            with _lock:
                _pending.discard(key)

    _executor.submit(run)
    return True


def _logged(key: Hashable, work: Callable[..., Any], *args: Any) -> None:
    """Run the work; a failure is logged, never raised into the pool (it would vanish)."""
    try:
        work(*args)
    except Exception:
        logger.exception("background work %s failed; it is asked for again later", key)


def run_coalesced(key: Hashable, work: Callable[..., Any], *args: Any) -> bool:
    """Queue ``work(*args)`` at most once per ``key``: asked for while queued, nothing more;
    asked for while running, once more when it ends (it must see what came in meanwhile).
    One pending run per key, however fast the requests come; whether queued now."""
    with _lock:
        if key in _running:
            _again.add(key)
            return False
        if key in _pending:
            return False
        _pending.add(key)

    def run() -> None:
        with _lock:
            _running.add(key)
        try:
            _logged(key, work, *args)
        finally:
            with _lock:
                _running.discard(key)
                _pending.discard(key)
                again = key in _again
                _again.discard(key)
        if again:
            run_coalesced(key, work, *args)

    _executor.submit(run)
    return True


def wait_for_background(timeout: float = 60.0) -> None:
    """Until nothing is queued or running, or ``timeout`` (tests, and a clean shutdown)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        with _lock:
            if not _pending:
                return
        time.sleep(0.02)
