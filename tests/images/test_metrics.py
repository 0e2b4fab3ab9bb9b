"""Preservation metrics on synthetic pairs with known answers."""

from pathlib import Path

import numpy as np
import pytest
from PIL import Image

from app.images.metrics import WORK_SIDE, compare, preservation, ssim_outside_roi


def noise_image(seed: int = 1) -> np.ndarray:
    rng = np.random.default_rng(seed)
    smooth = np.cumsum(np.cumsum(rng.normal(0, 1, (WORK_SIDE, WORK_SIDE)), 0), 1)
    smooth = (smooth - smooth.min()) / np.ptp(smooth)
    return (0.2 + 0.6 * smooth + rng.normal(0, 0.01, smooth.shape)).astype(np.float32)


def test_identical_images() -> None:
    image = noise_image()
    result = compare(image, image.copy())
    assert result.ssim == pytest.approx(1.0) and result.ssim_outside == pytest.approx(1.0)
    assert result.psnr is None and result.changed_fraction == 0 and result.changed_regions == 0


def test_a_change_confined_to_a_square() -> None:
    before = noise_image()
    after = before.copy()
    after[100:164, 200:264] += 0.3  # a 64 x 64 square: 1/64 of the image
    result = compare(before, after)
    assert result.changed_fraction == pytest.approx(64 * 64 / WORK_SIDE**2, rel=0.15)
    assert result.changed_regions == 1
    assert result.ssim_outside is not None and result.ssim_outside > 0.99
    assert result.ssim < result.ssim_outside


def test_scattered_changes_are_counted_and_a_roi_can_be_excluded() -> None:
    before = noise_image()
    after = before.copy()
    for y, x in ((50, 50), (300, 80), (420, 400)):
        after[y:y + 30, x:x + 30] -= 0.25
    result = compare(before, after)
    assert result.changed_regions == 3
    # A reader's ROI around the first change only: the other two lie outside it.
    roi = np.zeros_like(before, dtype=bool)
    roi[40:90, 40:90] = True
    everything = np.zeros_like(roi)
    for y, x in ((50, 50), (300, 80), (420, 400)):
        everything[y - 10:y + 40, x - 10:x + 40] = True
    assert ssim_outside_roi(before, after, roi) < ssim_outside_roi(before, after, everything)
    assert ssim_outside_roi(before, after, everything) == pytest.approx(1.0, abs=0.01)


def test_from_files_at_full_resolution(tmp_path: Path) -> None:
    base = (noise_image() * 255).astype(np.uint8)
    Image.fromarray(base).resize((1024, 1024)).convert("RGB").save(tmp_path / "a.jpeg", quality=95)
    edited = base.copy()
    edited[200:260, 200:260] = 250
    Image.fromarray(edited).resize((1024, 1024)).convert("RGB").save(tmp_path / "b.jpeg", quality=95)
    result = preservation(tmp_path / "a.jpeg", tmp_path / "b.jpeg")
    assert result.side == WORK_SIDE and result.changed_regions == 1
    assert result.changed_fraction == pytest.approx(60 * 60 / WORK_SIDE**2, rel=0.3)


def test_a_click_finds_the_change_or_misses_it(tmp_path: Path) -> None:
    from app.images.metrics import change_region, click_in

    original = Image.new("L", (400, 400), 80)
    edited = original.copy()
    edited.paste(220, (250, 60, 330, 140))  # the finding: x 0.625-0.825, y 0.15-0.35
    a, b = tmp_path / "a.png", tmp_path / "b.png"
    original.save(a)
    edited.save(b)
    region = change_region(a, b)
    assert region is not None
    assert click_in(region, 0.72, 0.25) is True
    assert click_in(region, 0.84, 0.25) is True  # just beside it, within the tolerance
    assert click_in(region, 0.2, 0.8) is False
    assert change_region(a, a) is None  # nothing changed: nothing to find
    with pytest.raises(ValueError, match=r"not \(1\.2, 0\.5\)"):
        click_in(region, 1.2, 0.5)
