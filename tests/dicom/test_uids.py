"""UIDs the same on every export, valid under any root the operator may set."""

import pytest
from pydantic import ValidationError
from pydicom.uid import UID

from app.dicom.uids import Uids
from app.settings import Settings

LONGEST_ROOT = "1.2.826.0.1.3680043.10.543.123456789.1234"  # 40 characters


@pytest.mark.parametrize("root", ["", "1.2.826.0.1.3680043.10.543", LONGEST_ROOT])
def test_every_uid_is_valid_and_the_same_for_the_same_names(root: str) -> None:
    uids = Uids(root)
    made = {uids.uid("edit", f"task-{n}", "round 2") for n in range(200)}
    assert len(made) == 200
    assert all(UID(u).is_valid and len(u) <= 64 for u in made)
    assert uids.uid("edit", "task-1", "round 2") == Uids(root).uid("edit", "task-1", "round 2")
    assert uids.uid("a", "bc") != uids.uid("ab", "c")


def test_the_patient_id_is_a_pseudonym_of_the_source_image() -> None:
    uids = Uids()
    pid = uids.patient_id("Chest-XRay/normal/Te-no_0001.jpeg")
    assert pid == uids.patient_id("Chest-XRay/normal/Te-no_0001.jpeg")
    assert pid.startswith("MB-") and "no_0001" not in pid and len(pid) == 19
    assert Uids("1.2.3").patient_id("Chest-XRay/normal/Te-no_0001.jpeg") != pid


@pytest.mark.parametrize("root", ["1.02.3", "1.2.x", "2.25." + "1" * 40])
def test_a_root_that_cannot_be_one_is_refused_naming_the_setting(root: str) -> None:
    with pytest.raises(ValidationError, match="MEDBANANA_DICOM_UID_ROOT"):
        Settings(dicom_uid_root=root)
