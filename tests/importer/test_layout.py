"""The layout rules of the format doc: folder names, modality, file names."""

import pytest

from app.importer import layout
from app.models import Direction, Modality


@pytest.mark.parametrize("name, expected", [
    ("Chest-XRay-edit", ("Chest-XRay", Direction.add)),
    ("Brain-MRI-remove", ("Brain-MRI", Direction.remove)),
    ("MIMIC_single_disease_selection_dim1024_1k_per_class-edit",
     ("MIMIC_single_disease_selection_dim1024_1k_per_class", Direction.add)),
    ("Chest-XRay-edit-failed", None),
    ("notes", None),
])
def test_run_folders(name: str, expected: tuple[str, Direction] | None) -> None:
    assert layout.parse_run_folder(name) == expected


@pytest.mark.parametrize("dataset, modality", [
    ("MIMIC_x", Modality.chest_xray), ("Chest-XRay", Modality.chest_xray),
    ("Brain-MRI", Modality.brain_mri), ("tumor_set", Modality.brain_mri),
    ("ODIR-5k", Modality.fundus), ("Fundus", Modality.fundus), ("Skin", Modality.medical),
])
def test_modality_follows_the_scripts(dataset: str, modality: Modality) -> None:
    assert layout.infer_modality(dataset) is modality


def test_file_names_are_built_from_fields() -> None:
    assert layout.accepted_relpath("Brain-MRI", Direction.remove, "Te-noTr_0001", "glioma") == (
        "Brain-MRI-remove/normal/Te-noTr_0001-glioma-remove.jpeg")
    assert layout.failed_relpath("Chest-XRay", Direction.add, "s5-1", "Lung_Lesion", 3) == (
        "Chest-XRay-edit-failed/Lung_Lesion/s5-1-Lung_Lesion-edit-failed-3.jpeg")
    assert layout.source_category(Direction.add, "Edema") == "normal"
    assert layout.source_category(Direction.remove, "Edema") == "Edema"


@pytest.mark.parametrize("name, safe", [
    ("s1.jpeg", True), ("Te-noTr_0001.jpg", True), ("../x.jpeg", False), ("a/b", False),
    ("a\\b", False), ("", False), (".hidden", False), ("x\x00y", False), (None, False),
    ("x" * 256, False),
])
def test_safe_names(name: object, safe: bool) -> None:
    assert layout.is_safe_name(name) is safe
