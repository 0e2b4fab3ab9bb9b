"""The JSON files of one run folder as the generation scripts write them
(../shared/medbanana-format.md): what the demo generator and `export-run` both write, and the
importer (app/importer/scripts_format.py) reads back."""

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from app.importer import layout
from app.models import Direction


@dataclass
class ScriptsFolder:
    """One ``<dataset>-<edit|remove>`` folder's records, gathered task by task."""

    conversations: dict[str, Any] = field(default_factory=dict)
    final_prompts: dict[str, Any] = field(default_factory=dict)
    progress: dict[str, str] = field(default_factory=dict)
    api_failures: list[dict[str, Any]] = field(default_factory=list)
    failed_summary: list[dict[str, Any]] = field(default_factory=list)

    def api_failure(self, task_key: str, image: str, disease: str, *, step: str, round: int,
                    error: str) -> None:
        """A task whose run ended on a call that failed for good."""
        self.progress[task_key] = "api_failed"
        self.api_failures.append({"task": task_key, "step": step, "round": round,
                                  "error": error, "image": image, "disease": disease})

    def judged(self, task_key: str, image: str, disease: str, rounds: list[dict[str, Any]], *,
               success: bool, final_image: str,
               failed_call: tuple[str, int, str] | None = None) -> None:
        """A task's rounds (each as the scripts' conversation entry) and how it ended;
        ``final_image`` is the relpath under img_gen/ of its last edit. ``failed_call`` (step,
        round, error): the run ended on a call that failed after these rounds, which the
        scripts list as an API failure, not as a rejected task."""
        status = "success" if success else "failed"
        final_prompt = rounds[-1]["generate_prompt"]["prompt"] if rounds else ""
        self.conversations[task_key] = {
            "image": image, "disease": disease, "status": status, "rounds": rounds,
            "final_prompt": final_prompt, "final_image_path": f"img_gen/{final_image}"}
        self.final_prompts[task_key] = {"image": image, "disease": disease, "status": status,
                                        "final_prompt": final_prompt, "rounds": len(rounds)}
        self.progress[task_key] = status
        if failed_call is not None:
            step, round, error = failed_call
            self.api_failure(task_key, image, disease, step=step, round=round, error=error)
        elif not success:
            self.failed_summary.append({
                "task": task_key, "image": image, "disease": disease,
                "final_prompt": final_prompt, "rounds": len(rounds),
                "last_verification": rounds[-1].get("verification") if rounds else None,
                "final_image_path": f"img_gen/{final_image}", "full_conversation": rounds})

    def write(self, run: Path, dataset: str, direction: Direction) -> None:
        name = f"{dataset}-{layout.DISK_DIRECTION[direction]}"
        folder, failed = run / name, run / f"{name}-failed"
        for target in (folder, failed):
            target.mkdir(parents=True, exist_ok=True)
        for path, value in ((folder / "all_conversations.json", self.conversations),
                            (folder / "final_prompts.json", self.final_prompts),
                            (folder / "progress.json", self.progress),
                            (folder / "api_failures.json", self.api_failures),
                            (failed / "failed_summary.json", self.failed_summary)):
            path.write_text(json.dumps(value, indent=2, ensure_ascii=False))


def final_image(dataset: str, direction: Direction, stem: str, disease: str, *, success: bool,
                rounds: int) -> str:
    """Where a task's last edit is, under img_gen/: the accepted name, or its last round's."""
    if success:
        return layout.accepted_relpath(dataset, direction, stem, disease)
    return layout.failed_relpath(dataset, direction, stem, disease, rounds)
