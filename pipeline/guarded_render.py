"""Judge templates rendered in a process of their own, under a time and a memory limit.

The budget of pipeline/template_sandbox.py bounds what a render can make; this bounds what it
can cost whatever it does. A scoring job renders thousands of prompts, so the process is kept
warm (one per server or worker process, started with it and again at once after a limit
stopped it) and each render is a message to it.

Only the render's own work counts against RENDER_SECONDS: the process is a small module
(pipeline/render_process.py) started apart from the server, its start is waited for on its own
allowance (START_SECONDS), and the limit is the CPU time the kernel counts for the render. On
a hospital server under a study, with every core busy, a render that waits for a core is not
a render that loops. A process that does not answer within WALL_TIMES its CPU allowance all
the same (stuck where no signal reaches it) is killed. Whatever the render returns is read only up to
MOST_REPLY bytes; past that the process is killed: the memory limit covers only the render
process, and the server must never take in what the sandbox let through.
"""

import json
import logging
import os
import select
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

from pipeline.render_process import HEADER

logger = logging.getLogger(__name__)
RENDER_SECONDS = 2.0  # CPU time of one render
RENDER_BYTES = 768 * 1024 * 1024
# The longest prompt a render may give back, in characters: some seventy times the judge of
# record's (2,600), and far past what a model reads with care.
MAX_PROMPT = 200_000
# In bytes on the wire: JSON may write a character as up to 12 bytes ("\ud83d\ude00").
MOST_REPLY = 12 * MAX_PROMPT + 1024
START_SECONDS = 60.0
# A render's wall-clock allowance, as a multiple of its CPU time: on two cores under a load
# of 28, a render gets about a fourteenth of a core.
WALL_TIMES = 30
# Where the pipeline package lives, so that the render process finds it from any directory.
_PACKAGE_ROOT = str(Path(__file__).resolve().parent.parent)


class RenderFailed(ValueError):
    """The render broke a limit, or its template an error; the message says which."""


class GuardedRenderer:
    """One render process, used by one render at a time."""

    def __init__(self, seconds: float = RENDER_SECONDS, memory: int = RENDER_BYTES, *,
                 start_seconds: float = START_SECONDS) -> None:
        self.seconds, self.memory = seconds, memory
        self.start_seconds = start_seconds
        self.python = sys.executable  # the interpreter the render process runs in
        self._lock = threading.Lock()
        self._process: subprocess.Popen[bytes] | None = None
        self._ready = False
        self.started = 0  # processes started, for the tests and the log

    def warm(self) -> None:
        """Start the process now (without waiting for it), so that the first render does
        not pay for it."""
        with self._lock:
            self._start()

    def render(self, template: str, context: dict[str, Any]) -> str:
        """The template rendered with ``context`` (plain JSON data; the render process adds
        the rubric, whose questions have methods a template calls)."""
        asked = json.dumps({"template": template, "context": context,
                            "seconds": self.seconds}).encode()
        with self._lock:
            process = self._start()
            if not self._ready:
                if self._read(process, self.start_seconds) is None:
                    self._stop("did not start")
                    raise RenderFailed(f"the render process did not start within "
                                       f"{self.start_seconds:g} s: the server is overloaded")
                self._ready = True
            try:
                assert process.stdin is not None
                process.stdin.write(HEADER.pack(len(asked)) + asked)
                process.stdin.flush()
            except OSError:
                self._stop("was gone")
                raise RenderFailed("the render process ended before the render: "
                                   f"it needed more than {self.memory // 2**20} MB?") from None
            wall = WALL_TIMES * self.seconds
            answer = self._read(process, wall)
            if answer is None or not ({"ok", "error"} & answer.keys()):
                self._stop("gave no answer")
                raise RenderFailed(f"the prompt template did not render within "
                                   f"{self.memory // 2**20} MB and {wall:g} s")
            if "error" in answer:
                raise RenderFailed(str(answer["error"]))
            return str(answer["ok"])

    def _read(self, process: "subprocess.Popen[bytes]", seconds: float) -> dict[str, Any] | None:
        """The process's next message, or None when it gave none in time, ended, or sent
        more than MOST_REPLY bytes."""
        assert process.stdout is not None
        deadline = time.monotonic() + seconds
        header = self._read_bytes(process.stdout.fileno(), HEADER.size, deadline)
        if header is None:
            return None
        (length,) = HEADER.unpack(header)
        if length > MOST_REPLY:
            logger.warning("judge template render answered %d bytes; at most %d", length,
                           MOST_REPLY)
            return None
        body = self._read_bytes(process.stdout.fileno(), length, deadline)
        if body is None:
            return None
        try:
            found = json.loads(body)
        except ValueError:  # not the protocol: the process is not trusted any further
            return None
        return found if isinstance(found, dict) else None

    @staticmethod
    def _read_bytes(fd: int, count: int, deadline: float) -> bytes | None:
        chunks, got = [], 0
        while got < count:
            left = deadline - time.monotonic()
            if left <= 0 or not select.select([fd], [], [], left)[0]:
                return None
            chunk = os.read(fd, count - got)
            if not chunk:
                return None
            chunks.append(chunk)
            got += len(chunk)
        return b"".join(chunks)

    def _start(self) -> "subprocess.Popen[bytes]":
        if self._process is not None and self._process.poll() is None:
            return self._process
        self._stop()
        environment = {**os.environ, "PYTHONPATH": os.pathsep.join(
            [_PACKAGE_ROOT, *filter(None, [os.environ.get("PYTHONPATH")])])}
        self._process = subprocess.Popen(
            [self.python, "-m", "pipeline.render_process", str(self.memory), str(MAX_PROMPT)],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, env=environment,
            cwd=_PACKAGE_ROOT)
        self._ready = False
        self.started += 1
        return self._process

    def _stop(self, why: str | None = None) -> None:
        process, self._process, self._ready = self._process, None, False
        if process is None:
            return
        if process.poll() is None:
            if why:
                logger.warning("judge template render process %s; stopped, and a new one "
                               "started", why)
            process.kill()
        process.wait(timeout=5)
        for stream in (process.stdin, process.stdout):
            if stream is not None:
                stream.close()
        if why:
            self._start()  # warm again at once: the next render must not pay for the start


renderer = GuardedRenderer()
