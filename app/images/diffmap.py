"""The difference map of an edit: |edit - original|, colour-mapped, transparent where
nothing changed, so the viewer can lay it over either image at any opacity.

Drawn once per pair and size, cached on disk under a name made from both files' identities,
and served like any cached image afterwards.
"""

from pathlib import Path

import numpy as np
from matplotlib import colormaps
from PIL import Image
from sqlmodel import Session

from app.images.files import (
    SIZE_PIXELS,
    ImageFile,
    ImageKind,
    ImageNotFound,
    ImageSize,
    resolve_image,
    source_of_attempt,
    write_cached,
)
from app.memo import Memo

FULL_SCALE = 0.25  # a change of a quarter of the intensity range shows at full colour
COLOURMAP = "inferno"
VERSION = "v2"  # in the cached file name: bumped when the drawing changes


def _rgb(source: ImageFile, shape: tuple[int, int]) -> np.ndarray:
    with source.open() as handle, Image.open(handle) as image:
        image.draft("RGB", shape)
        rgb = np.asarray(image.convert("RGB").resize(shape, Image.Resampling.BILINEAR),
                         dtype=np.float32) / 255.0
    return rgb


def _shape(original: ImageFile, side: int) -> tuple[int, int]:
    """The original's proportions, at most ``side`` pixels long: the viewer lays the map
    over the original's own box, so a non-square image stays aligned."""
    with original.open() as handle, Image.open(handle) as image:
        width, height = image.size
    scale = min(1.0, side / max(width, height))
    return max(1, round(width * scale)), max(1, round(height * scale))


def diff_file(original: ImageFile, edited: ImageFile, size: ImageSize, cache_dir: Path) -> Path:
    side = SIZE_PIXELS.get(size, 1024)
    target = cache_dir / "diff" / size.value / f"{original.etag}-{edited.etag}-{VERSION}.png"
    if target.is_file():
        return target
    target.parent.mkdir(parents=True, exist_ok=True)
    try:
        shape = _shape(original, side)
        # The largest channel difference, so a colour shift in a fundus shows as much as a
        # change of brightness in a radiograph.
        magnitude = np.abs(_rgb(edited, shape) - _rgb(original, shape)).max(axis=2)
    except (OSError, Image.DecompressionBombError) as error:
        raise ImageNotFound(f"the image file cannot be decoded: {error}") from None
    level = np.clip(magnitude / FULL_SCALE, 0, 1)
    rgba = colormaps[COLOURMAP](level)
    rgba[..., 3] = np.clip(level * 1.5, 0, 1)  # no change: fully transparent
    # Below the visible level, colour and alpha are exactly zero: JPEG noise is no change,
    # and uniform runs compress the PNG several times, so cached maps are sent quickly.
    rgba[level < 0.04] = 0
    image = Image.fromarray((rgba * 255).astype(np.uint8), "RGBA")
    return write_cached(target, lambda out: image.save(out, "PNG", optimize=False))


def drawn_diff(original: ImageFile, edited: ImageFile, size: ImageSize,
               cache_dir: Path) -> tuple[Path, str]:
    """The map's file (drawn on first use) and its ETag, made of the two images' hashes."""
    return (diff_file(original, edited, size, cache_dir),
            f'"diff-{original.etag}-{edited.etag}-{size.value}"')


# Attempt and size -> the cached map and its ETag: a repeat request touches no table. An
# attempt's image and its original never change (a new edit is a new attempt), so this
# cannot go stale; a deleted cache file is simply drawn again.
DIFFS_KEPT = 4096
_drawn: Memo[tuple[Path, str]] = Memo(DIFFS_KEPT)


def attempt_diff(session: Session, attempt_id: int, size: ImageSize,
                 cache_dir: Path) -> tuple[Path, str]:
    """An attempt's map against its task's original (ImageNotFound if either is missing)."""
    known = _drawn.get((attempt_id, size))
    if known is None or not known[0].is_file():
        edited = resolve_image(session, ImageKind.attempt, attempt_id)
        original = resolve_image(session, ImageKind.source,
                                 source_of_attempt(session, attempt_id))
        known = drawn_diff(original, edited, size, cache_dir)
        _drawn.put((attempt_id, size), known)
    return known
