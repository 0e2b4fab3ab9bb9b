"""A real-or-edited study end to end in Chromium: a reader answers every case with the keyboard
alone (a submit with an answer missing is held and named, p goes back to an answer, u undoes
it), marks a change with a click, and the admin's results give an ROC area with its interval."""

import re

import pytest
from playwright.sync_api import Browser, Page, expect
from sqlalchemy.engine import Engine
from sqlmodel import Session, col, select

from app.studies.models import Assignment, RealOrEditedAnswer, StudyItem
from tests.browser.conftest import ARTIFACTS
from tests.browser.helpers import IMAGES_SHOWN, log_in
from tests.studies.conftest import make_real_or_edited

pytestmark = pytest.mark.browser


def _truth(engine: Engine) -> dict[str, bool]:
    """Read uid -> the case shows an edit (what the test knows and the page must not say)."""
    with Session(engine) as s:
        return {a.uid: item.shows == "edit" for a, item in s.execute(
            select(Assignment, StudyItem).join(StudyItem, col(StudyItem.id) == Assignment.item_id))}


def _uid(page: Page) -> str:
    src = page.locator("#shown-image").get_attribute("src") or ""
    return src.rsplit("/", 1)[-1]


def test_a_reader_answers_by_keyboard_and_the_admin_gets_an_area(
        browser: Browser, demo_engine: Engine, live_server: str) -> None:
    setup = make_real_or_edited(demo_engine, readers=1, per_modality=3)
    sid, truth = setup.study.id, _truth(demo_engine)
    page = browser.new_context(viewport={"width": 1366, "height": 768}).new_page()
    log_in(page, live_server, "roe-reader-0", f"/read/{sid}")
    expect(page).to_have_url(re.compile(rf"/read/{sid}/1$"))
    page.wait_for_function(IMAGES_SHOWN)

    page.keyboard.press("e")  # no confidence yet: held, named, focused
    page.keyboard.press("Enter")
    expect(page.locator("#missing-summary")).to_have_text("Not saved: still to answer Confidence.")
    expect(page).to_have_url(re.compile(rf"/read/{sid}/1$"))
    page.keyboard.press("Escape")

    for case in range(1, 10):
        expect(page.locator("#reader-progress")).to_have_text(f"{case - 1} of 9 done")
        page.wait_for_function(IMAGES_SHOWN)
        edited = truth[_uid(page)]
        wrong = case == 4  # one confident slip
        page.keyboard.press("r" if edited == wrong else "e")
        if case == 1:  # a plain digit is no confidence here, as on the rubric's screen
            page.keyboard.press("4")
            expect(page.locator("input[name=confidence]:checked")).to_have_count(0)
        page.keyboard.press("Shift+Digit5" if wrong or case % 2 else "Shift+Digit4")
        chosen = page.locator("input[name=call]:checked")
        expect(chosen).to_have_value("real" if edited == wrong else "edited")
        page.keyboard.press("Enter")
        target = rf"/read/{sid}/{case + 1}$" if case < 9 else rf"/read\?done={sid}$"
        expect(page).to_have_url(re.compile(target))

    page.goto(f"{live_server}/read/{sid}/9")
    page.keyboard.press("p")  # back to case 8: its answer is shown
    expect(page).to_have_url(re.compile(rf"/read/{sid}/8$"))
    expect(page.locator("#answered")).to_be_visible()
    page.keyboard.press("u")  # undo the last submission (case 9), which opens it again
    expect(page).to_have_url(re.compile(rf"/read/{sid}/9$"))
    expect(page.locator("#answered")).to_have_count(0)
    page.wait_for_function(IMAGES_SHOWN)
    edited = truth[_uid(page)]
    box = page.locator("#shown-image").bounding_box()
    assert box is not None
    page.mouse.click(box["x"] + box["width"] * 0.25, box["y"] + box["height"] * 0.75)
    expect(page.locator("[data-viewer-status]")).to_contain_text("change marked at 25 %, 75 %")
    page.keyboard.press("e" if edited else "r")
    page.keyboard.press("Shift+Digit3")
    ARTIFACTS.mkdir(exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / "real-or-edited-1366.png"))
    page.set_viewport_size({"width": 1024, "height": 768})
    assert page.evaluate("document.documentElement.scrollHeight <= window.innerHeight + 1")
    page.screenshot(path=str(ARTIFACTS / "real-or-edited-1024.png"))
    page.keyboard.press("Enter")
    expect(page).to_have_url(re.compile(rf"/read\?done={sid}$"))

    with Session(demo_engine) as s:
        newest = s.scalars(select(RealOrEditedAnswer).order_by(col(RealOrEditedAnswer.id).desc())).first()
    assert newest is not None and newest.confidence == 3 and not newest.retracted
    assert (newest.click_x is not None) == edited  # a click is kept with "edited" only
    if edited:
        assert (newest.click_x, newest.click_y) == (pytest.approx(0.25, abs=0.02),
                                                    pytest.approx(0.75, abs=0.02))

    admin = browser.new_context(viewport={"width": 1366, "height": 768}).new_page()
    log_in(admin, live_server, "roe-admin", f"/studies/{sid}")
    admin.locator("#real-or-edited-link").click()
    expect(admin).to_have_url(re.compile(rf"/studies/{sid}/real-or-edited$"))
    area = admin.locator('#real-or-edited-table tr[data-reader="roe-reader-0"] td.area')
    expect(area).to_have_text(re.compile(r"^0\.[5-9]\d\d [01]\.\d\d to [01]\.\d\d"))
    admin.screenshot(path=str(ARTIFACTS / "real-or-edited-results.png"), full_page=True)
