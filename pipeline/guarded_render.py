"""Judge templates rendered in a process of their own, under a time and a memory limit.

The budget of pipeline/template_sandbox.py bounds what a render can make; this bounds what it
can cost whatever it does. A scoring job renders thousands of prompts, so the process is kept
(one per server or worker process, started on first use) and each render is a message to it.
A render that takes longer than RENDER_SECONDS is stopped by killing the process, and one
that needs more than RENDER_BYTES ends it: either way that render fails with a reason, the
next render starts a fresh process, and the job goes on.
"""

import logging
import multiprocessing
import threading
from multiprocessing.connection import Connection
from typing import Any

logger = logging.getLogger(__name__)
RENDER_SECONDS = 2.0
RENDER_BYTES = 768 * 1024 * 1024
# Spawned, not forked: the server and the workers run threads, and a fork copies their locks.
_CONTEXT = multiprocessing.get_context("spawn")


class RenderFailed(ValueError):
    """The render broke a limit, or its template an error; the message says which."""


def _serve(connection: Connection, memory: int) -> None:
    """The render process: a template and its variables in, ("ok", text) or ("error", why) out."""
    import resource

    from jinja2 import TemplateError

    from pipeline.template_sandbox import render_bounded

    resource.setrlimit(resource.RLIMIT_AS, (memory, memory))
    while True:
        try:
            template, context = connection.recv()
        except EOFError:
            return
        try:
            connection.send(("ok", render_bounded(template, context)))
        except TemplateError as error:
            line = getattr(error, "lineno", None)
            where = f" (line {line})" if line else ""
            connection.send(("error", f"the prompt template does not render{where}: "
                                      f"{getattr(error, 'message', None) or error}"))
        except MemoryError:
            connection.send(("error", f"the prompt template needs more than "
                                      f"{memory // 2**20} MB to render"))
        except Exception as error:  # a template's own failure, whatever its kind
            connection.send(("error", f"the prompt template does not render: {error}"))


class GuardedRenderer:
    """One render process, used by one render at a time."""

    def __init__(self, seconds: float = RENDER_SECONDS, memory: int = RENDER_BYTES) -> None:
        self.seconds, self.memory = seconds, memory
        self._lock = threading.Lock()
        self._process: Any = None
        self._connection: Connection | None = None

    def render(self, template: str, context: dict[str, Any]) -> str:
        with self._lock:
            connection = self._started()
            connection.send((template, context))
            if not connection.poll(self.seconds):
                self._stop()
                raise RenderFailed(f"the prompt template did not render within "
                                   f"{self.seconds:g} s: a loop too long?")
            try:
                status, found = connection.recv()
            except (EOFError, OSError):
                self._stop()
                raise RenderFailed(f"the prompt template did not render within "
                                   f"{self.memory // 2**20} MB: a string too long?") from None
            if status != "ok":
                raise RenderFailed(found)
            return str(found)

    def _started(self) -> Connection:
        if self._process is None or not self._process.is_alive() or self._connection is None:
            self._stop()
            parent, child = _CONTEXT.Pipe()
            self._process = _CONTEXT.Process(target=_serve, args=(child, self.memory),
                                             daemon=True, name="judge-template-render")
            self._process.start()
            child.close()
            self._connection = parent
        return self._connection

    def _stop(self) -> None:
        if self._process is not None:
            if self._process.is_alive():
                logger.warning("judge template render stopped at its limit; a new render "
                               "process starts with the next render")
                self._process.kill()
            self._process.join(timeout=5)
        if self._connection is not None:
            self._connection.close()
        self._process, self._connection = None, None


renderer = GuardedRenderer()
