"""A reader's region of interest: "the edit should only be here".

Drawn on the reading screen as a rectangle or a freehand outline, in shares of the image's
width and height (0-1), so it does not depend on zoom, screen or image resolution. Turned
into a mask at the metrics' working size with scikit-image.
"""

import json
from typing import Literal

import numpy as np
from pydantic import BaseModel, Field, field_validator, model_validator
from skimage.draw import polygon

MAX_POINTS = 400  # the reading screen stops adding points there; keeps drafts small
MIN_SIDE = 0.005  # a rectangle thinner than this share of the image is a slip of the mouse
# A freehand outline enclosing less than a square of MIN_SIDE is a slip too.
MIN_AREA = MIN_SIDE * MIN_SIDE
# MAX_POINTS points as JSON text are well under this; longer text is not parsed at all.
MAX_TEXT = 20_000

Point = tuple[float, float]


class Roi(BaseModel):
    kind: Literal["rect", "freehand"]
    points: list[Point] = Field(min_length=2, max_length=MAX_POINTS)

    @field_validator("points")
    @classmethod
    def inside_the_image(cls, points: list[Point]) -> list[Point]:
        for x, y in points:
            if not (0.0 <= x <= 1.0 and 0.0 <= y <= 1.0):
                raise ValueError(f"point ({x}, {y}) lies outside the image (coordinates are 0-1)")
        return [(round(x, 4), round(y, 4)) for x, y in points]

    @model_validator(mode="after")
    def has_an_area(self) -> "Roi":
        if self.kind == "rect":
            if len(self.points) != 2:
                raise ValueError("a rectangle is two corners")
            (x0, y0), (x1, y1) = self.points
            if abs(x1 - x0) < MIN_SIDE or abs(y1 - y0) < MIN_SIDE:
                raise ValueError("the rectangle has no area")
        elif len(self.points) < 3:
            raise ValueError("a freehand region needs at least three points")
        elif _area(self.points) < MIN_AREA:
            raise ValueError("the freehand region has no area")
        return self

    def outline(self) -> list[Point]:
        """The closed outline: a rectangle's four corners, or the freehand points."""
        if self.kind == "freehand":
            return list(self.points)
        (x0, y0), (x1, y1) = self.points
        return [(x0, y0), (x1, y0), (x1, y1), (x0, y1)]

    def mask(self, height: int, width: int) -> np.ndarray:
        """Pixels inside the region, on a grid of the given size."""
        outline = self.outline()
        rows = [y * height for _, y in outline]
        cols = [x * width for x, _ in outline]
        inside = np.zeros((height, width), dtype=bool)
        rr, cc = polygon(rows, cols, shape=(height, width))
        inside[rr, cc] = True
        return inside

    def to_json(self) -> str:
        return json.dumps({"kind": self.kind, "points": [list(p) for p in self.points]},
                          separators=(",", ":"))


def parse_roi(value: object) -> object:
    """Form fields carry the region as JSON text; an empty field is no region."""
    if value is None or value == "":
        return None
    if isinstance(value, str):
        if len(value) > MAX_TEXT:
            raise ValueError(f"the region's text is longer than {MAX_TEXT} characters")
        try:
            return json.loads(value)
        except (json.JSONDecodeError, RecursionError):  # RecursionError: nested too deep
            raise ValueError("the region is not valid JSON") from None
    return value


def _area(points: list[Point]) -> float:
    """The area an outline encloses (the shoelace formula), in shares of the image."""
    x, y = np.array(points).T
    return float(abs(np.dot(x, np.roll(y, 1)) - np.dot(y, np.roll(x, 1))) / 2)
