"""A reader annotates three cases with the keyboard alone, reloads mid-case, and the admin
sees their progress."""

import json
import re
from collections.abc import Callable

import pytest
from playwright.sync_api import Browser, Page, Route, expect
from sqlalchemy import select
from sqlalchemy.engine import Engine
from sqlmodel import Session

from app.studies.models import Answer
from tests.browser.conftest import ARTIFACTS
from tests.browser.helpers import IMAGES_SHOWN, answer_with_keys, log_in
from tests.studies.conftest import make_study

pytestmark = pytest.mark.browser


def test_keyboard_reading_with_reload_and_admin_progress(browser: Browser, demo_engine: Engine,
                                                          live_server: str) -> None:
    setup = make_study(demo_engine)
    sid = setup.study.id
    context = browser.new_context(viewport={"width": 1400, "height": 1000})
    page = context.new_page()
    log_in(page, live_server, "reader-0", f"/read/{sid}")
    expect(page).to_have_url(re.compile(rf"/read/{sid}/1$"))

    for case in (1, 2, 3):
        expect(page.locator("#reader-progress")).to_have_text(f"{case - 1} of 8 done")
        page.wait_for_function(IMAGES_SHOWN)
        answer_with_keys(page)
        if case == 2:
            expect(page.locator("#draft-status")).to_have_text("draft saved")
            page.reload()
            page.wait_for_load_state("networkidle")
            expect(page.locator('input[name="structure"][value="no"]')).to_be_checked()
            expect(page.locator('input[name="fidelity"][value="cannot_assess"]')).to_be_checked()
            expect(page.locator('input[name="overall"][value="accept"]')).to_be_checked()
            expect(page.locator('input[name="confidence"][value="4"]')).to_be_checked()
        page.keyboard.press("Enter")
        expect(page).to_have_url(re.compile(rf"/read/{sid}/{case + 1}$"))
    ARTIFACTS.mkdir(exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / "reading-screen.png"))
    page.locator("#account button").click()
    expect(page).to_have_url(re.compile(r"/login$"))
    context.close()

    admin = browser.new_context().new_page()
    log_in(admin, live_server, "study-admin", f"/studies/{sid}")
    row = admin.locator('.reader-progress[data-reader="reader-0"]')
    expect(row.locator(".done")).to_have_text("3")
    expect(row).to_contain_text("8")
    with Session(demo_engine) as session:
        answers = session.scalars(select(Answer)).all()
    assert len(answers) == 3 and all(a.time_on_case_ms and a.time_on_case_ms > 0 for a in answers)


