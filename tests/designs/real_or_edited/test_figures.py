"""The real-or-edited figures: each reader's area is scikit-learn's on the same ratings,
sensitivity and specificity are counted at the middle of the scale, a click on the changed
region counts as found and one far from it does not, and the iMRMC file holds every read."""

import io
from pathlib import Path

import numpy as np
import pytest
from PIL import Image
from scipy.ndimage import distance_transform_edt
from sklearn.metrics import roc_auc_score
from sqlalchemy.engine import Engine
from sqlmodel import Session, col, select

from app.designs.real_or_edited import answers as roe
from app.designs.real_or_edited.figures import MEAN, POOLED, imrmc, results
from app.designs.real_or_edited.ratings import rating
from app.errors import Conflict
from app.images.metrics import WORK_SIDE, changed_mask, grey
from app.models import Task
from app.studies.images import item_image
from app.studies.models import Assignment, RealOrEditedAnswer, StudyItem
from tests.studies.conftest import make_real_or_edited, make_study

# Reader 0 is good (right at confidence 4 but for one slip), reader 1 guesses.
ANSWERS = {0: lambda truth, i: ("edited" if truth else "real", 4) if i != 3 else
           ("real" if truth else "edited", 2),
           1: lambda truth, i: ("edited" if i % 2 else "real", 1 + i % 5)}


def _points(session: Session, item: StudyItem) -> tuple[tuple[float, float], tuple[float, float]] | None:
    """A point on the edit's changed region and the point farthest from it; None when the
    edit changed nothing measurable."""
    original = item_image(session, item, "original").read_bytes()
    with Image.open(io.BytesIO(original)) as image:
        side = min(WORK_SIDE, max(image.size))  # the side change_region works at
    mask = changed_mask(grey(original, side), grey(item_image(session, item, "edit").read_bytes(), side))
    if not mask.any():
        return None
    rows, columns = np.nonzero(mask)
    middle = len(rows) // 2
    far = np.unravel_index(np.argmax(distance_transform_edt(~mask)), mask.shape)
    side = mask.shape[0]
    return ((columns[middle] + 0.5) / side, (rows[middle] + 0.5) / side), \
        ((far[1] + 0.5) / side, (far[0] + 0.5) / side)


def test_figures_match_scikit_learn_and_count_clicks(demo_engine: Engine, tmp_path: Path) -> None:
    setup = make_real_or_edited(demo_engine, per_modality=4)
    expected: dict[str, tuple[list[bool], list[int]]] = {}
    clicked = {"found": 0, "missed": 0}
    with Session(demo_engine) as s:
        for r, reader in enumerate(setup.readers):
            truths, ratings = [], []
            for a in s.scalars(select(Assignment).where(col(Assignment.user_id) == reader.id)
                               .order_by(col(Assignment.sequence))):
                item = s.get(StudyItem, a.item_id)
                assert item is not None
                truth = item.shows == "edit"
                call, confidence = ANSWERS[r](truth, a.item_id)
                click: dict[str, float] = {}
                points = _points(s, item) if r == 0 and truth and call == "edited" else None
                if points:  # one click on the change, one far off
                    if not clicked["found"]:
                        x, y = points[0]
                        click, clicked["found"] = {"click_x": x, "click_y": y}, 1
                    elif not clicked["missed"]:
                        x, y = points[1]
                        click, clicked["missed"] = {"click_x": x, "click_y": y}, 1
                roe.submit(s, setup.study, a, roe.RealOrEditedIn.model_validate(
                    {"call": call, "confidence": confidence, "submission_id": f"sub-{a.uid}", **click}))
                truths.append(truth)
                ratings.append(rating(call == "edited", confidence))
            expected[reader.name] = (truths, ratings)
        found = results(s, setup.study, tmp_path)
    rows = {row.name: row for row in found.rows}
    assert found.reason is None and found.cases == 12 and found.edits == found.originals == 6
    for name, (truths, ratings) in expected.items():
        row = rows[name]
        assert row.area.value == pytest.approx(roc_auc_score(truths, ratings))
        assert row.area.low is not None and row.area.low <= row.area.value <= row.area.high
        called = [rt > 5.5 for rt in ratings]
        edits = [c for t, c in zip(truths, called, strict=True) if t]
        reals = [not c for t, c in zip(truths, called, strict=True) if not t]
        assert row.sensitivity.value == pytest.approx(sum(edits) / len(edits))
        assert row.specificity.value == pytest.approx(sum(reals) / len(reals))
    every = [v for pair in expected.values() for v in zip(*pair, strict=True)]
    pooled = roc_auc_score([t for t, _ in every], [r for _, r in every])
    assert rows[POOLED].area.value == pytest.approx(pooled)
    assert rows[MEAN].area.value == pytest.approx(np.mean([rows[n].area.value for n in expected]))
    good = rows[setup.readers[0].name].localisation
    assert (good.clicks, good.found, good.unmeasured) == (2, 1, 0)
    assert rows[setup.readers[1].name].localisation.clicks == 0
    assert len(list((tmp_path / "change-regions").rglob("*.npz"))) >= 2  # measured once, kept
    with Session(demo_engine) as s:
        again = {row.name: row.localisation for row in results(s, setup.study, tmp_path).rows}
    assert again[setup.readers[0].name] == good


