"""Builders for hand-made runs in the scripts' layout and the paper's schema."""

import json
from pathlib import Path
from typing import Any

from PIL import Image

from app.importer import layout
from app.models import Direction


def jpeg(path: Path, shade: int = 90, size: int = 32) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    Image.new("RGB", (size, size), (shade, shade, shade)).save(path, "JPEG", quality=95)
    return path


def verification(qualified: bool, has_disease: bool = True, **extra: Any) -> dict[str, Any]:
    return {"qualified": qualified, "has_disease": has_disease, "structure_reasonable": True,
            "looks_realistic": qualified, "reason": "reason text", "thinking_summary": "thinking",
            **extra}


def round_entry(number: int, qualified: bool, prompt: str = "Add a finding",
                **verdict: Any) -> dict[str, Any]:
    return {"round": number,
            "generate_prompt": {"thinking_summary": f"thought {number}", "prompt": prompt},
            "edit_result": {"success": True},
            "verification": verification(qualified, **verdict)}


def conversation(image: str, disease: str, status: str, rounds: list[dict[str, Any]]) -> dict[str, Any]:
    return {"image": image, "disease": disease, "status": status, "rounds": rounds,
            "final_prompt": rounds[-1]["generate_prompt"]["prompt"] if rounds else "",
            "final_image_path": "/somewhere/else/entirely.jpeg"}


def write_folder(run: Path, dataset: str, direction: Direction,
                 conversations: dict[str, Any] | str, progress: dict[str, str] | None = None,
                 api_failures: list[dict[str, Any]] | None = None) -> Path:
    """Write one {dataset}-{edit|remove} folder; a str is written verbatim (for broken JSON)."""
    folder = run / f"{dataset}-{layout.DISK_DIRECTION[direction]}"
    folder.mkdir(parents=True, exist_ok=True)
    body = conversations if isinstance(conversations, str) else json.dumps(conversations)
    (folder / "all_conversations.json").write_text(body)
    if progress is not None:
        (folder / "progress.json").write_text(json.dumps(progress))
    if api_failures is not None:
        (folder / "api_failures.json").write_text(json.dumps(api_failures))
    return folder


def write_images(run: Path, dataset: str, direction: Direction, stem: str, disease: str,
                 failed_rounds: list[int], accepted: bool) -> None:
    for k in failed_rounds:
        jpeg(run / layout.failed_relpath(dataset, direction, stem, disease, k), shade=60 + k)
    if accepted:
        jpeg(run / layout.accepted_relpath(dataset, direction, stem, disease), shade=200)
