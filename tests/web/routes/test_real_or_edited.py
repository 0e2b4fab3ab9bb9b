"""The real-or-edited routes: one image by the read's uid, re-encoded so that nothing in the
address, the headers or the file's metadata tells an original from an edit; answers 303 or
422 with what was typed kept; the paired images, the difference map and drafts refused; the
results page and the iMRMC download for admins."""

import csv
import io
import re
import struct
from collections import defaultdict

import pytest
from bs4 import BeautifulSoup
from fastapi.testclient import TestClient
from PIL import Image
from sqlalchemy.engine import Engine
from sqlmodel import Session, col, select

from app.background import wait_for_background
from app.images.blinded import SIZE_STEP
from app.models import Attempt, Task
from app.settings import Settings
from app.studies.models import Assignment, RealOrEditedAnswer, StudyItem
from tests.studies.conftest import StudySetup, make_real_or_edited, make_study
from tests.web.routes.test_reading import as_user


@pytest.fixture
def study(demo_engine: Engine) -> StudySetup:
    return make_real_or_edited(demo_engine, per_modality=4)


@pytest.fixture
def reader(demo_engine: Engine, settings: Settings, study: StudySetup) -> TestClient:
    return as_user(demo_engine, settings, "roe-reader-0")


def _headers(jpeg: bytes) -> bytes:
    """Every byte before the coded pixels (the segments up to and including start of scan)."""
    at = 2
    while jpeg[at + 1] != 0xDA:
        at += 2 + struct.unpack(">H", jpeg[at + 2:at + 4])[0]
    return jpeg[:at + 2 + struct.unpack(">H", jpeg[at + 2:at + 4])[0]]


def _reads(engine: Engine, study: StudySetup, user_name: str) -> list[tuple[Assignment, StudyItem]]:
    reader = next(r for r in study.readers if r.name == user_name)
    with Session(engine) as s:
        return list(s.execute(select(Assignment, StudyItem)
                              .join(StudyItem, col(StudyItem.id) == Assignment.item_id)
                              .where(col(Assignment.user_id) == reader.id)
                              .order_by(col(Assignment.sequence))).all())


def answer_apart(engine: Engine, settings: Settings, study: StudySetup, alike: bool = False) -> None:
    """Every reader reads every case, reader r wrong on a different quarter of the cases
    (``alike``: every reader answers as the first does)."""
    for r, person in enumerate(study.readers):
        _answer(engine, settings, study, person.name, 0 if alike else r)


def _answer(engine: Engine, settings: Settings, study: StudySetup, name: str, r: int) -> None:
    """One reader's answers, wrong on the quarter of the cases ``r`` picks.
    Each reader's order is drawn from the study's secret, so the answer follows the case, not
    its place in the list: the areas are then the same every run and differ between readers
    (readers apart, as tests want them, unless asked to be alike)."""
    client = as_user(engine, settings, name)
    for assignment, item in _reads(engine, study, name):
        k = item.id or 0
        edited = (item.shows == "edit") == ((k + r) % 4 != 0)
        form = {"call": "edited" if edited else "real", "confidence": str(1 + (k + r) % 5),
                "submission_id": f"s-{assignment.uid}", "time_on_case_ms": "1500"}
        if edited:
            form |= {"click_x": "0.5", "click_y": "0.5"}
        assert client.post(f"/read/{study.study.id}/{assignment.sequence}", data=form,
                           follow_redirects=False).status_code == 303


def test_the_screen_names_nothing_and_shows_one_image(demo_engine: Engine, reader: TestClient,
                                                      study: StudySetup) -> None:
    sid = study.study.id
    page = reader.get(f"/read/{sid}/1")
    assert page.status_code == 200
    html = BeautifulSoup(page.text, "html.parser")
    images = html.select("#panes img")
    assert len(images) == 1
    assert re.fullmatch(rf"/read/{sid}/shown/[0-9a-f]{{24}}", images[0]["src"])
    assert html.select_one("#instruction") is None  # the instruction names the change
    assert {i["value"] for i in html.select("input[name=call]")} == {"real", "edited"}
    assert len(html.select("input[name=confidence]")) == 5
    assert not html.select("[data-action=flicker], [data-swipe], [data-diff]")
    with Session(demo_engine) as s:
        secrets = []
        for item in s.scalars(select(StudyItem).where(col(StudyItem.study_id) == sid)):
            attempt, task = s.get(Attempt, item.attempt_id), s.get(Task, item.task_id)
            assert attempt is not None and task is not None
            secrets += [task.task_key, (attempt.image_relpath or "").rsplit("/", 1)[-1],
                        task.disease, item.uid]
    text = page.text
    assert not [word for word in secrets if word and word in text]
    assert "original" not in images[0]["src"] and "edit" not in images[0]["src"]


