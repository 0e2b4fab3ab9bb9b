"""The offline backend: deterministic, local, and labelled as such everywhere it appears.

It is no model. Its instruction writer states the task and, from the history, appends one
correction per failed dimension. Its editor draws a procedural lesion (or smooths one away)
at the disease's usual place on any image; the first round of a task may carry one flaw
(too subtle, wrong place, hard edge, lost grain), chosen from the task key, and an
instruction that names the correction removes it. Its judge rates the difference image:
how strong the change is, where it is, how sharp its edge is, and what changed elsewhere.
So the refinement loop really runs: rounds fail for visible reasons and later rounds fix
them, the same way every time.
"""

import io
import time
import zlib
from dataclasses import dataclass
from typing import Any

import numpy as np
from PIL import Image, ImageFilter

from pipeline import prompts
from pipeline.backend import Call, Edit, Instruction, TaskInfo, Verdict
from pipeline.vocabulary import DIMENSIONS, WEIGHTS

NAME = "offline"
LABEL = "offline backend (deterministic heuristic, not a model)"
MODEL = "offline-heuristic-1"
JUDGE_SIZE = 256  # the judge reads the difference image at this side, for speed


@dataclass(frozen=True)
class Place:
    x: float  # fractions of the image
    y: float
    radius: float
    strength: float  # signed intensity change at the centre for an addition


# Where each finding usually sits; others fall back to their modality's centre.
PLACES = {
    "Pneumothorax": Place(0.24, 0.22, 0.14, -0.16), "Pleural_Effusion": Place(0.78, 0.70, 0.18, 0.30),
    "Lung_Opacity": Place(0.30, 0.48, 0.14, 0.26), "Consolidation": Place(0.30, 0.55, 0.13, 0.28),
    "Atelectasis": Place(0.70, 0.62, 0.12, 0.24), "Cardiomegaly": Place(0.55, 0.60, 0.22, 0.18),
    "Enlarged_Cardiomediastinum": Place(0.55, 0.55, 0.22, 0.18), "Edema": Place(0.45, 0.45, 0.25, 0.18),
    "glioma": Place(0.36, 0.40, 0.14, 0.30), "meningioma": Place(0.68, 0.22, 0.09, 0.40),
    "pituitary": Place(0.50, 0.66, 0.06, 0.40), "AMD": Place(0.50, 0.50, 0.05, 0.55),
    "Diabetes": Place(0.36, 0.62, 0.035, 0.75), "Glaucoma": Place(0.69, 0.50, 0.05, 0.60),
}
MODALITY_PLACE = {"chest_xray": Place(0.30, 0.50, 0.13, 0.25), "brain_mri": Place(0.40, 0.40, 0.12, 0.30),
                  "fundus": Place(0.50, 0.50, 0.06, 0.50), "medical": Place(0.50, 0.50, 0.10, 0.25)}
WRONG_PLACE = Place(0.88, 0.10, 0.07, 0.30)
FLAWS = ("too_subtle", "wrong_place", "sharp_edge", "lost_grain")
# What an instruction says to cure each flaw, and which failed dimensions call for it (the
# judge's realism covers both hard edges and lost grain). A faint change is cured by the
# task's own direction: asking a removal to make its finding conspicuous would add one.
CURES = {
    "too_subtle": "Make the finding clearly conspicuous, with the density of real cases.",
    "wrong_place": "Place the change strictly within its correct anatomical region.",
    "sharp_edge": "Blend the margins gradually into the surrounding tissue; no hard edges.",
    "lost_grain": "Preserve the original noise and grain texture everywhere outside the finding.",
}
REMOVAL_CURES = {
    **CURES,
    "too_subtle": "Remove the finding completely, leaving the region like healthy tissue.",
}
CALLED_FOR = {"compliance": ("too_subtle",), "structure": ("wrong_place",),
              "realism": ("sharp_edge", "lost_grain"), "fidelity": ("wrong_place", "lost_grain")}


def cures_for(direction: str) -> dict[str, str]:
    return CURES if direction == "add" else REMOVAL_CURES


def place_of(task: TaskInfo) -> Place:
    return PLACES.get(task.disease, MODALITY_PLACE.get(task.modality, MODALITY_PLACE["medical"]))


def _seed(*parts: object) -> int:
    return zlib.crc32("/".join(map(str, parts)).encode())


def flaws_for(task: TaskInfo, instruction: str) -> set[str]:
    """The flaws an edit from this instruction shows: at most one per task, drawn from its
    key (a quarter of tasks have none), unless the instruction names its correction."""
    h = _seed(task.key, task.disease, task.direction)
    flaw = FLAWS[h % 4] if (h >> 8) % 4 else None
    cured = {f for f, text in cures_for(task.direction).items() if text.split(";")[0] in instruction}
    return {flaw} - cured if flaw else set()


