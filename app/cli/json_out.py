"""What every ``--json`` option prints: strict JSON (RFC 8259). A figure that is not defined
(NaN: a single modality has no between-modality mean square) or unbounded (Hillis's df when
every reader's AUC is the same) is null. Python's json module writes the bare words NaN and
Infinity, which jq, JavaScript's JSON.parse and R's jsonlite refuse."""

from typing import Any

import orjson

_OPTIONS = orjson.OPT_INDENT_2 | orjson.OPT_SERIALIZE_NUMPY | orjson.OPT_NON_STR_KEYS


def json_text(value: Any) -> str:
    """``value`` as indented JSON, with no newline at the end."""
    return orjson.dumps(value, option=_OPTIONS).decode()