def test_images_tell_nothing_but_their_pixels(demo_engine: Engine, reader: TestClient,
                                              study: StudySetup) -> None:
    """Grouped by the shown size and mode, originals and edits carry the same bytes before the
    coded pixels, lengths in whole size steps, and the same response headers."""
    sid = study.study.id
    groups: dict[tuple[tuple[int, int], str], dict[str, set[bytes]]] = defaultdict(lambda: defaultdict(set))
    header_names: dict[str, set[frozenset[str]]] = defaultdict(set)
    for assignment, item in _reads(demo_engine, study, "roe-reader-0"):
        response = reader.get(f"/read/{sid}/shown/{assignment.uid}")
        assert response.status_code == 200 and response.headers["content-type"] == "image/jpeg"
        data = response.content
        assert len(data) % SIZE_STEP == 0
        assert "last-modified" not in response.headers and "content-disposition" not in response.headers
        with Image.open(io.BytesIO(data)) as image:
            assert not image.getexif() and "icc_profile" not in image.info and "comment" not in image.info
            groups[(image.size, image.mode)][item.shows].add(_headers(data))
        header_names[item.shows].add(frozenset(response.headers) - {"etag"})
        again = reader.get(f"/read/{sid}/shown/{assignment.uid}",
                           headers={"If-None-Match": response.headers["etag"]})
        assert again.status_code == 304
    assert header_names["edit"] == header_names["original"] and len(header_names["edit"]) == 1
    mixed = [g for g in groups.values() if g["edit"] and g["original"]]
    assert mixed, "the sample should hold an original and an edit of one format"
    for group in groups.values():
        assert len(group["edit"] | group["original"]) == 1


def test_the_paired_images_drafts_and_other_readers_are_refused(
        demo_engine: Engine, settings: Settings, reader: TestClient, study: StudySetup) -> None:
    sid = study.study.id
    [(first, _), *_] = _reads(demo_engine, study, "roe-reader-0")
    for which in ("original", "edit"):
        assert reader.get(f"/read/{sid}/image/{first.uid}/{which}").status_code == 403
    assert reader.get(f"/read/{sid}/diff/{first.uid}").status_code == 403
    assert reader.put(f"/read/{sid}/1/draft", json={"confidence": 3}).status_code == 409
    other = as_user(demo_engine, settings, "roe-reader-1")
    assert other.get(f"/read/{sid}/shown/{first.uid}").status_code == 403
    assert as_user(demo_engine, settings, "roe-outsider").get(f"/read/{sid}/1").status_code == 403


@pytest.mark.parametrize("form, field", [
    ({"call": "edited", "confidence": "9"}, "confidence"),
    ({"call": "perhaps", "confidence": "3"}, "call"),
    ({"confidence": "3"}, "call"),
    ({"call": "edited", "confidence": "3", "click_x": "0.5"}, "click_y"),
    ({"call": "edited", "confidence": "3", "click_x": "2", "click_y": "0.1"}, "click_x"),
    ({"call": "edited", "confidence": "3", "click_x": "nan", "click_y": "0.1"}, "click_x"),
    ({"call": "edited", "confidence": "3.5"}, "confidence"),
])
def test_bad_answers_are_422_with_what_was_typed_kept(demo_engine: Engine, reader: TestClient,
                                                      study: StudySetup, form: dict[str, str],
                                                      field: str) -> None:
    response = reader.post(f"/read/{study.study.id}/1", data=form | {"submission_id": "sub-roe-bad-1"})
    assert response.status_code == 422
    page = BeautifulSoup(response.text, "html.parser")
    assert page.select_one(f"#error-{field}") is not None
    typed = page.select_one("input[name=call][checked]")
    kept = form.get("call") if form.get("call") in ("real", "edited") else None
    assert (typed["value"] if typed else None) == kept
    with Session(demo_engine) as s:
        assert s.scalars(select(RealOrEditedAnswer)).all() == []