def _load(data: bytes) -> np.ndarray:
    with Image.open(io.BytesIO(data)) as image:
        return np.asarray(image.convert("RGB"), dtype=np.float32) / 255.0


def _encode(pixels: np.ndarray) -> bytes:
    out = io.BytesIO()
    Image.fromarray((np.clip(pixels, 0, 1) * 255).astype(np.uint8)).save(out, "JPEG", quality=95)
    return out.getvalue()


def _mask(shape: tuple[int, ...], place: Place, sharp: bool) -> np.ndarray:
    h, w = shape[:2]
    y, x = np.mgrid[0:h, 0:w].astype(np.float32)
    d = np.hypot(x / w - place.x, y / h - place.y) / place.radius
    return (d < 1).astype(np.float32) if sharp else np.exp(-(d**2) * 2.2) * (d < 1.6)


def apply_edit(task: TaskInfo, original: bytes, instruction: str) -> bytes:
    """The procedural edit of ``original`` that this instruction yields."""
    pixels = _load(original)
    flaws = flaws_for(task, instruction)
    sharp = "sharp_edge" in flaws
    edited: np.ndarray
    if task.direction == "add":
        place = WRONG_PLACE if "wrong_place" in flaws else place_of(task)
        strength = place.strength * (0.08 if "too_subtle" in flaws else 1.0)
        edited = pixels + strength * _mask(pixels.shape, place, sharp)[..., None]
    else:
        # Removal: pull the finding's region toward its blurred surroundings, as healthy
        # tissue would look; a misplaced removal leaves it and changes another region.
        place = place_of(task)
        radius = max(2, int(place.radius * pixels.shape[0] / 2))
        blurred = np.asarray(Image.fromarray((pixels * 255).astype(np.uint8)).filter(
            ImageFilter.GaussianBlur(radius)), dtype=np.float32) / 255.0
        weight = 0.08 if flaws & {"too_subtle", "wrong_place"} else 1.0
        mask = _mask(pixels.shape, place, sharp=False)[..., None]
        edited = pixels + weight * mask * (blurred - pixels)
        if "wrong_place" in flaws:
            edited = edited + 0.15 * _mask(pixels.shape, WRONG_PLACE, sharp=False)[..., None]
        if sharp:
            edited = edited + 0.15 * _mask(pixels.shape, place, sharp=True)[..., None]
    if "lost_grain" in flaws:
        smooth = Image.fromarray((np.clip(edited, 0, 1) * 255).astype(np.uint8)).filter(
            ImageFilter.GaussianBlur(max(1.0, pixels.shape[0] / 300)))
        edited = np.asarray(smooth, dtype=np.float32) / 255.0
    return _encode(edited)


def _ring(values: np.ndarray, place: Place, inner: float, outer: float) -> float:
    h, w = values.shape
    y, x = np.mgrid[0:h, 0:w].astype(np.float32)
    d = np.hypot(x / w - place.x, y / h - place.y) / place.radius
    ring = (d >= inner) & (d < outer)
    return float(values[ring].mean()) if ring.any() else 0.0


def _grey(data: bytes) -> np.ndarray:
    with Image.open(io.BytesIO(data)) as image:
        small = image.convert("L").resize((JUDGE_SIZE, JUDGE_SIZE), Image.Resampling.BILINEAR)
        return np.asarray(small, dtype=np.float32) / 255.0


def _grain(pixels: np.ndarray) -> float:
    """The fine texture left after removing a 3x3 box blur: noise and film grain."""
    blurred = Image.fromarray((pixels * 255).astype(np.uint8)).filter(ImageFilter.BoxBlur(1))
    return float(np.std(pixels - np.asarray(blurred, dtype=np.float32) / 255.0))


