"""Write a deterministic synthetic run in the scripts' exact layout and JSON shapes.

``write_demo(DIR)`` writes the source tree to DIR/source and the run to DIR/run, so that
``medbanana import DIR/run --source DIR/source`` imports it.
"""

import multiprocessing
import zlib
from collections.abc import Callable
from concurrent.futures import ProcessPoolExecutor, as_completed
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from app.demo import catalog
from app.demo.phantoms import Lesion, Scene, render
from app.importer import layout
from app.importer.scripts_files import ScriptsFolder, final_image
from app.models import Direction

MARKER = layout.SYNTHETIC_MARKER
MARKER_TEXT = ("Synthetic demo data written by `medbanana demo-data`: procedural phantoms, "
               "not patient images. Do not use for any clinical or research conclusion.\n")
JPEG_QUALITY = 95
# One original is deliberately left out, so the app's "missing image" handling shows.
MISSING_ORIGINAL = ("Brain-MRI", "glioma", "Te-gl_0002")


@dataclass
class DemoTask:
    dataset: catalog.DemoDataset
    direction: Direction
    stem: str
    disease: str
    scenario: str
    index: int

    @property
    def key(self) -> str:
        return f"{self.stem}-{self.disease}"

    @property
    def base(self) -> Scene:
        seed = zlib.crc32(f"{self.dataset.name}/{self.stem}".encode())
        scene = Scene(self.dataset.modality, seed)
        if self.direction is Direction.remove:
            return scene.with_lesions(self.lesion)
        return scene

    @property
    def lesion(self) -> Lesion:
        # Each image gets its own place and density within the disease's usual region, so
        # fifty pneumothoraces in a study are not fifty copies of one.
        typical = catalog.LESIONS[self.disease]
        h = zlib.crc32(f"{self.stem}/{self.disease}".encode())
        dx, dy = ((h & 0xFF) / 255 - 0.5) * 0.05, ((h >> 8 & 0xFF) / 255 - 0.5) * 0.05
        return replace(typical, x=typical.x + dx, y=typical.y + dy,
                       strength=typical.strength * (0.85 + (h >> 16 & 0xFF) / 255 * 0.3))


def plan_tasks() -> list[DemoTask]:
    tasks: list[DemoTask] = []
    for ds in catalog.DATASETS:
        pairs = [(Direction.add, n, d) for n in ds.normals for d in ds.diseased]
        pairs += [(Direction.remove, s, d) for d, stems in ds.diseased.items() for s in stems]
        for direction, stem, disease in pairs:
            scenario = catalog.SCENARIOS[len(tasks) % len(catalog.SCENARIOS)]
            tasks.append(DemoTask(ds, direction, stem, disease, scenario, len(tasks)))
    return tasks


def write_demo(out: Path, size: int = 1024,
               on_progress: Callable[[int, int], None] | None = None,
               workers: int = 1) -> list[DemoTask]:
    """Write the demo; ``workers`` processes draw the images (the files are the same for any
    number of workers, and the JSON is written in task order at the end)."""
    tasks = plan_tasks()
    source, run = out / "source", out / "run"
    for root in (source, run):
        root.mkdir(parents=True, exist_ok=True)
        (root / MARKER).write_text(MARKER_TEXT)
    jobs: list[tuple[Callable[..., Any], tuple[Any, ...]]] = [
        (_write_source, (source, scene_task, size)) for scene_task in _source_tasks()]
    jobs += [(_write_rounds, (run, task, size)) for task in tasks]
    results: list[Any] = [None] * len(jobs)
    if workers > 1:
        # forkserver: a fresh worker, never a fork of a process that may hold threads or locks.
        context = multiprocessing.get_context("forkserver")
        with ProcessPoolExecutor(workers, mp_context=context) as pool:
            futures = {pool.submit(fn, *args): n for n, (fn, args) in enumerate(jobs)}
            for done, future in enumerate(as_completed(futures), start=1):
                results[futures[future]] = future.result()
                if on_progress:
                    on_progress(done, len(jobs))
    else:
        for done, (fn, args) in enumerate(jobs, start=1):
            results[done - 1] = fn(*args)
            if on_progress:
                on_progress(done, len(jobs))
    folders: dict[tuple[str, Direction], ScriptsFolder] = {}
    for task, rounds in zip(tasks, results[len(jobs) - len(tasks):], strict=True):
        files = folders.setdefault((task.dataset.name, task.direction), ScriptsFolder())
        _record(task, files, rounds)
    for (dataset, direction), files in folders.items():
        files.write(run, dataset, direction)
    return tasks


def _save(image_scene: Scene, path: Path, size: int) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    render(image_scene, size).save(path, "JPEG", quality=JPEG_QUALITY)


def _source_tasks() -> list[DemoTask]:
    """One task per original on disk, standing for the image itself."""
    found = []
    for ds in catalog.DATASETS:
        for stem in ds.normals:
            found.append(DemoTask(ds, Direction.add, stem, next(iter(ds.diseased)), "", 0))
        for disease, stems in ds.diseased.items():
            found += [DemoTask(ds, Direction.remove, stem, disease, "", 0) for stem in stems
                      if (ds.name, disease, stem) != MISSING_ORIGINAL]
    return found


def _write_source(source: Path, task: DemoTask, size: int) -> None:
    folder = layout.NORMAL if task.direction is Direction.add else task.disease
    _save(task.base, source / task.dataset.name / folder / f"{task.stem}.jpeg", size)


