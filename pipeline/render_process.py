"""The judge-template render process itself: ``python -m pipeline.render_process MEMORY MOST``.

It imports only the sandbox and the rubric (Jinja and the standard library), so it is ready in
a tenth of a second where a copy of the server took seconds on a busy machine. It reads one
render at a time from its stdin and answers on its stdout, each message a 4-byte length and
UTF-8 JSON (never pickle: the parent must not run what a broken sandbox could send it).

Its limits are its own: an address-space limit of MEMORY bytes, and the seconds of CPU time
each render is allowed (sent with it), counted by the kernel (ITIMER_PROF), so that a render
that waits for a core on a busy machine is not charged for the wait. An answer longer than
MOST characters is refused here, before it is sent.
"""

import json
import os
import resource
import signal
import struct
import sys
from functools import lru_cache
from typing import Any, BinaryIO

HEADER = struct.Struct(">I")


class OverTime(BaseException):
    """The render's own CPU time ran out (a BaseException: no ``except Exception`` inside
    Jinja or the sandbox may swallow it)."""


def _over_time(signum: int, frame: Any) -> None:
    raise OverTime()


def read_message(stream: BinaryIO) -> Any:
    """The next message, or None when the other side closed."""
    header = stream.read(HEADER.size)
    if len(header) < HEADER.size:
        return None
    (length,) = HEADER.unpack(header)
    body = stream.read(length)
    if len(body) < length:
        return None
    return json.loads(body)


def write_message(stream: BinaryIO, message: Any) -> None:
    body = json.dumps(message).encode()
    stream.write(HEADER.pack(len(body)) + body)
    stream.flush()


def main(argv: list[str]) -> None:
    memory, most = int(argv[0]), int(argv[1])
    # The protocol has the real stdout to itself: anything printed goes to stderr.
    answers = os.fdopen(os.dup(1), "wb")
    os.dup2(2, 1)
    asks = sys.stdin.buffer

    from jinja2 import TemplateError

    from pipeline.rubric import rubric
    from pipeline.template_sandbox import render_bounded, sandbox

    # A job renders one template thousands of times: compiled once (counted the first time).
    compiled = lru_cache(maxsize=8)(sandbox.from_string)
    questions = rubric()
    resource.setrlimit(resource.RLIMIT_AS, (memory, memory))
    signal.signal(signal.SIGPROF, _over_time)
    write_message(answers, {"ready": True})
    while True:
        asked = read_message(asks)
        if asked is None:
            return
        answer = _render(asked["template"], {**asked["context"], "rubric": questions},
                         compiled, render_bounded, TemplateError, float(asked["seconds"]), memory, most)
        write_message(answers, answer)


def _render(template: str, context: dict[str, Any], compiled: Any, render_bounded: Any,
            template_error: type[Exception], seconds: float, memory: int,
            most: int) -> dict[str, str]:
    try:
        try:
            signal.setitimer(signal.ITIMER_PROF, seconds)
            text = render_bounded(compiled(template), context)
        finally:
            signal.setitimer(signal.ITIMER_PROF, 0)
    except OverTime:
        return {"error": f"the prompt template did not render within {seconds:g} s of "
                         "computing: a loop too long?"}
    except template_error as error:
        line = getattr(error, "lineno", None)
        where = f" (line {line})" if line else ""
        return {"error": f"the prompt template does not render{where}: "
                         f"{getattr(error, 'message', None) or error}"}
    except MemoryError:
        return {"error": f"the prompt template needs more than {memory // 2**20} MB to render"}
    except Exception as error:  # a template's own failure, whatever its kind
        return {"error": f"the prompt template does not render: {error}"}
    if len(text) > most:
        return {"error": f"the rendered prompt is {len(text):,} characters; at most {most:,}"}
    return {"ok": text}


if __name__ == "__main__":
    main(sys.argv[1:])
