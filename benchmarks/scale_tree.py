"""A scripts-format run at the paper's full scale: 88,457 tasks, about 2.4 rounds each.

Counts per modality and direction follow the paper's Table 1; successes take 1-5 rounds
averaging 1.35 rounds as in Table 1 (the paper's 58/25/17 % split would give 1.8, which
contradicts its own table), and failed runs end after 3-5 rounds, giving about 2.4 rounds
per task as the paper reports; text lengths are realistic (a few KB a round).
Every image is a hard link to one small JPEG, so the importer's file checks are real.
"""

import json
import os
import random
from pathlib import Path

from PIL import Image

from app.importer import layout
from app.models import Direction

# (dataset, diseases, add success, add failed, remove success, remove failed): Table 1.
TABLE_1 = (
    ("Chest-XRay", ["Atelectasis", "Cardiomegaly", "Consolidation", "Edema",
                    "Enlarged_Cardiomediastinum", "Fracture", "Lung_Lesion", "Lung_Opacity",
                    "Pleural_Effusion", "Pneumonia", "Pneumothorax", "Pleural_Other"],
     9854, 7971, 10667, 4750),
    ("Brain-MRI", ["glioma", "meningioma", "pituitary", "tumor_other"], 4536, 8630, 4355, 6949),
    ("Fundus", ["AMD", "Cataract", "Diabetes", "Glaucoma", "Hypertension", "Myopia", "Other_Disease"],
     18505, 3162, 2718, 6360),
)
VOCABULARY = (
    "opacity", "margin", "lobe", "pleural", "density", "texture", "grain", "edge", "fidelity",
    "anatomy", "contrast", "lesion", "region", "subtle", "realistic", "preserve", "boundary",
    "vessel", "parenchyma", "diaphragm", "cortex", "ventricle", "drusen", "haemorrhage",
    "exudate", "macula", "disc",
)
SUCCESS_ROUNDS = [1] * 76 + [2] * 16 + [3] * 5 + [4] * 2 + [5] * 1
FAILED_ROUNDS = [3] * 2 + [4] * 6 + [5] * 2


def _words(rng: random.Random, n: int) -> str:
    return " ".join(rng.choice(VOCABULARY) for _ in range(n))


def _round(rng: random.Random, k: int, qualified: bool, direction: Direction, texts: list[str]) -> dict:
    has = qualified if direction is Direction.add else not qualified
    return {
        "round": k,
        "generate_prompt": {"thinking_summary": texts[0], "prompt": texts[1] + f" round {k}"},
        "edit_result": {"success": True},
        "verification": {"qualified": qualified, "has_disease": has,
                         "structure_reasonable": qualified or rng.random() < 0.6,
                         "looks_realistic": qualified or rng.random() < 0.5,
                         "reason": texts[2], "thinking_summary": texts[3]},
    }


_PIXELS: dict[Path, Path] = {}


def _link(source: Path, target: Path) -> None:
    """Hard-link ``target`` to a copy of ``source`` kept per folder (ext4 allows 65,000 links)."""
    target.parent.mkdir(parents=True, exist_ok=True)
    if target.exists():
        return
    pixel = _PIXELS.get(target.parent)
    if pixel is None:
        pixel = target.parent / ".pixel"
        if not pixel.exists():
            pixel.write_bytes(source.read_bytes())
        _PIXELS[target.parent] = pixel
    os.link(pixel, target)


def write_scale_tree(out: Path, seed: int = 7) -> int:
    """Write the tree (once; a finished tree is reused) and return its task count."""
    done = out / "COMPLETE"
    if done.is_file():
        return int(done.read_text())
    rng = random.Random(seed)
    pixel = out / "pixel.jpeg"
    out.mkdir(parents=True, exist_ok=True)
    Image.new("RGB", (16, 16), (80, 80, 80)).save(pixel, "JPEG")
    # A pool of texts, so generating 88K tasks does not dominate the benchmark's set-up.
    pool = [[_words(rng, 230), _words(rng, 75), _words(rng, 45), _words(rng, 180)] for _ in range(400)]
    total = 0
    for dataset, diseases, add_ok, add_bad, rem_ok, rem_bad in TABLE_1:
        for direction, n_ok, n_bad in ((Direction.add, add_ok, add_bad), (Direction.remove, rem_ok, rem_bad)):
            total += _write_folder(out, rng, pool, pixel, dataset, diseases, direction, n_ok, n_bad)
    done.write_text(str(total))
    return total


def _write_folder(out: Path, rng: random.Random, pool: list[list[str]], pixel: Path, dataset: str,
                  diseases: list[str], direction: Direction, n_ok: int, n_bad: int) -> int:
    run, source = out / "run", out / "source"
    outcomes = ["success"] * n_ok + ["failed"] * n_bad
    rng.shuffle(outcomes)
    conversations, progress = {}, {}
    for i, status in enumerate(outcomes):
        disease = diseases[i % len(diseases)]
        stem = f"{dataset[:2].lower()}{'a' if direction is Direction.add else 'r'}-{i // len(diseases):06d}"
        category = layout.source_category(direction, disease)
        _link(pixel, source / dataset / category / f"{stem}.jpeg")
        n = rng.choice(SUCCESS_ROUNDS if status == "success" else FAILED_ROUNDS)
        rounds = []
        for k in range(1, n + 1):
            accepted = status == "success" and k == n
            rounds.append(_round(rng, k, accepted, direction, rng.choice(pool)))
            rel = (layout.accepted_relpath(dataset, direction, stem, disease) if accepted
                   else layout.failed_relpath(dataset, direction, stem, disease, k))
            _link(pixel, run / rel)
        key = f"{stem}-{disease}"
        conversations[key] = {"image": f"{stem}.jpeg", "disease": disease, "status": status,
                              "rounds": rounds, "final_prompt": rounds[-1]["generate_prompt"]["prompt"],
                              "final_image_path": f"img_gen/{key}.jpeg"}
        progress[key] = status
    folder = run / f"{dataset}-{layout.DISK_DIRECTION[direction]}"
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "all_conversations.json").write_text(json.dumps(conversations, indent=2))
    (folder / "progress.json").write_text(json.dumps(progress, indent=2))
    (folder / "api_failures.json").write_text("[]")
    return len(outcomes)
