"""The one logging configuration: plain text lines, or one JSON object per line.

Configured by the CLI before anything runs and by the app factory (each server process),
through the standard logging module only; every record passes through the redaction filter,
so a secret that reaches a message never reaches the log.
"""

import logging
import sys
from typing import Any

from pythonjsonlogger.json import JsonFormatter

from app.settings import Settings
from pipeline.redaction import redact

TEXT_FORMAT = "%(asctime)s %(levelname)s %(name)s: %(message)s"
JSON_FIELDS = "%(asctime)s %(levelname)s %(name)s %(message)s"
# Marks our handler, so configuring twice (CLI, then the app factory) replaces it.
HANDLER_NAME = "medbanana"
# Libraries that log every connection or query at INFO.
QUIET_LOGGERS = ("httpx", "httpcore", "httpx2", "httpcore2", "google_genai", "alembic.runtime.migration",
                 "alembic.runtime.plugins",
                 "multipart")


class StderrHandler(logging.StreamHandler):
    """Writes to whatever sys.stderr is when a record comes (test runners and daemon managers
    replace it), never to a stream closed since."""

    @property
    def stream(self) -> Any:
        return sys.stderr

    @stream.setter
    def stream(self, _value: Any) -> None:
        pass


class RedactSecrets(logging.Filter):
    """Takes credentials out of the message and the traceback before any handler formats them."""

    def filter(self, record: logging.LogRecord) -> bool:
        message = record.getMessage()
        cleaned = redact(message)
        if cleaned != message:
            record.msg, record.args = cleaned, None
        if record.exc_info and record.exc_info[1] is not None:
            record.exc_text = redact(logging.Formatter().formatException(record.exc_info))
            record.exc_info = None
        return True


class DropUvicornDuplicates(logging.Filter):
    """The request middleware logs a failed request with its traceback; uvicorn would log the
    same exception a second time."""

    def filter(self, record: logging.LogRecord) -> bool:
        return not (record.name == "uvicorn.error"
                    and str(record.msg).startswith("Exception in ASGI application"))


def configure_logging(settings: Settings) -> None:
    if settings.log_format == "json":
        formatter: logging.Formatter = JsonFormatter(
            JSON_FIELDS, rename_fields={"asctime": "time", "levelname": "level", "name": "logger"})
    else:
        formatter = logging.Formatter(TEXT_FORMAT)
    handler = StderrHandler()
    handler.name = HANDLER_NAME
    handler.setFormatter(formatter)
    handler.addFilter(RedactSecrets())
    handler.addFilter(DropUvicornDuplicates())
    root = logging.getLogger()
    for old in [h for h in root.handlers if h.name == HANDLER_NAME]:
        root.removeHandler(old)
    root.addHandler(handler)
    root.setLevel(settings.log_level)
    for name in QUIET_LOGGERS:
        logging.getLogger(name).setLevel(max(logging.WARNING, root.level))
    # uvicorn's own handlers (when it configured them) would print each line twice.
    for name in ("uvicorn", "uvicorn.error", "uvicorn.access"):
        logging.getLogger(name).handlers.clear()
        logging.getLogger(name).propagate = True
