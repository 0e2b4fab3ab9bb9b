"""The prompt templates: every purpose renders, carries the paper's constraints, and has a
version that names the exact text."""

import re

import jinja2
import pytest

from pipeline import prompts

MODALITIES = ("chest_xray", "brain_mri", "fundus", "medical")
CONSTRAINTS = ("Fidelity preservation", "Negative rules", "Counterfactual minimality")
HISTORY = [{"round": 1, "instruction": "Add a small effusion.",
            "verdict": {"compliance": False, "structure": True, "realism": True, "fidelity": True,
                        "qualified": False, "reason": "The effusion is barely perceptible."}},
           {"round": 2, "instruction": "Add a clear effusion.",
            "verdict": {"error": "The edit returned no image."}}]


@pytest.mark.parametrize("modality", MODALITIES)
@pytest.mark.parametrize("direction", ["add", "remove"])
def test_first_instructions_carry_the_constraints(modality: str, direction: str) -> None:
    prompt = prompts.first_instruction(modality, "Pleural_Effusion", direction)
    assert all(c in prompt.text for c in CONSTRAINTS)
    assert "pleural effusion" in prompt.text and "{{" not in prompt.text
    assert re.fullmatch(r"[0-9a-f]{12}", prompt.version)


def test_modalities_get_their_own_guidance() -> None:
    chest = prompts.first_instruction("chest_xray", "Pneumothorax", "add").text
    fundus = prompts.first_instruction("fundus", "AMD", "add").text
    assert "costophrenic" in chest and "costophrenic" not in fundus
    assert "macula" in fundus and "AMD" in fundus  # acronyms keep their capitals


def test_refinement_sees_the_whole_history_and_the_readers() -> None:
    text = prompts.refinement("chest_xray", "Pleural_Effusion", "add", HISTORY, [
        {"reader_role": "radiologist", "overall": "reject", "comment": "meniscus sign missing",
         "tags": ["too_subtle"]}]).text
    assert text.index("Add a small effusion.") < text.index("Add a clear effusion.")
    assert "barely perceptible" in text and "The edit returned no image." in text
    assert "meniscus sign missing" in text and "pattern of failures" in text
    alone = prompts.refinement("chest_xray", "Pleural_Effusion", "add", HISTORY).text
    assert "Radiologists" not in alone


def test_the_judge_sees_edit_original_and_instruction_with_the_weights() -> None:
    text = prompts.judge("brain_mri", "glioma", "remove", "Remove the glioma.").text
    assert text.index("EDITED") < text.index("ORIGINAL")
    assert '"Remove the glioma."' in text and "glioma, to be removed" in text
    assert all(w in text for w in ("40 %", "25 %", "20 %", "15 %"))


def test_versions_differ_by_template_and_missing_variables_fail() -> None:
    versions = {prompts.version_of(n) for n in ("instruction_add.j2", "instruction_remove.j2",
                                                 "refinement.j2", "judge.j2")}
    assert len(versions) == 4
    with pytest.raises(jinja2.UndefinedError):
        prompts.render("judge.j2", modality="fundus", disease="AMD", direction="add")
