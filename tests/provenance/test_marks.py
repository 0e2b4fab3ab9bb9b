"""An edit's marking, read back with c2pa-python's own reader and validator."""

import hashlib
import io
import re

import numpy as np
import pytest
from PIL import Image

from app.provenance.facts import ALGORITHMIC_EDIT, TRAINED_EDIT, EditFacts
from app.provenance.marks import UnmarkableImage, mark_edit, read_mark
from tests.signing import signing_marker

FACTS = EditFacts(attempt_id=7, source_image_id=3, task_key="Te-no_0001-Lung_Lesion",
                  modality="chest_xray", disease="Lung_Lesion", direction="add", round=2,
                  instruction="Add a 2 cm nodule in the right upper lobe", model="gemini-2.5-flash-image",
                  model_version="2.5-flash-image-001", backend="gemini",
                  original_name="Chest-XRay/normal/Te-no_0001.jpeg")


def image(fmt: str, seed: int, **options: object) -> bytes:
    pixels = np.random.default_rng(seed).integers(0, 255, (64, 48), dtype=np.uint8)
    out = io.BytesIO()
    Image.fromarray(pixels).convert("RGB").save(out, fmt, **options)
    return out.getvalue()


def pixels(data: bytes) -> bytes:
    with Image.open(io.BytesIO(data)) as img:
        return img.convert("RGB").tobytes()


@pytest.mark.parametrize("fmt", ["PNG", "JPEG", "WEBP"])
def test_the_manifest_says_what_made_the_edit_from_which_original(fmt: str) -> None:
    original, edit = image("JPEG", 1), image(fmt, 2, **({"lossless": True} if fmt == "WEBP" else {}))
    marked = mark_edit(edit, original, FACTS, signing_marker().identity)
    assert pixels(marked) == pixels(edit)  # marking adds to the container, never re-encodes
    reading = read_mark(marked)
    assert reading is not None and reading.state == "Valid" and reading.self_signed
    assert reading.source_type == TRAINED_EDIT
    actions = next(a for a in reading.manifest["assertions"] if a["label"] == "c2pa.actions.v2")
    opened, edited = actions["data"]["actions"]
    assert opened["action"] == "c2pa.opened" and edited["action"] == "c2pa.edited"
    assert edited["softwareAgent"] == {"name": "gemini-2.5-flash-image", "version": "2.5-flash-image-001"}
    assert edited["parameters"] == {"instruction": FACTS.instruction, "round": 2}
    [parent] = reading.manifest["ingredients"]
    assert parent["relationship"] == "parentOf" and parent["title"] == FACTS.original_name
    assert reading.edit["original"]["sha256"] == hashlib.sha256(original).hexdigest()
    assert reading.edit["synthetic"] is True
    assert "self-signed" in reading.describe()
    # The XMP, for tools that read no C2PA: found where each format keeps it.
    with Image.open(io.BytesIO(marked)) as img:
        xmp = img.info.get("XML:com.adobe.xmp") or img.info.get("xmp")
    assert xmp is not None
    text = xmp.decode() if isinstance(xmp, bytes) else xmp
    assert re.search(r"<Iptc4xmpExt:DigitalSourceType>\s*" + re.escape(TRAINED_EDIT), text)
    assert "SYNTHETIC IMAGE" in text


def test_an_offline_edit_is_named_as_no_trained_models() -> None:
    facts = EditFacts(**{**FACTS.__dict__, "backend": "offline"})
    reading = read_mark(mark_edit(image("PNG", 2), image("PNG", 1), facts, signing_marker().identity))
    assert reading is not None and reading.source_type == ALGORITHMIC_EDIT


def test_without_its_original_the_edit_is_still_marked_and_says_so() -> None:
    reading = read_mark(mark_edit(image("PNG", 2), None, FACTS, signing_marker().identity))
    assert reading is not None and reading.state == "Valid"
    assert reading.manifest.get("ingredients", []) == []
    assert reading.edit["original"] == {"name": FACTS.original_name, "sha256": None, "missing": True}


def test_a_changed_pixel_breaks_the_signature() -> None:
    marked = bytearray(mark_edit(image("PNG", 2), image("PNG", 1), FACTS, signing_marker().identity))
    idat = marked.index(b"IDAT")
    marked[idat + 10] ^= 0xFF
    reading = read_mark(bytes(marked))
    assert reading is not None and reading.state == "Invalid"


@pytest.mark.parametrize("which", ["edit", "original"])
def test_an_image_that_is_not_one_is_refused(which: str) -> None:
    good, bad = image("PNG", 1), b"\x89PNG\r\n\x1a\nnot really"
    with pytest.raises(UnmarkableImage, match="the edit" if which == "edit" else "its original"):
        mark_edit(bad if which == "edit" else good, bad if which == "original" else good, FACTS,
                  signing_marker().identity)

