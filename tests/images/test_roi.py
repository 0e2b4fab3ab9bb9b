"""Readers' regions: validation, the mask, and SSIM outside the region from real files."""

import json
from pathlib import Path

import numpy as np
import pytest
from PIL import Image
from pydantic import ValidationError

from app.images.metrics import roi_preservation
from app.images.roi import Roi, parse_roi
from tests.images.test_metrics import noise_image


def test_a_rectangle_masks_its_share_of_the_image() -> None:
    roi = Roi(kind="rect", points=[(0.5, 0.25), (0.25, 0.75)])  # corners in any order
    mask = roi.mask(100, 200)
    assert mask.shape == (100, 200)
    assert mask.mean() == pytest.approx(0.25 * 0.5, abs=0.02)
    assert mask[50, 70] and not mask[50, 120] and not mask[10, 70]


def test_a_freehand_triangle() -> None:
    roi = Roi(kind="freehand", points=[(0, 0), (1, 0), (0, 1)])
    assert roi.mask(200, 200).mean() == pytest.approx(0.5, abs=0.02)


@pytest.mark.parametrize("value, reason", [
    ({"kind": "rect", "points": [[0.1, 0.1], [0.1, 0.5]]}, "no area"),
    ({"kind": "rect", "points": [[0.1, 0.1], [0.3, 0.5], [0.4, 0.4]]}, "two corners"),
    ({"kind": "freehand", "points": [[0.1, 0.1], [0.3, 0.5]]}, "three points"),
    ({"kind": "rect", "points": [[0.1, 0.1], [1.3, 0.5]]}, "outside the image"),
    ({"kind": "circle", "points": [[0.1, 0.1], [0.3, 0.5]]}, "rect"),
    ({"kind": "freehand", "points": [[0.5, 0.5]] * 401}, "at most 400"),
])
def test_bad_regions_are_refused_with_a_reason(value: dict, reason: str) -> None:
    with pytest.raises(ValidationError, match=reason):
        Roi.model_validate(value)


def test_form_text_is_parsed_and_empty_means_none() -> None:
    assert parse_roi("") is None and parse_roi(None) is None
    assert parse_roi('{"kind": "rect"}') == {"kind": "rect"}
    with pytest.raises(ValueError, match="not valid JSON"):
        parse_roi("{nope")
    stored = Roi(kind="rect", points=[(0.123456, 0.2), (0.5, 0.6)]).to_json()
    assert json.loads(stored) == {"kind": "rect", "points": [[0.1235, 0.2], [0.5, 0.6]]}


def write_pair(tmp_path: Path) -> tuple[Path, Path]:
    base = (noise_image() * 255).astype(np.uint8)
    edited = base.copy()
    edited[128:192, 256:320] = 250  # the change: x 0.5-0.625, y 0.25-0.375 of a 512 image
    Image.fromarray(base).save(tmp_path / "a.png")
    Image.fromarray(edited).save(tmp_path / "b.png")
    return tmp_path / "a.png", tmp_path / "b.png"


def test_ssim_outside_a_region_around_the_change_is_about_one(tmp_path: Path) -> None:
    original, edited = write_pair(tmp_path)
    around = Roi(kind="rect", points=[(0.47, 0.22), (0.66, 0.41)])
    kept = roi_preservation(original, edited, around.mask)
    assert kept.ssim_outside_roi is not None and kept.ssim_outside_roi > 0.99
    assert kept.changed_outside_roi == pytest.approx(0.0, abs=0.01)
    elsewhere = Roi(kind="rect", points=[(0.0, 0.6), (0.3, 0.9)])
    missed = roi_preservation(original, edited, elsewhere.mask)
    assert missed.ssim_outside_roi is not None and missed.ssim_outside_roi < kept.ssim_outside_roi
    assert missed.changed_outside_roi == pytest.approx(1.0)
