"""Procedural phantoms: a chest radiograph, an axial brain MRI and a colour fundus photograph.

They are drawn from a seed with numpy and Pillow, so the same name always gives the same
pixels. They look like their modality at reading-room distance and are clearly not patients.
"""

from dataclasses import dataclass, replace
from functools import lru_cache

import numpy as np
from PIL import Image, ImageDraw, ImageFilter

from app.models import Modality

Array = np.ndarray


@dataclass(frozen=True)
class Lesion:
    """A finding drawn into a phantom; coordinates are fractions of the image size."""

    x: float
    y: float
    radius: float
    strength: float  # signed change of intensity at the centre, 0..1
    sharp: bool = False  # a hard edge: one of the paper's failure modes
    colour: tuple[float, float, float] = (1.0, 1.0, 1.0)


@dataclass(frozen=True)
class Scene:
    modality: Modality
    seed: int
    lesions: tuple[Lesion, ...] = ()
    smooth: bool = False  # lost grain texture: another failure mode

    def with_lesions(self, *lesions: Lesion) -> "Scene":
        return replace(self, lesions=self.lesions + lesions)


def _grid(size: int) -> tuple[Array, Array]:
    axis = np.linspace(-1.0, 1.0, size, dtype=np.float32)
    return np.meshgrid(axis, axis)


def _ellipse(x: Array, y: Array, cx: float, cy: float, rx: float, ry: float, soft: float) -> Array:
    d = np.sqrt(((x - cx) / rx) ** 2 + ((y - cy) / ry) ** 2)
    return np.clip((1.0 - d) / soft, 0.0, 1.0)


def _chest(rng: np.random.Generator, size: int) -> Array:
    x, y = _grid(size)
    tilt = rng.uniform(-0.03, 0.03)
    img = 0.05 + 0.42 * _ellipse(x, y, 0, 0.15, 0.98, 1.15, 0.35)  # soft tissue of the trunk
    for side in (-1, 1):
        lung = _ellipse(x, y, side * 0.40 + tilt, -0.08, 0.30, 0.66, 0.35)
        img -= 0.30 * lung
        # posterior ribs: gentle arcs descending laterally
        ribs = np.sin((y - 0.22 * (x - side * 0.05) ** 2) * 30 + side * 0.7)
        img += 0.06 * lung * np.clip(ribs * 3 - 2, 0, 1)
        vessels = np.sin(x * 55 + np.sin(y * 7) * 4) * np.sin(y * 38 + x * 9)
        img += 0.025 * lung * np.clip(1 - np.hypot(x - side * 0.2, y) * 1.4, 0, 1) * (vessels > 0.5)
    img += 0.22 * _ellipse(x, y, 0.14 + tilt, 0.30, 0.30, 0.26, 0.6)  # heart, to the image right
    img += 0.20 * _ellipse(x, y, tilt, -0.35, 0.10, 0.55, 0.8)  # mediastinum
    img += 0.12 * np.clip((y - 0.48 + 0.3 * x**2) * 4, 0, 1)  # diaphragm and abdomen
    img += 0.10 * _ellipse(x, y, 0, -0.95, 0.9, 0.12, 0.5)  # shoulders and clavicles
    return img * 1.4  # film-like contrast


def _brain(rng: np.random.Generator, size: int) -> Array:
    x, y = _grid(size)
    img = 0.9 * (_ellipse(x, y, 0, 0, 0.78, 0.92, 0.06) - _ellipse(x, y, 0, 0, 0.72, 0.86, 0.04))
    brain = _ellipse(x, y, 0, 0.01, 0.70, 0.84, 0.05)
    theta, radius = np.arctan2(y, x), np.hypot(x / 0.7, y / 0.84)
    phase = rng.uniform(0, 6)
    gyri = np.sin(radius * 34 + 2.2 * np.sin(theta * 7 + phase) + 1.3 * np.sin(theta * 13))
    cortex = np.clip((radius - 0.55) * 3, 0, 1)  # folding shows in the outer rim
    img += brain * (0.50 - 0.10 * cortex * (gyri > 0.3))
    img += 0.16 * _ellipse(x, y, 0, 0, 0.52, 0.66, 0.6)  # white matter
    img -= 0.05 * brain * (np.abs(x) < 0.012)  # interhemispheric fissure
    for side in (-1, 1):
        img -= 0.42 * _ellipse(x, y, side * 0.08, -0.05, 0.06, 0.26, 0.5)  # lateral ventricles
    return np.clip(img, 0, 1)