def test_an_answer_is_stored_once_and_the_results_and_imrmc_follow(
        demo_engine: Engine, settings: Settings, reader: TestClient, study: StudySetup) -> None:
    sid = study.study.id
    for assignment, item in _reads(demo_engine, study, "roe-reader-0"):
        call = "edited" if item.shows == "edit" else "real"
        form = {"call": call, "confidence": "4", "submission_id": f"sub-{assignment.uid}",
                "time_on_case_ms": "2100", "click_x": "0.5", "click_y": "0.5"}
        for _ in range(2):  # a double submit stores once
            posted = reader.post(f"/read/{sid}/{assignment.sequence}", data=form, follow_redirects=False)
            # Straight to the reader's next case (or their list, done).
            assert posted.status_code == 303
            assert re.fullmatch(rf"/read/{sid}/\d+|/read\?done={sid}", posted.headers["location"])
    with Session(demo_engine) as s:
        stored = s.scalars(select(RealOrEditedAnswer)).all()
    assert len(stored) == 12 and all(a.time_on_case_ms == 2100 for a in stored)
    # A finished study's row said "Continue".
    mine = BeautifulSoup(reader.get("/read").text, "html.parser")
    finished = mine.select_one(f'#my-studies tr[data-study="{sid}"]')
    assert finished.select_one("a.continue") is None and finished.select_one(".finished")
    assert all((a.click_x is None) == (not a.edited) for a in stored)
    admin = as_user(demo_engine, settings, "roe-admin")
    assert admin.get(f"/studies/{sid}/agreement", follow_redirects=False).headers["location"] \
        == f"/studies/{sid}/real-or-edited"
    page = BeautifulSoup(admin.get(f"/studies/{sid}/real-or-edited").text, "html.parser")
    row = page.select_one('#real-or-edited-table tr[data-reader="roe-reader-0"] td.area')
    assert row is not None and row.get_text().startswith("1.000")
    assert {r["data-modality"] for r in page.select("#by-modality tr[data-modality]")} == {
        "chest_xray", "brain_mri", "fundus"}
    figures = admin.get(f"/studies/{sid}/real-or-edited.json").json()
    [first] = [r for r in figures["readers"] if r["reader"] == "roe-reader-0"]
    assert first["area"]["value"] == 1.0 and first["reads"] == 12 and figures["edits"] == 6
    download = admin.get(f"/studies/{sid}/real-or-edited.imrmc")
    assert download.status_code == 200 and "attachment" in download.headers["content-disposition"]
    assert "BEGIN DATA:" in download.text.splitlines()
    long = list(csv.DictReader(io.StringIO(admin.get(f"/studies/{sid}/real-or-edited.csv").text)))
    assert list(long[0])[:4] == ["reader", "case", "truth", "score"] and len(long) == 12
    imrmc_truth = {line.split(",")[1]: line.split(",")[3] for line in download.text.splitlines()
                   if line.startswith("-1,")}
    assert all(imrmc_truth[row["case"]] == row["truth"] for row in long)  # one case id in both
    assert {row["score"] for row in long} == {"9", "2"}  # right at confidence 4 every time
    design = list(csv.DictReader(io.StringIO(admin.get(f"/studies/{sid}/design.csv").text)))
    with Session(demo_engine) as s:
        truth = {i.uid: i.shows for i in s.scalars(select(StudyItem).where(col(StudyItem.study_id) == sid))}
    assert {row["item"]: row["shows"] for row in design} == truth
    assert reader.get(f"/studies/{sid}/real-or-edited").status_code == 403
    for url in ("report.html", "agreement.json", "disagreements", "reference.csv"):
        assert admin.get(f"/studies/{sid}/{url}").status_code == 409  # no rubric figures here
    detail = BeautifulSoup(admin.get(f"/studies/{sid}").text, "html.parser")
    assert detail.select_one("#real-or-edited-link") and not detail.select_one("#agreement-link")
    assert detail.select_one("#study-tools").get_text() == "Window/level, invert and presets"


def test_another_design_has_no_real_or_edited_figures(demo_engine: Engine, settings: Settings) -> None:
    """The iMRMC download of a rubric study once started streaming and broke off mid-response."""
    other = make_study(demo_engine)
    admin = as_user(demo_engine, settings, "study-admin")
    for suffix in ("", ".json", ".csv", ".imrmc"):
        response = admin.get(f"/studies/{other.study.id}/real-or-edited{suffix}")
        assert response.status_code == 409, suffix
        assert "not a real-or-edited study" in response.text


