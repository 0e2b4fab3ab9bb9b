"""Strict JSON (RFC 8259), for every ``--json`` option and every response a route builds
itself: a figure that is not defined (NaN: a single modality has no between-modality mean
square) or unbounded (Hillis's df when every reader's AUC is the same) is null. Python's json
module writes the bare words NaN and Infinity, which jq, JavaScript's JSON.parse and R's
jsonlite refuse, and Starlette's JSONResponse raises a ValueError on them (a 500)."""

from typing import Any

import orjson

_OPTIONS = orjson.OPT_SERIALIZE_NUMPY | orjson.OPT_NON_STR_KEYS


def json_bytes(value: Any) -> bytes:
    """``value`` as compact JSON, for a response body."""
    return orjson.dumps(value, option=_OPTIONS)


def json_text(value: Any) -> str:
    """``value`` as indented JSON, for people and files, with no newline at the end."""
    return orjson.dumps(value, option=_OPTIONS | orjson.OPT_INDENT_2).decode()
