"""Every design is registered, asked by its kind, and names a reading screen that exists."""

from pathlib import Path

import pytest
from pydantic import BaseModel

from app.designs import StudyDesign, design_of
from app.studies.models import Design, Study

TEMPLATES = Path(__file__).resolve().parents[2] / "templates"


@pytest.mark.parametrize("kind", list(Design))
def test_every_design_is_registered_with_a_screen_and_an_answer(kind: Design) -> None:
    design = design_of(kind)
    assert isinstance(design, StudyDesign) and design.kind is kind
    assert (TEMPLATES / design.reading_template).is_file()
    assert issubclass(design.answer_model, BaseModel)
    # The rubric designs share the agreement page; a design without the rubric has its own.
    assert (design.figures_page == "agreement") == kind.rubric
    assert design.keeps_drafts == kind.rubric
    # Each has a figures page and lists the sample among its downloads.
    assert design.figures and design.figures[0].path.split("/")[0] == design.figures_page
    assert "design.csv" in {link.path for link in design.exports}
    # A real-or-edited image has an address of its own; the others show theirs by name.
    assert bool(design.images) == (not kind.single_image)


def test_a_design_is_asked_by_study_kind_or_name() -> None:
    study = Study(name="s", design=Design.real_or_edited.value, seed=1)
    assert design_of(study) is design_of(Design.real_or_edited) is design_of("real_or_edited")
    with pytest.raises(ValueError):
        design_of("pairwise-someday")