def test_imrmc_holds_every_first_read_with_its_truth(demo_engine: Engine) -> None:
    setup = make_real_or_edited(demo_engine, per_modality=2, repeat_fraction=0.5)
    with Session(demo_engine) as s:
        for a in s.scalars(select(Assignment).where(col(Assignment.study_id) == setup.study.id)):
            roe.submit(s, setup.study, a, roe.RealOrEditedIn.model_validate(
                {"call": "edited", "confidence": 5, "submission_id": f"sub-{a.uid}"}))
        lines = "".join(imrmc(s, setup.study)).splitlines()
        shows = {i.id: i.shows for i in s.scalars(select(StudyItem).where(
            col(StudyItem.study_id) == setup.study.id))}
    data = lines[lines.index("BEGIN DATA:") + 1:]
    truth_rows = [line.split(",") for line in data if line.startswith("-1,")]
    read_rows = [line.split(",") for line in data if not line.startswith("-1,")]
    assert {int(c): int(t) for _, c, _, t in truth_rows} == {i: int(s == "edit") for i, s in shows.items()}
    assert len(read_rows) == 2 * 6 and {r[3] for r in read_rows} == {"10"}  # repeats left out
    assert "NR: 2" in lines and "N0: 3" in lines and "N1: 3" in lines


def test_no_answers_says_why_and_another_design_is_refused(demo_engine: Engine, tmp_path: Path) -> None:
    setup = make_real_or_edited(demo_engine, per_modality=2)
    with Session(demo_engine) as s:
        assert results(s, setup.study, tmp_path).reason == "no answers yet"
    other = make_study(demo_engine)
    with Session(demo_engine) as s, pytest.raises(Conflict):
        results(s, other.study, tmp_path)


def test_breakdowns_and_repeats(demo_engine: Engine, tmp_path: Path) -> None:
    """Per modality, the pooled area is scikit-learn's on that modality's reads; by direction,
    sensitivity over that direction's edits; a repeat answered the other way counts apart."""
    setup = make_real_or_edited(demo_engine, readers=1, per_modality=4, repeat_fraction=0.5)
    expected: dict[str, tuple[list[bool], list[int]]] = {}
    with Session(demo_engine) as s:
        rows = s.execute(select(Assignment, StudyItem, Task)
                         .join(StudyItem, col(StudyItem.id) == Assignment.item_id)
                         .join(Task, col(Task.id) == StudyItem.task_id)
                         .where(col(Assignment.study_id) == setup.study.id)
                         .order_by(col(Assignment.sequence))).all()
        for assignment, item, task in rows:
            truth = item.shows == "edit"
            # Right on chest X-rays, a coin on the others; every repeat called the other way.
            call = truth if task.modality == "chest_xray" else assignment.item_id % 2 == 0
            if assignment.repeat_of is not None:
                call = not call
            confidence = 2 + assignment.item_id % 4
            roe.submit(s, setup.study, assignment, roe.RealOrEditedIn.model_validate(
                {"call": "edited" if call else "real", "confidence": confidence,
                 "submission_id": f"sub-{assignment.uid}"}))
            if assignment.repeat_of is None:
                pair = expected.setdefault(task.modality, ([], []))
                pair[0].append(truth)
                pair[1].append(rating(call, confidence))
        found = results(s, setup.study, tmp_path)
        edits_by_direction: dict[str, list[bool]] = {}
        for assignment, item, task in rows:
            if assignment.repeat_of is None and item.shows == "edit":
                answer = s.scalars(select(RealOrEditedAnswer).where(
                    col(RealOrEditedAnswer.assignment_id) == assignment.id)).one()
                edits_by_direction.setdefault(task.direction, []).append(answer.edited)
    by_modality = {g.label: g for g in found.by_modality}
    assert set(by_modality) == set(expected)
    for modality, (truths, ratings) in expected.items():
        assert by_modality[modality].area is not None
        assert by_modality[modality].area.value == pytest.approx(roc_auc_score(truths, ratings))
    assert by_modality["chest_xray"].sensitivity.value == by_modality["chest_xray"].specificity.value == 1
    for g in found.by_direction:
        called = edits_by_direction[g.label]
        assert g.sensitivity.value == pytest.approx(sum(called) / len(called))
    [repeats] = found.repeats
    assert repeats.pairs == 6 and repeats.same_call == 0 and repeats.same_rating == 0
    as_json = found.as_dict()
    assert as_json["repeats"] == [{"reader": repeats.reader, "pairs": 6, "same_call": 0, "same_rating": 0}]
    assert {m["modality"] for m in as_json["by_modality"]} == set(expected)  # type: ignore[index, union-attr]