def test_the_new_study_form_makes_a_real_or_edited_study(demo_engine: Engine, settings: Settings,
                                                        study: StudySetup) -> None:
    admin = as_user(demo_engine, settings, "roe-admin")
    form = {"name": "second turing", "design": "real_or_edited", "total": "6",
            "original_share": "0.3", "readers": [str(study.readers[0].id)],
            "viewer_tools": ["window", "flicker"]}
    bad = admin.post("/studies", data=form | {"original_share": "0.95"})
    assert bad.status_code == 422
    page = BeautifulSoup(bad.text, "html.parser")
    assert page.select_one("input[name=original_share]")["value"] == "0.95"
    made = admin.post("/studies", data=form, follow_redirects=False)
    wait_for_background()  # its images are drawn in a thread of its own
    assert made.status_code == 303
    page = BeautifulSoup(admin.get(made.headers["location"]).text, "html.parser")
    boxes = page.select("#field-viewer_tools input[name=viewer_tools]")
    assert [(b["value"], b.has_attr("checked")) for b in boxes] == [("window", True)]
    with Session(demo_engine) as s:
        items = s.scalars(select(StudyItem).where(col(StudyItem.study_id) != study.study.id)).all()
        cached = list((settings.resolved_cache_dir() / "blinded").rglob("*.jpeg"))
    assert len(items) == 6 and [i.shows for i in items].count("original") == 2  # 0.3 of 6, rounded
    assert len(cached) >= 6  # drawn when the study was made: no first view is slower


def test_readers_random_come_first_and_the_judge_says_why_it_is_not_drawn(
        demo_engine: Engine, settings: Settings) -> None:
    study = make_real_or_edited(demo_engine, readers=3, per_modality=4)
    sid = study.study.id
    answer_apart(demo_engine, settings, study)
    admin = as_user(demo_engine, settings, "roe-admin")
    page = BeautifulSoup(admin.get(f"/studies/{sid}/real-or-edited").text, "html.parser")
    sections = [s["id"] for s in page.select("section[id]")]
    assert sections.index("readers-random") < sections.index("can-readers-tell")
    views = [v["id"] for v in page.select("#readers-random-views .view")]
    assert views == ["readers-random-rrrc", "readers-random-frrc"]
    assert "radiologists in general" in page.select_one("#readers-random-rrrc").get_text()
    assert page.select_one("#readers-random-chart svg") is not None
    assert "has no score for an original" in page.select_one("#judge-not-a-reader").get_text()
    assert page.select_one("#few-readers") is not None
    figures = admin.get(f"/studies/{sid}/real-or-edited.json").json()["readers_random"]
    assert figures["cases"] == 12 and figures["left_out"] == 0
    for analysis in ("rrrc", "frrc"):
        low, high = figures[analysis]["ci"]
        assert low < figures[analysis]["auc"] < high
    assert figures["rrrc"]["auc"] == figures["frrc"]["auc"]


@pytest.mark.parametrize("readers", [3, 4])
def test_readers_who_all_read_alike_get_the_normal_interval_said_so(
        demo_engine: Engine, settings: Settings, readers: int) -> None:
    """The same area for every reader: Hillis's df unbounded, as the Iowa software has it,
    the page saying what that interval cannot allow for and, with four readers too, why
    there is no size table; the JSON still strict."""
    study = make_real_or_edited(demo_engine, readers=readers, per_modality=4)
    sid = study.study.id
    answer_apart(demo_engine, settings, study, alike=True)
    admin = as_user(demo_engine, settings, "roe-admin")
    page = BeautifulSoup(admin.get(f"/studies/{sid}/real-or-edited").text, "html.parser")
    random_view = page.select_one("#readers-random-rrrc")
    assert random_view is not None and "df unbounded" in random_view.get_text()
    assert "exactly the same area" in random_view.get_text()
    assert page.select_one("#sample-size-table") is None
    assert "cannot be predicted" in page.select_one("#few-readers").get_text()
    answer = admin.get(f"/studies/{sid}/real-or-edited.json")
    assert answer.status_code == 200
    assert answer.json()["readers_random"]["rrrc"]["df"] is None


def test_one_reader_has_no_random_reader_interval_and_says_why(
        demo_engine: Engine, settings: Settings, reader: TestClient, study: StudySetup) -> None:
    sid = study.study.id
    for assignment, item in _reads(demo_engine, study, "roe-reader-0"):
        form = {"call": "edited" if item.shows == "edit" else "real", "confidence": "3",
                "submission_id": f"x-{assignment.uid}", "time_on_case_ms": "900"}
        if item.shows == "edit":
            form |= {"click_x": "0.4", "click_y": "0.4"}
        reader.post(f"/read/{sid}/{assignment.sequence}", data=form, follow_redirects=False)
    admin = as_user(demo_engine, settings, "roe-admin")
    page = BeautifulSoup(admin.get(f"/studies/{sid}/real-or-edited").text, "html.parser")
    assert "two readers or more" in page.select_one("#readers-random-none").get_text()