def rate(task: TaskInfo, original: bytes, edited: bytes) -> dict[str, Any]:
    """The heuristic verdict: four graded dimensions (0..1, pass at 0.5) from the difference
    image, read at JUDGE_SIZE pixels."""
    before, after = _grey(original), _grey(edited)
    diff = np.abs(after - before)
    smooth = np.asarray(Image.fromarray((np.clip(diff, 0, 1) * 255).astype(np.uint8)).filter(
        ImageFilter.GaussianBlur(1)), dtype=np.float32) / 255.0
    place = place_of(task)
    target = _mask(diff.shape, Place(place.x, place.y, place.radius * 1.5, 0), sharp=True) > 0
    top = float(np.percentile(smooth, 99.9))
    changed = smooth > max(0.03, 0.3 * top)
    in_target = float(np.percentile(smooth[target], 99)) if target.any() else 0.0
    grain_kept = _grain(after) / max(_grain(before), 1e-6)
    grain = float(np.clip((grain_kept - 0.6) / 0.3, 0, 1))
    if not changed.any():
        # Nothing visible changed: the finding is not there, and nothing else is wrong.
        scores = {"compliance": min(1.0, in_target / 0.12), "structure": 1.0, "realism": grain,
                  "fidelity": 1.0, "sharpness": 0.0, "grain_kept": grain_kept}
    else:
        # Structure: the visible change sits where the finding belongs.
        structure = float((changed & target).sum() / changed.sum())
        # Realism: soft margins and kept grain. A stamped-on finding shows a step in the
        # difference image across the finding's rim; a blended one fades through it.
        step = _ring(diff, place, 0.85, 0.97) - _ring(diff, place, 1.03, 1.15)
        sharpness = step / max(in_target, 0.05)  # about 0.1 for a blended rim, 0.5+ stamped
        edge = float(np.clip((0.45 - sharpness) / 0.3, 0, 1))
        # Fidelity: nothing changed far from the target.
        outside = float((changed & ~target).mean())
        scores = {"compliance": min(1.0, in_target / 0.12), "structure": structure,
                  "realism": min(edge, grain), "fidelity": max(0.0, 1.0 - outside / 0.01),
                  "sharpness": sharpness, "grain_kept": grain_kept}
    passed = {d: scores[d] >= 0.5 for d in DIMENSIONS}
    weighted = float(sum(share * scores[d] for d, share in WEIGHTS.items()))
    failed = [d for d in DIMENSIONS if not passed[d]]
    reason = ("The change is of clinical size, in the expected region, with soft margins and "
              "the image elsewhere intact." if not failed else
              " ".join(REASONS[d] for d in failed))
    return {**passed, "has_disease": passed["compliance"] == (task.direction == "add"),
            "qualified": not failed, "weighted_score": round(weighted, 3), "reason": reason,
            "scores": {d: round(v, 3) for d, v in scores.items()}}


REASONS = {
    "compliance": "The change in the target region is too faint to be read as the finding.",
    "structure": "The change lies outside the region where this finding occurs.",
    "realism": "The change has a hard, stamped-on edge or the native grain is smoothed away.",
    "fidelity": "Parts of the image far from the target changed as well.",
}


class OfflineBackend:
    name = NAME
    label = LABEL

    async def instruction(self, task: TaskInfo, original: bytes, history: list[dict[str, Any]],
                          feedback: list[dict[str, Any]]) -> Instruction:
        start = time.perf_counter()
        words = prompts.words(task.disease)
        if not history:
            prompt = prompts.first_instruction(task.modality, task.disease, task.direction,
                                               feedback)
        else:
            prompt = prompts.refinement(task.modality, task.disease, task.direction, history,
                                        feedback)
        verb = "Add realistic signs of" if task.direction == "add" else "Remove every sign of"
        text = f"{verb} {words}, changing nothing else."
        failed = {d for entry in history for d in DIMENSIONS
                  if entry.get("verdict", {}).get(d) is False}
        if any(f.get("overall") == "reject" for f in feedback):
            failed |= _dimensions_from_tags(feedback)
        cures = [f for d in DIMENSIONS if d in failed for f in CALLED_FOR[d]]
        wording = cures_for(task.direction)
        text += "".join(f" {wording[f]}" for f in dict.fromkeys(cures))
        thinking = (f"Offline writer: {len(history)} earlier round(s); corrections for "
                    f"{', '.join(sorted(failed)) or 'nothing yet'}.")
        return Instruction(text, thinking, prompt, self._call(start))

    async def edit(self, task: TaskInfo, original: bytes, instruction: str) -> Edit:
        start = time.perf_counter()
        return Edit(apply_edit(task, original, instruction), None, self._call(start))

    async def judge(self, task: TaskInfo, original: bytes, edited: bytes,
                    instruction: str) -> Verdict:
        start = time.perf_counter()
        prompt = prompts.judge(task.modality, task.disease, task.direction, instruction)
        fields = rate(task, original, edited)
        scores = fields.pop("scores")
        return Verdict(fields, None, f"Offline judge scores: {scores}", prompt,
                       self._call(start), extra={"scores": scores})

    @staticmethod
    def _call(start: float) -> Call:
        return Call(MODEL, (time.perf_counter() - start) * 1000)


# Readers' failure tags, as the dimension whose correction answers them.
TAG_DIMENSION = {"too_subtle": "compliance", "wrong_location": "structure",
                 "anatomical_distortion": "structure", "non_target_finding": "fidelity",
                 "blending_artifact": "realism", "unnatural_edge": "realism",
                 "lost_grain": "fidelity", "excessive_change": "fidelity",
                 "colour_shift": "fidelity", "repetitive_pattern": "realism"}


def _dimensions_from_tags(feedback: list[dict[str, Any]]) -> set[str]:
    return {TAG_DIMENSION[t] for f in feedback for t in f.get("tags", []) if t in TAG_DIMENSION}
