"""A read's mark: other bytes, the very same pixels, and a padded file's length kept."""

import io

import numpy as np
from PIL import Image

from app.images.blinded import SIZE_STEP
from app.images.read_marks import MARK_BYTES, marked, read_mark


def encoded(fmt: str) -> bytes:
    pixels = (np.arange(64 * 48 * 3) % 251).astype(np.uint8).reshape(48, 64, 3)
    out = io.BytesIO()
    Image.fromarray(pixels).save(out, fmt)
    return out.getvalue()


def decoded(data: bytes) -> bytes:
    with Image.open(io.BytesIO(data)) as image:
        image.load()  # a PNG chunk with a wrong CRC fails here
        return image.tobytes()


def test_two_reads_get_other_bytes_and_the_same_pixels() -> None:
    for fmt in ("JPEG", "PNG"):
        data = encoded(fmt)
        a, b = (marked(data, read_mark(read, "tag")) for read in ("read-1", "read-2"))
        assert len({data, a, b}) == 3, fmt
        assert decoded(a) == decoded(b) == decoded(data), fmt
        assert marked(data, read_mark("read-1", "tag")) == a  # the same read, the same bytes


def test_a_padded_jpeg_keeps_its_length() -> None:
    data = encoded("JPEG")
    padded = data + bytes(-len(data) % SIZE_STEP)
    if len(padded) - len(data) < MARK_BYTES:
        padded += bytes(SIZE_STEP)
    out = marked(padded, read_mark("read", "tag"))
    assert len(out) == len(padded) and len(out) % SIZE_STEP == 0 and out != padded
    assert decoded(out) == decoded(data)
    exact = data + bytes(SIZE_STEP - len(data) % SIZE_STEP - 3)  # too little room left
    exact += bytes(-len(exact) % SIZE_STEP)
    assert len(marked(exact, read_mark("read", "tag"))) % SIZE_STEP == 0


def test_other_bytes_are_left_alone() -> None:
    assert marked(b"not an image", read_mark("read", "tag")) == b"not an image"