def test_the_reader_draws_a_region_flickers_and_keeps_the_answer_keys(
        browser: Browser, demo_engine: Engine, live_server: str) -> None:
    sid, page = _first_case(browser, demo_engine, live_server)
    viewer = page.locator("#viewer")

    page.keyboard.press("1")  # here 1-4 mark a question (not window presets); y answers it
    expect(page.locator('fieldset[data-name="compliance"]')).to_have_class(re.compile(r"\bcurrent\b"))
    expect(page.locator('input[name="compliance"]:checked')).to_have_count(0)
    page.keyboard.press("y")
    expect(page.locator('input[name="compliance"][value="yes"]')).to_be_checked()
    # one deliberate key each, and the mark moves on to the next question
    expect(page.locator('fieldset[data-name="structure"]')).to_have_class(re.compile(r"\bcurrent\b"))
    page.keyboard.press("n")
    expect(page.locator('input[name="structure"][value="no"]')).to_be_checked()
    page.keyboard.press("e")
    expect(page.locator('input[name="realism"][value="cannot_assess"]')).to_be_checked()
    page.keyboard.press("2")
    page.keyboard.press("y")  # back to structure: changed with one key, nothing else moved
    expect(page.locator('input[name="structure"][value="yes"]')).to_be_checked()
    expect(page.locator('input[name="realism"][value="cannot_assess"]')).to_be_checked()
    expect(viewer).not_to_have_class(re.compile(r"\blevels\b"))
    page.keyboard.press("w")  # presets cycle on w instead
    expect(viewer).to_have_class(re.compile(r"\blevels\b"))
    expect(page.locator("[data-preset]")).to_have_value("1")

    page.keyboard.press(" ")
    expect(page.locator("#img-edit")).to_be_hidden()
    expect(viewer.locator(".viewport").nth(1).locator(".layer-alt")).to_be_visible()
    page.keyboard.press(" ")
    expect(page.locator("#img-edit")).to_be_visible()

    page.keyboard.press("o")  # rectangle tool
    stage = page.locator(".viewport").nth(1).locator(".stage").bounding_box()
    assert stage is not None
    # The draft that holds the region is the one waited for: an earlier save still in flight
    # can answer after the region is drawn, and its "draft saved" is not this one's.
    with page.expect_response(lambda r: r.request.method == "PUT"
                              and '"roi":"{' in (r.request.post_data or "")):
        page.mouse.move(stage["x"] + stage["width"] * 0.25, stage["y"] + stage["height"] * 0.25)
        page.mouse.down()
        page.mouse.move(stage["x"] + stage["width"] * 0.5, stage["y"] + stage["height"] * 0.75, steps=4)
        page.mouse.up()
    value = page.locator("#roi-input").input_value()
    corners = r'\{"kind":"rect","points":\[\[0\.2\d*,0\.2\d*\],\[0\.[45]\d*,0\.7\d*\]\]\}'
    assert re.fullmatch(corners, value), value
    expect(page.locator("#draft-status")).to_have_text("draft saved")
    for svg in page.locator("svg.roi-layer polygon").all():  # shown on both panes
        assert len(svg.get_attribute("points").split()) == 4  # type: ignore[union-attr]
    ARTIFACTS.mkdir(exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / "reading-region.png"))

    page.reload()
    page.wait_for_function(IMAGES_SHOWN)
    assert page.locator("#roi-input").input_value() == value
    assert page.locator("svg.roi-layer polygon").first.get_attribute("points")
    answer_with_keys(page)
    page.keyboard.press("Enter")
    expect(page).to_have_url(re.compile(rf"/read/{sid}/2$"))
    with Session(demo_engine) as session:
        [answer] = session.scalars(select(Answer)).all()
    assert answer.roi == value


def test_draft_saves_go_one_at_a_time_and_only_the_latest_says_saved(
        browser: Browser, demo_engine: Engine, live_server: str) -> None:
    _, page = _first_case(browser, demo_engine, live_server)
    held: list[Route] = []  # the draft saves, answered only when the test lets them through
    page.route("**/draft", lambda route: held.append(route))
    status = page.locator("#draft-status")

    page.keyboard.press("y")  # compliance: yes
    _wait_until(page, lambda: len(held) == 1)
    page.keyboard.press("n")  # structure: no, while the first save is unanswered
    page.wait_for_timeout(1_200)  # three times the autosave's pause
    assert len(held) == 1  # the second save waits for the first
    expect(status).to_have_text("unsaved changes")
    held[0].continue_()
    _wait_until(page, lambda: len(held) == 2)  # sent once the first answered
    # The first save answered, but the form has changed since: not "draft saved".
    expect(status).to_have_text("unsaved changes")
    second = json.loads(held[1].request.post_data or "{}")
    first = json.loads(held[0].request.post_data or "{}")
    assert second["structure"] == "no" and second["edition"] > first["edition"]
    held[1].continue_()
    expect(status).to_have_text("draft saved")
    page.unroute("**/draft")
    page.reload()
    page.wait_for_function(IMAGES_SHOWN)
    expect(page.locator('input[name="compliance"][value="yes"]')).to_be_checked()
    expect(page.locator('input[name="structure"][value="no"]')).to_be_checked()


def _first_case(browser: Browser, engine: Engine, live_server: str) -> tuple[int, Page]:
    """A reader at the first case of a new study, its images shown and its keys listening."""
    setup = make_study(engine)
    page = browser.new_context(viewport={"width": 1400, "height": 1000}).new_page()
    log_in(page, live_server, "reader-0", f"/read/{setup.study.id}")
    page.wait_for_function(IMAGES_SHOWN)
    return setup.study.id or 0, page


def _wait_until(page: Page, done: Callable[[], bool]) -> None:
    # Route handlers run while Playwright is called: short waits let them in.
    for _ in range(100):
        if done():
            return
        page.wait_for_timeout(50)
    raise AssertionError("the draft save was not sent")