def _failed_scene(task: DemoTask, mode: str) -> Scene:
    lesion, base = task.lesion, task.base
    if task.direction is Direction.add:
        return {
            "too_subtle": base.with_lesions(replace(lesion, strength=lesion.strength * 0.15)),
            "wrong_place": base.with_lesions(replace(catalog.WRONG_PLACE, colour=lesion.colour)),
            "sharp_edge": base.with_lesions(replace(lesion, sharp=True)),
            "lost_grain": replace(base.with_lesions(lesion), smooth=True),
        }[mode]
    healthy = replace(base, lesions=())
    return {
        "too_subtle": healthy.with_lesions(replace(lesion, strength=lesion.strength * 0.6)),
        "wrong_place": base.with_lesions(replace(catalog.WRONG_PLACE, strength=-0.12)),
        "sharp_edge": healthy.with_lesions(replace(lesion, radius=lesion.radius * 1.3,
                                                   strength=0.08, sharp=True)),
        "lost_grain": replace(healthy, smooth=True),
    }[mode]


def _accepted_scene(task: DemoTask) -> Scene:
    if task.direction is Direction.add:
        return task.base.with_lesions(task.lesion)
    return replace(task.base, lesions=())


def _failed_verification(task: DemoTask, mode: str) -> dict[str, Any]:
    complied = mode in ("sharp_edge", "lost_grain")
    has_disease = complied if task.direction is Direction.add else not complied
    reason = catalog.FAILURE_REASONS[mode].format(finding=catalog.finding(task.disease))
    return {
        "qualified": False, "has_disease": has_disease,
        "structure_reasonable": mode != "wrong_place",
        "looks_realistic": mode not in ("sharp_edge", "lost_grain"),
        "reason": reason, "thinking_summary": catalog.judge_thinking(task.disease, reason),
    }


def _accepted_verification(task: DemoTask) -> dict[str, Any]:
    reason = (f"The edit convincingly {'shows' if task.direction is Direction.add else 'removes'} "
              f"{catalog.finding(task.disease)} with natural margins; anatomy and texture "
              "elsewhere are preserved.")
    return {
        "qualified": True, "has_disease": task.direction is Direction.add,
        "structure_reasonable": True, "looks_realistic": True, "reason": reason,
        "thinking_summary": catalog.judge_thinking(task.disease, reason),
    }


def _instruction(task: DemoTask, previous_mode: str | None) -> str:
    text = catalog.first_instruction(task.dataset.modality, task.disease, task.direction)
    if previous_mode:
        # Only the correction itself: a round number in the text would unblind readers.
        text += f" {catalog.REFINEMENTS[previous_mode]}"
    return text


def _write_rounds(run: Path, task: DemoTask, size: int) -> list[dict[str, Any]] | None:
    """Draw the task's rounds and return their log entries; None for an api_failed task."""
    if task.scenario == "api":
        return None
    success = task.scenario.startswith("s")
    n_rounds = int(task.scenario[1:])
    rounds: list[dict[str, Any]] = []
    mode = None
    for r in range(1, n_rounds + 1):
        accepted = success and r == n_rounds
        rounds.append(_write_round(run, task, r, mode, accepted, size))
        mode = _what_history_says(rounds[-1], task, r)
    return rounds


def _record(task: DemoTask, files: ScriptsFolder, rounds: list[dict[str, Any]] | None) -> None:
    image = f"{task.stem}.jpeg"
    if rounds is None:
        files.api_failure(task.key, image, task.disease, step="edit_image", round=2,
                          error="503 UNAVAILABLE: The model is overloaded. Please try again later.")
        return
    success = task.scenario.startswith("s")
    files.judged(task.key, image, task.disease, rounds, success=success,
                 final_image=final_image(task.dataset.name, task.direction, task.stem,
                                         task.disease, success=success, rounds=len(rounds)))


def _what_history_says(entry: dict[str, Any], task: DemoTask, r: int) -> str:
    """The failure a refinement can know of: only what the recorded verdict says."""
    if not entry["edit_result"]["success"]:
        return "no_image"
    if "error" in entry.get("verification", {}):
        return "judge_unreadable"
    return catalog.FAILURE_MODES[(task.index + r) % len(catalog.FAILURE_MODES)]


def _write_round(run: Path, task: DemoTask, r: int, previous_mode: str | None,
                 accepted: bool, size: int) -> dict[str, Any]:
    ds, d = task.dataset.name, task.direction
    mode = catalog.FAILURE_MODES[(task.index + r) % len(catalog.FAILURE_MODES)]
    entry: dict[str, Any] = {
        "round": r,
        "generate_prompt": {"thinking_summary": catalog.thinking(task.disease, d, r),
                            "prompt": _instruction(task, previous_mode)},
        "edit_result": {"success": True},
    }
    if task.scenario == "f5" and r == 2:
        # The edit model answered with text only: no image, no verdict for this round.
        entry["edit_result"] = {"success": False, "error": "No image in response"}
        return entry
    if accepted:
        _save(_accepted_scene(task), run / layout.accepted_relpath(ds, d, task.stem, task.disease),
              size)
        entry["verification"] = _accepted_verification(task)
        return entry
    _save(_failed_scene(task, mode),
          run / layout.failed_relpath(ds, d, task.stem, task.disease, r), size)
    entry["verification"] = _failed_verification(task, mode)
    if task.scenario == "s3" and r == 1:
        entry["verification"] = {"error": "JSON parse error: Expecting ',' delimiter: "
                                          "line 1 column 212 (char 211)"}
    return entry
