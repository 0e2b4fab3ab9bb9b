"""One image as a real-or-edited study shows it: re-encoded so that nothing but its pixels can
tell an edit from an original.

An original and an edit differ in ways a reader (or their browser's developer tools) could
read without looking at the image: the edit may come back from the image model as PNG, as
RGB where the X-ray was greyscale, at another size, without the original's EXIF, ICC profile
or comment, at another JPEG quality or progressive. Every image shown is therefore decoded,
turned upright by its EXIF orientation, converted to the mode and resized to the pixel size
of the task's original, and written as a baseline JPEG with fixed settings and no metadata
at all, then padded to a whole number of size steps. Two images of one size and mode then
carry byte-identical headers, and mostly the same length; only the coded pixels differ.
"""

import io

from PIL import Image, ImageOps

from app.images.metrics import ImageSource, open_image

QUALITY = 90
SUBSAMPLING = 2  # 4:2:0, Pillow's default, fixed so it never follows the source's
# Longest side shown: larger originals are scaled down (every image of the task alike).
MAX_SIDE = 2048
# Every file is padded with zero bytes after its end-of-image marker to a whole number of
# these: what is left of the size is the pixels' entropy, in steps too coarse to read.
# Browsers and Pillow ignore bytes after the end-of-image marker.
SIZE_STEP = 64 * 1024


def shown_format(original: ImageSource) -> tuple[tuple[int, int], str]:
    """The (width, height) and mode every image of this original's task is shown at: the
    original's upright size, and greyscale when the original is."""
    with open_image(original) as image:
        upright = ImageOps.exif_transpose(image)
        grey = upright.mode in ("L", "I", "I;16", "F", "1") or _looks_grey(upright)
        width, height = upright.size
        scale = min(1.0, MAX_SIDE / max(width, height))
        return (max(1, round(width * scale)), max(1, round(height * scale))), "L" if grey else "RGB"


def _looks_grey(image: Image.Image) -> bool:
    if image.mode not in ("RGB", "RGBA", "P"):
        return False
    small = image.convert("RGB").resize((64, 64))
    red, green, blue = small.split()
    return red.tobytes() == green.tobytes() == blue.tobytes()


def blinded_jpeg(source: ImageSource, size: tuple[int, int], mode: str) -> bytes:
    with open_image(source) as image:
        upright = ImageOps.exif_transpose(image)
        pixels = upright.convert(mode)
        if pixels.size != size:
            pixels = pixels.resize(size, Image.Resampling.LANCZOS)
        # A fresh image: nothing of the source's info (EXIF, ICC, comment, dpi) travels along.
        clean = Image.new(mode, size)
        clean.paste(pixels)
        out = io.BytesIO()
        clean.save(out, format="JPEG", quality=QUALITY, subsampling=SUBSAMPLING,
                   optimize=False, progressive=False)
        coded = out.getvalue()
        return coded + bytes(-len(coded) % SIZE_STEP)
