"""The JSON a route builds itself (figures, health checks), strict (app/strict_json.py). A
route returning a plain dict is serialised by FastAPI, which writes null already."""

from typing import Any

from fastapi.responses import JSONResponse

from app.strict_json import json_bytes


class StrictJSONResponse(JSONResponse):
    def render(self, content: Any) -> bytes:
        return json_bytes(content)
