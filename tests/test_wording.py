"""Words on every page: counts that agree with their nouns, the data's names as written."""

import pytest

from app.wording import plural, spaced


@pytest.mark.parametrize(("raw", "shown"), [
    ("chest_xray", "chest X-ray"), ("brain_mri", "brain MRI"), ("signs of amd", "signs of AMD"),
    ("Pleural_Effusion", "Pleural Effusion"), ("fundus", "fundus")])
def test_the_data_s_names_read_as_a_radiologist_writes_them(raw: str, shown: str) -> None:
    """They were shown raw: "chest xray", "signs of amd", chest_xray."""
    assert spaced(raw) == shown


def test_a_count_agrees_with_its_noun() -> None:
    assert plural("reader", 1) == "reader" and plural("reader", 3) == "readers"
