"""The demo run matches the scripts' layout and covers every case the app must show."""

import hashlib
import json
from pathlib import Path

from PIL import Image

from app.demo.generate import MISSING_ORIGINAL, plan_tasks, write_demo
from app.importer import layout
from tests import demo_counts as demo


def test_plan_covers_modalities_directions_and_outcomes() -> None:
    tasks = plan_tasks()
    assert len(tasks) >= 40
    assert {(t.dataset.modality.value, t.direction.value) for t in tasks} == {
        (m, d) for m in ("chest_xray", "brain_mri", "fundus") for d in ("add", "remove")}
    assert {t.scenario for t in tasks} == {"s1", "s2", "s3", "s4", "s5", "f5", "api"}
    assert all("-" in t.stem for t in tasks)
    assert any("_" in t.disease for t in tasks)


def test_files_follow_the_scripts_layout(demo_dir: Path) -> None:
    run = demo_dir / "run"
    for folder in ("Chest-XRay-edit", "Brain-MRI-remove", "Fundus-edit"):
        for name in ("all_conversations.json", "final_prompts.json", "progress.json",
                     "api_failures.json"):
            assert (run / folder / name).is_file()
        assert (run / f"{folder}-failed" / "failed_summary.json").is_file()
    conversations = json.loads((run / "Chest-XRay-edit/all_conversations.json").read_text())
    key, entry = next(iter(conversations.items()))
    assert key == f"{Path(entry['image']).stem}-{entry['disease']}"
    assert set(entry) == {"image", "disease", "status", "rounds", "final_prompt", "final_image_path"}
    assert set(entry["rounds"][0]) >= {"round", "generate_prompt", "edit_result"}
    stem = Path(entry["image"]).stem
    accepted = run / layout.accepted_relpath("Chest-XRay", layout.Direction.add, stem, entry["disease"])
    assert accepted.is_file() == (entry["status"] == "success")


def test_images_are_rgb_jpegs_and_one_original_is_missing(demo_dir: Path) -> None:
    dataset, disease, stem = MISSING_ORIGINAL
    assert not (demo_dir / "source" / dataset / disease / f"{stem}.jpeg").exists()
    some = next((demo_dir / "source" / "Brain-MRI" / "normal").glob("*.jpeg"))
    with Image.open(some) as image:
        assert image.format == "JPEG" and image.mode == "RGB"


def test_demo_is_deterministic(tmp_path: Path) -> None:
    def digest(root: Path) -> str:
        h = hashlib.sha256()
        for path in sorted(root.rglob("*")):
            if path.is_file():
                h.update(str(path.relative_to(root)).encode() + path.read_bytes())
        return h.hexdigest()

    write_demo(tmp_path / "a", size=48)
    write_demo(tmp_path / "b", size=48, workers=2)  # processes finish in any order
    assert digest(tmp_path / "a") == digest(tmp_path / "b")


def test_the_papers_pilot_fits_in_the_demo() -> None:
    """50 accepted chest X-ray additions and 50 removals, from many different originals."""
    chest = [t for t in plan_tasks() if t.dataset.name == "Chest-XRay" and t.scenario[0] == "s"]
    for direction, expected in demo.CHEST_SUCCESS.items():
        chosen = [t for t in chest if t.direction.value == direction]
        assert len(chosen) == expected >= 50
        assert len({t.stem for t in chosen}) >= 16


def test_every_image_of_a_disease_has_its_own_lesion() -> None:
    lesions = {t.lesion for t in plan_tasks() if t.disease == "Pneumothorax"}
    assert len(lesions) > 16
