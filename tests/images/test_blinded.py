"""Blinded re-encoding: an original with every kind of metadata and an edit that came back as
an RGB PNG of another size end up as JPEGs whose bytes differ only in the coded pixels."""

import io
import struct

from PIL import Image

from app.images.blinded import blinded_jpeg, shown_format


def _headers(jpeg: bytes) -> list[tuple[int, bytes]]:
    """Every segment before the scan data: (marker, its bytes)."""
    assert jpeg[:2] == b"\xff\xd8"
    found, at = [], 2
    while True:
        marker = jpeg[at + 1]
        length = struct.unpack(">H", jpeg[at + 2:at + 4])[0]
        found.append((marker, jpeg[at:at + 2 + length]))
        if marker == 0xDA:  # start of scan: the coded pixels follow
            return found
        at += 2 + length


def _original() -> bytes:
    image = Image.new("L", (300, 200), 90)
    image.paste(180, (40, 40, 120, 120))
    exif = Image.Exif()
    exif[0x010F] = "Scanner Co"  # Make
    exif[0x0131] = "edit-suite 2.1"  # Software
    out = io.BytesIO()
    image.save(out, format="JPEG", quality=72, progressive=True, exif=exif.tobytes(),
               comment=b"chr-000607 original", dpi=(300, 300))
    return out.getvalue()


def _edit() -> bytes:
    image = Image.new("RGB", (1024, 1024), (92, 90, 91))
    image.paste((200, 60, 60), (500, 500, 700, 700))
    out = io.BytesIO()
    image.save(out, format="PNG", pnginfo=None)
    return out.getvalue()


def test_an_original_and_an_edit_differ_only_in_their_pixels() -> None:
    original, edit = _original(), _edit()
    size, mode = shown_format(original)
    assert (size, mode) == ((300, 200), "L")
    shown_original, shown_edit = blinded_jpeg(original, size, mode), blinded_jpeg(edit, size, mode)
    assert _headers(shown_original) == _headers(shown_edit)
    markers = [m for m, _ in _headers(shown_original)]
    assert 0xE1 not in markers and 0xFE not in markers and 0xE2 not in markers  # no EXIF, comment, ICC
    assert 0xC2 not in markers and 0xC0 in markers  # baseline, never progressive
    for data in (shown_original, shown_edit):
        with Image.open(io.BytesIO(data)) as image:
            assert image.size == (300, 200) and image.mode == "L"
            assert not image.info.get("exif") and not image.getexif()
            assert "comment" not in image.info and "icc_profile" not in image.info


def test_a_greyscale_picture_stored_as_rgb_is_shown_grey() -> None:
    rgb_grey = Image.new("RGB", (64, 48), (120, 120, 120))
    out = io.BytesIO()
    rgb_grey.save(out, format="PNG")
    assert shown_format(out.getvalue()) == ((64, 48), "L")
    fundus = Image.new("RGB", (64, 48), (160, 70, 40))
    out = io.BytesIO()
    fundus.save(out, format="PNG")
    assert shown_format(out.getvalue()) == ((64, 48), "RGB")


def test_exif_orientation_is_applied_then_dropped() -> None:
    image = Image.new("L", (40, 20), 10)
    exif = Image.Exif()
    exif[0x0112] = 6  # rotated 90 degrees: shown 20 x 40
    out = io.BytesIO()
    image.save(out, format="JPEG", exif=exif.tobytes())
    size, mode = shown_format(out.getvalue())
    assert size == (20, 40)
    with Image.open(io.BytesIO(blinded_jpeg(out.getvalue(), size, mode))) as shown:
        assert shown.size == (20, 40) and not shown.getexif()


def test_both_files_are_padded_to_the_same_size_step() -> None:
    from app.images.blinded import SIZE_STEP

    original, edit = _original(), _edit()
    size, mode = shown_format(original)
    shown = [blinded_jpeg(original, size, mode), blinded_jpeg(edit, size, mode)]
    assert {len(data) for data in shown} == {SIZE_STEP}  # small images: one step each
    for data in shown:
        end = data.rindex(b"\xff\xd9")
        assert set(data[end + 2:]) <= {0}  # only zeros after the end-of-image marker
        with Image.open(io.BytesIO(data)) as image:
            image.load()


def test_a_large_original_is_shown_at_most_max_side() -> None:
    from app.images.blinded import MAX_SIDE

    big = io.BytesIO()
    Image.new("L", (4096, 3072), 40).save(big, format="PNG")
    size, mode = shown_format(big.getvalue())
    assert size == (MAX_SIDE, MAX_SIDE * 3 // 4) and mode == "L"
