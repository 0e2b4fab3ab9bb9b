"""Preservation metrics of an edit against its original, with scikit-image.

Computed on grey values at WORK_SIDE pixels (both images resized the same way), which keeps
one 1024-pixel pair well under 100 ms where a full-resolution SSIM takes about 430 ms:

- PSNR and SSIM over the whole image;
- the changed region: the difference image, lightly smoothed so JPEG noise does not count,
  thresholded, cleared of specks, then dilated; SSIM *outside* it is MedEBench's masked
  SSIM (context preservation);
- the changed-area fraction and the number of separate changed regions (several scattered
  regions suggest changes outside the target).
"""

import hashlib
import io
from collections.abc import Callable
from dataclasses import asdict, dataclass
from pathlib import Path

import numpy as np
from PIL import Image
from scipy import ndimage
from skimage.measure import label
from skimage.metrics import peak_signal_noise_ratio, structural_similarity
from skimage.morphology import dilation, disk, remove_small_objects

WORK_SIDE = 512
THRESHOLD = 0.08  # of the full intensity range, after smoothing
SMOOTHING = 1.0  # Gaussian sigma in working pixels
MIN_REGION = 16  # working pixels: smaller changed specks are noise
DILATION = 4  # working pixels around the changed region, excluded from "outside"
# A file by name (tests, benchmarks) or the bytes read through a data root's safe open.
ImageSource = Path | bytes


def open_image(source: ImageSource) -> Image.Image:
    return Image.open(io.BytesIO(source) if isinstance(source, bytes) else source)


@dataclass(frozen=True)
class Preservation:
    psnr: float | None  # None when the images are identical (infinite PSNR)
    ssim: float
    ssim_outside: float | None  # None when the change covers everything
    changed_fraction: float
    changed_regions: int
    side: int = WORK_SIDE

    def as_dict(self) -> dict[str, float | int | None]:
        return asdict(self)


def grey(path: ImageSource, side: int = WORK_SIDE) -> np.ndarray:
    with open_image(path) as image:
        image.draft("L", (side, side))  # JPEG: decode at a reduced scale, much faster
        small = image.convert("L").resize((side, side), Image.Resampling.BILINEAR)
        return np.asarray(small, dtype=np.float32) / 255.0


# Modes of 8 bits a channel, compared as the RGBA a browser shows; wider modes as stored.
EIGHT_BIT = {"1", "L", "LA", "P", "PA", "RGB", "RGBA", "RGBX", "CMYK", "YCbCr", "La"}


def pixel_digest(source: ImageSource) -> str:
    """SHA-256 of the decoded pixels at full size: two files with one digest show the same
    image, whatever their bytes (a PNG and its re-encoding agree; two JPEGs of one image
    decoded alike agree)."""
    with open_image(source) as image:
        pixels = image.convert("RGBA") if image.mode in EIGHT_BIT else image
        digest = hashlib.sha256(f"{pixels.mode}:{pixels.size}:".encode())
        digest.update(pixels.tobytes())
        return digest.hexdigest()


def changed_mask(before: np.ndarray, after: np.ndarray) -> np.ndarray:
    diff = ndimage.gaussian_filter(np.abs(after - before), SMOOTHING)
    mask = remove_small_objects(diff > THRESHOLD, max_size=MIN_REGION - 1)
    return np.asarray(mask, dtype=bool)


def compare(before: np.ndarray, after: np.ndarray) -> Preservation:
    """Metrics for two grey images of one size."""
    mse = float(np.mean((after - before) ** 2))
    psnr = None if mse == 0 else float(peak_signal_noise_ratio(before, after, data_range=1.0))
    ssim, ssim_map = structural_similarity(before, after, data_range=1.0, full=True)
    mask = changed_mask(before, after)
    regions = int(label(mask).max())
    excluded = dilation(mask, disk(DILATION)) if mask.any() else mask
    outside = ~excluded
    ssim_outside = float(ssim_map[outside].mean()) if outside.any() else None
    return Preservation(psnr, float(ssim), ssim_outside, float(mask.mean()), regions,
                        before.shape[0])


def preservation(original: ImageSource, edited: ImageSource) -> Preservation:
    with open_image(original) as image:
        # Never upsample: a small image is measured at its own size.
        side = min(WORK_SIDE, max(image.size))
    return compare(grey(original, side), grey(edited, side))


def ssim_outside_roi(before: np.ndarray, after: np.ndarray, roi: np.ndarray) -> float | None:
    """SSIM outside a reader's region ("the edit should only be here"): any change outside
    it lowers the figure, wherever the edit put it."""
    _, ssim_map = structural_similarity(before, after, data_range=1.0, full=True)
    outside = ~roi
    return float(ssim_map[outside].mean()) if outside.any() else None


@dataclass(frozen=True)
class RoiPreservation:
    ssim_outside_roi: float | None  # None when the region covers the whole image
    changed_outside_roi: float | None  # None when the edit changed nothing
    side: int


def roi_preservation(original: ImageSource, edited: ImageSource, roi_mask: Callable[[int, int], np.ndarray]
                     ) -> RoiPreservation:
    """How well an edit kept to a reader's region, at the same working size as
    :func:`preservation`; ``roi_mask(height, width)`` draws the region on that grid."""
    with open_image(original) as image:
        side = min(WORK_SIDE, max(image.size))
    before, after = grey(original, side), grey(edited, side)
    roi = roi_mask(side, side)
    changed = changed_mask(before, after)
    outside_share = float((changed & ~roi).sum() / changed.sum()) if changed.any() else None
    return RoiPreservation(ssim_outside_roi(before, after, roi), outside_share, side)


# How far from the changed region a click may land and still find it, as a share of the
# image's side: a reader points at a finding, not at its edge pixel.
CLICK_TOLERANCE = 0.03


def change_region(original: ImageSource, edited: ImageSource,
                  tolerance: float = CLICK_TOLERANCE) -> np.ndarray | None:
    """Where a click finds the edit's change: the changed mask of :func:`compare` at the
    working side, widened by ``tolerance`` (every pixel within that distance of it); None
    when the edit changed nothing measurable, so there is nothing to find."""
    with open_image(original) as image:
        side = min(WORK_SIDE, max(image.size))
    mask = changed_mask(grey(original, side), grey(edited, side))
    if not mask.any():
        return None
    reach = max(0, round(tolerance * side))
    # The distance to the mask: the same set as a dilation by disk(reach), in a tenth the time.
    return mask | (ndimage.distance_transform_edt(~mask) <= reach) if reach else mask


def click_in(region: np.ndarray, x: float, y: float) -> bool:
    """Whether a click at (x, y), each 0 to 1 across the image, falls in the region."""
    if not (0 <= x <= 1 and 0 <= y <= 1):
        raise ValueError(f"a click is inside the image: 0 to 1 each way, not ({x:g}, {y:g})")
    rows, columns = region.shape
    return bool(region[min(rows - 1, int(y * rows)), min(columns - 1, int(x * columns))])

