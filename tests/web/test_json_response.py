"""Every JSON answer is strict JSON: a figure not defined (NaN) or unbounded (an infinite df)
is null, where Starlette's own JSONResponse raised a ValueError and the client got a 500.
(A route that returns a plain dict is serialised by FastAPI, which writes null already.)"""

import json

import numpy as np

from app.web.json_response import StrictJSONResponse


def test_not_defined_and_unbounded_figures_are_null() -> None:
    body = StrictJSONResponse({"df": float("inf"), "p": float("nan"), "n": np.int64(3),
                               "ci": (np.float64(0.25), 0.75), 1: "keyed by a number"}).body

    def refuse(word: str) -> None:
        raise ValueError(word)
    assert json.loads(body, parse_constant=refuse) == {
        "df": None, "p": None, "n": 3, "ci": [0.25, 0.75], "1": "keyed by a number"}

