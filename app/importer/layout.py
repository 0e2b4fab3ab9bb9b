"""The on-disk layout of a Med-Banana run (../shared/medbanana-format.md, sections 1-2).

File names are always *built* from a record's ``image`` and ``disease`` fields, never split
from task keys (stems contain ``-``) and never taken from ``final_image_path``.
"""

import re
from pathlib import PurePosixPath

from app.models import Direction, Modality

# The scripts write "edit" on disk for an addition.
DISK_DIRECTION = {Direction.add: "edit", Direction.remove: "remove"}
RUN_FOLDER = re.compile(r"^(?P<dataset>.+)-(?P<direction>edit|remove)$")
NORMAL = "normal"
ACCEPTED_SUFFIX = ".jpeg"
# An edited image that is not a JPEG keeps its own suffix (app/images/files.py FORMATS).
OTHER_IMAGE_SUFFIXES = (".png", ".webp")
IMAGE_SUFFIXES = (".jpeg", ".jpg", ".png")
MAX_NAME = 255
# Written by `medbanana demo-data` into both roots, so every page can label the data synthetic.
SYNTHETIC_MARKER = "MEDBANANA_SYNTHETIC_DEMO.txt"


def parse_run_folder(name: str) -> tuple[str, Direction] | None:
    """``Chest-XRay-edit`` -> (``Chest-XRay``, add); None for anything else."""
    match = RUN_FOLDER.match(name)
    if not match:
        return None
    direction = Direction.add if match["direction"] == "edit" else Direction.remove
    return match["dataset"], direction


def infer_modality(dataset: str) -> Modality:
    """The scripts' own rule, in their order of precedence."""
    lowered = dataset.lower()
    if "mimic" in lowered or "chest" in lowered:
        return Modality.chest_xray
    if "brain" in lowered or "tumor" in lowered:
        return Modality.brain_mri
    if "odir" in lowered or "fundus" in lowered:
        return Modality.fundus
    return Modality.medical


def is_safe_name(name: object) -> bool:
    """A single path component: no separators, no parent references, nothing hidden."""
    return (
        isinstance(name, str)
        and 0 < len(name) <= MAX_NAME
        and "/" not in name
        and "\\" not in name
        and "\x00" not in name
        and not name.startswith(".")
    )


def stem_of(image: str) -> str:
    return PurePosixPath(image).stem


def source_category(direction: Direction, disease: str) -> str:
    """Additions start from a healthy image; removals from an image of that disease."""
    return NORMAL if direction is Direction.add else disease


def _output_folder(direction: Direction, disease: str) -> str:
    return disease if direction is Direction.add else NORMAL


def accepted_relpath(dataset: str, direction: Direction, stem: str, disease: str) -> str:
    d = DISK_DIRECTION[direction]
    folder = _output_folder(direction, disease)
    return f"{dataset}-{d}/{folder}/{stem}-{disease}-{d}{ACCEPTED_SUFFIX}"


def failed_relpath(dataset: str, direction: Direction, stem: str, disease: str, k: int) -> str:
    d = DISK_DIRECTION[direction]
    folder = _output_folder(direction, disease)
    return f"{dataset}-{d}-failed/{folder}/{stem}-{disease}-{d}-failed-{k}{ACCEPTED_SUFFIX}"


def paper_image_names(image_id: str, disease: str, direction: Direction, k: int | None) -> str:
    """The paper's naming, ``{image_id}-{disease}-{task}[-failed-{round}].jpeg``."""
    failed = f"-failed-{k}" if k is not None else ""
    return f"{image_id}-{disease}-{direction.value}{failed}{ACCEPTED_SUFFIX}"


def paper_image_candidates(
    dataset: str, direction: Direction, image_id: str, disease: str, k: int | None
) -> list[str]:
    """Where a paper-schema image may lie: the scripts' folders, under either naming."""
    d = DISK_DIRECTION[direction]
    folder = _output_folder(direction, disease)
    base = f"{dataset}-{d}-failed" if k is not None else f"{dataset}-{d}"
    paper_name = paper_image_names(image_id, disease, direction, k)
    scripts_name = (
        failed_relpath(dataset, direction, image_id, disease, k).rsplit("/", 1)[1]
        if k is not None
        else accepted_relpath(dataset, direction, image_id, disease).rsplit("/", 1)[1]
    )
    return [
        f"{base}/{folder}/{paper_name}",
        f"{base}/{folder}/{scripts_name}",
        f"{base}/{paper_name}",
        paper_name,
    ]