def _fundus(rng: np.random.Generator, size: int) -> Array:
    x, y = _grid(size)
    disc_x = 0.38 if rng.random() < 0.5 else -0.38
    field = _ellipse(x, y, 0, 0, 0.93, 0.93, 0.04)
    shade = field * (1.0 - 0.45 * np.hypot(x, y) ** 2)
    rgb = np.stack([0.86 * shade, 0.42 * shade, 0.16 * shade], axis=-1)
    rgb -= 0.18 * _ellipse(x, y, 0, 0, 0.14, 0.14, 0.9)[..., None] * np.array([1, 0.8, 0.5])
    disc = _ellipse(x, y, disc_x, 0, 0.12, 0.13, 0.25)[..., None]
    rgb = rgb * (1 - disc) + disc * np.array([1.0, 0.86, 0.55])
    canvas = Image.fromarray((np.clip(rgb, 0, 1) * 255).astype(np.uint8))
    draw = ImageDraw.Draw(canvas)
    cx, cy = (disc_x + 1) / 2 * size, size / 2
    for k in range(8):
        angle = k * np.pi / 4 + rng.uniform(-0.2, 0.2)
        px, py, width = cx, cy, max(2, size // 110)
        for _step in range(14):
            angle += rng.uniform(-0.25, 0.25)
            nx, ny = px + np.cos(angle) * size / 28, py + np.sin(angle) * size / 28
            draw.line([(px, py), (nx, ny)], fill=(120, 20, 15), width=width)
            px, py, width = nx, ny, max(1, width - (1 if rng.random() < 0.2 else 0))
    return np.asarray(canvas, dtype=np.float32) / 255.0 * field[..., None]


BASES = {Modality.chest_xray: _chest, Modality.brain_mri: _brain, Modality.fundus: _fundus}


def _draw_lesion(img: Array, lesion: Lesion, size: int) -> Array:
    x, y = _grid(size)
    cx, cy = lesion.x * 2 - 1, lesion.y * 2 - 1
    d = np.hypot(x - cx, y - cy) / lesion.radius
    mask = (d < 1).astype(np.float32) if lesion.sharp else np.exp(-(d**2) * 2.2) * (d < 1.6)
    if img.ndim == 3:
        return img + lesion.strength * mask[..., None] * (np.array(lesion.colour) - img)
    return img + lesion.strength * mask


@lru_cache(maxsize=8)
def _base(modality: Modality, seed: int, size: int) -> tuple[Array, Array]:
    """The anatomy and grain of one image; every round of a task redraws the same ones."""
    img = BASES[modality](np.random.default_rng(seed), size)
    grain = np.random.default_rng(seed + 1).normal(0, 0.025, img.shape[:2])
    img.flags.writeable = grain.flags.writeable = False  # shared between calls
    return img, grain


def render(scene: Scene, size: int) -> Image.Image:
    """Pixels of a scene as an 8-bit RGB image (grey modalities stored as RGB, like the data)."""
    img, grain = _base(scene.modality, scene.seed, size)
    for lesion in scene.lesions:
        img = _draw_lesion(img, lesion, size)
    img = img + (grain[..., None] if img.ndim == 3 else grain)
    pixels = (np.clip(img, 0, 1) * 255).astype(np.uint8)
    image = Image.fromarray(pixels).convert("RGB")
    blur = ImageFilter.GaussianBlur(size / 300 if scene.smooth else size / 1400)
    return image.filter(blur)
