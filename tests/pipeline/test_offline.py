"""The offline backend: deterministic, labelled, and its judge sees what its editor did."""

import io
from typing import Any

import pytest

from app.demo.phantoms import Lesion, Scene, render
from app.models import Modality
from pipeline import offline
from pipeline.backend import TaskInfo
from pipeline.vocabulary import DIMENSIONS
from tests import aio

CASES = [("chest_xray", "Pleural_Effusion"), ("chest_xray", "Pneumothorax"),
         ("brain_mri", "glioma"), ("brain_mri", "pituitary"), ("fundus", "AMD"),
         ("fundus", "Diabetes")]
# What the judge must find for each flaw of the editor (lost grain may cost more than realism).
EXPECTED = {None: set(), "too_subtle": {"compliance"}, "sharp_edge": {"realism"},
            "wrong_place": {"compliance", "structure", "fidelity"}}


def original(modality: str, disease: str, direction: str, size: int = 512) -> bytes:
    scene = Scene(Modality(modality), 5)
    if direction == "remove":  # a removal starts from an image that shows the finding
        place = offline.place_of(TaskInfo("x", modality, disease, direction))
        scene = scene.with_lesions(Lesion(place.x, place.y, place.radius, place.strength))
    out = io.BytesIO()
    render(scene, size).save(out, "JPEG", quality=95)
    return out.getvalue()


@pytest.mark.parametrize("modality, disease", CASES)
@pytest.mark.parametrize("direction", ["add", "remove"])
@pytest.mark.parametrize("flaw", [None, *offline.FLAWS])
def test_the_judge_finds_each_flaw(monkeypatch: pytest.MonkeyPatch, modality: str, disease: str,
                                   direction: str, flaw: str | None) -> None:
    task = TaskInfo("case", modality, disease, direction)
    monkeypatch.setattr(offline, "flaws_for", lambda *_: {flaw} if flaw else set())
    image = original(modality, disease, direction)
    verdict = offline.rate(task, image, offline.apply_edit(task, image, ""))
    failed = {d for d in DIMENSIONS if not verdict[d]}
    if flaw == "lost_grain":
        assert "realism" in failed and "compliance" not in failed
    else:
        assert failed == EXPECTED[flaw]
    assert verdict["qualified"] == (not failed)
    assert verdict["has_disease"] == (("compliance" not in failed) == (direction == "add"))


def run_loop(task: TaskInfo, image: bytes, feedback: list[dict[str, Any]] | None = None
             ) -> list[dict[str, Any]]:
    backend = offline.OfflineBackend()
    history: list[dict[str, Any]] = []

    async def go() -> None:
        for number in range(1, 6):
            instruction = await backend.instruction(task, image, history, feedback or [])
            edit = await backend.edit(task, image, instruction.text)
            assert edit.image is not None
            verdict = await backend.judge(task, image, edit.image, instruction.text)
            assert verdict.fields is not None
            history.append({"round": number, "instruction": instruction.text,
                            "verdict": verdict.fields})
            if verdict.fields["qualified"]:
                return

    aio.run(go())
    return history


@pytest.mark.parametrize("direction", ["add", "remove"])
def test_refinement_cures_the_flaw_and_repeats_exactly(direction: str) -> None:
    """A removal too: its faint first round is cured by asking for the finding to go."""
    rounds = []
    for key in (f"s{n:04d}-Pleural_Effusion" for n in range(12)):
        task = TaskInfo(key, "chest_xray", "Pleural_Effusion", direction)
        image = original("chest_xray", "Pleural_Effusion", direction)
        history = run_loop(task, image)
        assert history[-1]["verdict"]["qualified"], history
        assert history == run_loop(task, image)  # deterministic
        rounds.append(len(history))
    assert set(rounds) == {1, 2}  # some succeed at once, the flawed ones after one correction


def test_a_removal_is_refined_in_its_own_direction() -> None:
    """A failed compliance on a removal asks for the finding to go, never for it to be made
    conspicuous (which would ask the editor to add it), and that wording cures a faint one."""
    task = TaskInfo("s0001-glioma", "brain_mri", "glioma", "remove")
    history = [{"round": 1, "instruction": "Remove every sign of glioma.", "verdict": {
        "compliance": False, "structure": True, "realism": True, "fidelity": True}}]
    text = aio.run(offline.OfflineBackend().instruction(task, b"", history, [])).text
    assert offline.CURES["too_subtle"] not in text
    assert offline.REMOVAL_CURES["too_subtle"] in text
    assert "too_subtle" not in offline.flaws_for(task, text)
    addition = TaskInfo("s0001-glioma", "brain_mri", "glioma", "add")
    text = aio.run(offline.OfflineBackend().instruction(addition, b"", history, [])).text
    assert offline.CURES["too_subtle"] in text



def test_readers_tags_steer_the_first_refinement() -> None:
    task = TaskInfo("s0001-glioma", "brain_mri", "glioma", "add")
    backend = offline.OfflineBackend()
    history = [{"round": 1, "instruction": "Add a glioma.", "verdict": {
        "compliance": True, "structure": True, "realism": True, "fidelity": True}}]
    feedback = [{"reader_role": "radiologist", "overall": "reject", "comment": "stamped on",
                 "tags": ["unnatural_edge"]}]
    steered = aio.run(backend.instruction(task, b"", history, feedback))
    plain = aio.run(backend.instruction(task, b"", history, []))
    assert offline.CURES["sharp_edge"] in steered.text and offline.CURES["sharp_edge"] not in plain.text
    assert "stamped on" in steered.prompt.text  # the template received the readers' words


def test_the_backend_says_what_it_is() -> None:
    backend = offline.OfflineBackend()
    assert "offline" in backend.label and "not a model" in backend.label
    task = TaskInfo("k", "fundus", "AMD", "add")
    image = original("fundus", "AMD", "add", 256)
    verdict = aio.run(backend.judge(task, image, image, "Add AMD."))
    assert verdict.call.model == offline.MODEL and verdict.prompt.name == "judge.j2"
    assert verdict.fields is not None and not verdict.fields["compliance"]  # nothing changed
