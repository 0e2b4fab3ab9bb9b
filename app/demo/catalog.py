"""What the demo contains: data sets, diseases, where each finding sits, and the words used."""

from dataclasses import dataclass

from app.demo.phantoms import Lesion
from app.models import Direction, Modality


@dataclass(frozen=True)
class DemoDataset:
    name: str
    modality: Modality
    normals: tuple[str, ...]
    # disease -> stems of images that show it; stems contain "-" as the real data does
    diseased: dict[str, tuple[str, ...]]


def _stems(prefix: str, count: int, start: int = 1) -> tuple[str, ...]:
    return tuple(f"{prefix}-{n:04d}" for n in range(start, start + count))


# Chest X-ray is large enough for the paper's pilot (50 accepted add and 50 accepted remove
# edits, with room to sample); brain MRI and fundus show the other modalities.
CHEST_PER_DISEASE = 16
DATASETS = (
    DemoDataset("Chest-XRay", Modality.chest_xray, _stems("s5000", CHEST_PER_DISEASE, 230), {
        "Pneumothorax": _stems("s6100", CHEST_PER_DISEASE),
        "Pleural_Effusion": _stems("s6200", CHEST_PER_DISEASE),
        "Lung_Opacity": _stems("s6300", CHEST_PER_DISEASE),
        "Enlarged_Cardiomediastinum": _stems("s6400", CHEST_PER_DISEASE),
    }),
    DemoDataset("Brain-MRI", Modality.brain_mri, ("Te-no_0001", "Te-no_0002"), {
        "glioma": ("Te-gl_0001", "Te-gl_0002"),
        "meningioma": ("Te-me_0001", "Te-me_0002"),
        "pituitary": ("Te-pi_0001", "Te-pi_0002"),
    }),
    DemoDataset("Fundus", Modality.fundus, ("fundus-0012_left", "fundus-0013_right"), {
        "AMD": ("fundus-0101_left", "fundus-0102_right"),
        "Diabetes": ("fundus-0201_left", "fundus-0202_right"),
        "Glaucoma": ("fundus-0301_left", "fundus-0302_right"),
    }),
)

# Where each disease is drawn, and how (fractions of the image; signed intensity change).
LESIONS: dict[str, Lesion] = {
    "Pneumothorax": Lesion(0.24, 0.22, 0.14, -0.16),
    "Pleural_Effusion": Lesion(0.78, 0.70, 0.18, 0.30),
    "Lung_Opacity": Lesion(0.30, 0.48, 0.14, 0.26),
    "Enlarged_Cardiomediastinum": Lesion(0.55, 0.60, 0.22, 0.18),
    "glioma": Lesion(0.36, 0.40, 0.14, 0.30),
    "meningioma": Lesion(0.68, 0.22, 0.09, 0.40),
    "pituitary": Lesion(0.50, 0.66, 0.06, 0.40),
    "AMD": Lesion(0.50, 0.50, 0.05, 0.55, colour=(0.95, 0.85, 0.35)),
    "Diabetes": Lesion(0.36, 0.62, 0.035, 0.75, colour=(0.45, 0.03, 0.02)),
    "Glaucoma": Lesion(0.69, 0.50, 0.05, 0.60, colour=(1.0, 0.97, 0.85)),
}
# A place where no such finding belongs: the "wrong location" failure.
WRONG_PLACE = Lesion(0.86, 0.12, 0.07, 0.30)

# One scenario per task, cycled in task order: round of success, or the run's end.
SCENARIOS = ("s1", "s2", "s1", "s3", "f5", "s1", "s4", "s2", "s5", "api", "s1")
FAILURE_MODES = ("too_subtle", "wrong_place", "sharp_edge", "lost_grain")

FAILURE_REASONS = {
    "too_subtle": "The {finding} is barely perceptible; a radiologist would not call it with "
                  "confidence. Instruction compliance fails.",
    "wrong_place": "A change appears at the image periphery, outside the anatomical region where "
                   "{finding} occurs; the target region is unchanged. Structure is implausible.",
    "sharp_edge": "The {finding} has an unnaturally sharp, stamped-on boundary with no gradual "
                  "transition into the surrounding tissue. Realism fails.",
    "lost_grain": "The whole image has been smoothed: the native noise and grain texture are "
                  "lost, which no acquisition would produce. Realism fails.",
}
REFINEMENTS = {
    "too_subtle": "Make the finding clearly conspicuous, with density comparable to real cases.",
    "wrong_place": "Place the finding strictly within the correct anatomical region.",
    "sharp_edge": "Blend the margins gradually into the surrounding tissue; no hard edges.",
    "lost_grain": "Preserve the original noise and grain texture everywhere outside the finding.",
    # What a refinement can say when the history holds no verdict for the previous round.
    "judge_unreadable": "The previous verdict could not be read; keep the same intent.",
    "no_image": "The previous edit returned no image; ask for the edited image explicitly.",
}


def finding(disease: str) -> str:
    return disease.replace("_", " ").lower()


def first_instruction(modality: Modality, disease: str, direction: Direction) -> str:
    what = finding(disease)
    if direction is Direction.add:
        return (f"Add realistic signs of {what} to this {modality.value.replace('_', ' ')} image. "
                "Keep every other structure, the noise texture and the exposure unchanged; "
                "do not add text, labels or any other finding.")
    return (f"Remove every sign of {what} from this image so that it looks like a healthy "
            f"{modality.value.replace('_', ' ')}. Change only the affected region; keep anatomy, "
            "grain and contrast elsewhere exactly as they are.")


def thinking(disease: str, direction: Direction, round_number: int) -> str:
    verb = "introduce" if direction is Direction.add else "erase"
    return (f"**Planning round {round_number}.** The task is to {verb} {finding(disease)}. "
            "I weigh its typical location, size and density against the anatomy visible here, "
            "and the constraints: fidelity outside the target, no new findings, and the minimal "
            "change that makes the counterfactual true. " * 3).strip()


def judge_thinking(disease: str, verdict: str) -> str:
    return (f"**Assessing the edit.** I compare the region where {finding(disease)} would appear "
            f"with the surrounding anatomy, check edges, texture and global intensity. {verdict} ")
