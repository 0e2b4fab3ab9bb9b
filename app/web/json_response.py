"""The JSON a route builds itself (figures, health checks): strict JSON, where a figure that
is not defined (NaN) or unbounded (Hillis's df when every reader agrees exactly) is null.
Starlette's JSONResponse refuses such a float with a ValueError, which reached the client as
a 500; Python's json module without that check writes the bare words NaN and Infinity, which
browsers' JSON.parse refuses. (A route returning a plain dict is serialised by FastAPI, which
writes null already.)"""

from typing import Any

import orjson
from fastapi.responses import JSONResponse

_OPTIONS = orjson.OPT_SERIALIZE_NUMPY | orjson.OPT_NON_STR_KEYS


class StrictJSONResponse(JSONResponse):
    def render(self, content: Any) -> bytes:
        return orjson.dumps(content, option=_OPTIONS)
