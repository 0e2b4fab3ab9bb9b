"""The new-study form's live strata and planner, and the agreement page and report of a read
validation study, in Chromium at the two screen sizes the reading room uses."""

import re

import pytest
from playwright.sync_api import Browser, expect
from sqlalchemy.engine import Engine
from sqlmodel import Session

from app.agreement.reads import load
from app.studies.models import Design
from tests.agreement.test_report import answer_all
from tests.browser.conftest import ARTIFACTS
from tests.browser.helpers import log_in
from tests.studies.conftest import make_study

pytestmark = pytest.mark.browser
SIZES = ((1366, 768), (1024, 768))


def test_the_form_updates_its_strata_and_plan_in_place(browser: Browser, live_server: str) -> None:
    page = browser.new_context(viewport={"width": 1366, "height": 768}).new_page()
    log_in(page, live_server, "browser-admin", "/studies/new?modality=chest_xray")
    page.fill('input[name="name"]', "typed before switching")
    expect(page.locator("#strata-table tbody tr")).to_have_count(4)
    page.check('input[name="design"][value="accepted"]')
    expect(page.locator("#strata-table tbody tr")).to_have_count(2)  # add, remove
    expect(page.locator('input[name="name"]')).to_have_value("typed before switching")
    page.check('#strata input[name="facets"][value="verdict"]')
    expect(page.locator("#strata-problem")).to_contain_text("only a validation study")
    page.check('input[name="design"][value="validation"]')
    expect(page.locator("#strata-table tbody tr")).to_have_count(4)
    page.fill('input[name="plan_half_width"]', "0")
    page.locator('input[name="plan_half_width"]').dispatch_event("change")
    expect(page.locator("#plan-error")).to_contain_text("half-width")
    page.fill('input[name="plan_half_width"]', "0.1")
    page.locator('input[name="plan_half_width"]').dispatch_event("change")
    expect(page.locator("#plan-cases")).to_be_visible()
    ARTIFACTS.mkdir(exist_ok=True)
    for width, height in SIZES:
        page.set_viewport_size({"width": width, "height": height})
        page.screenshot(path=str(ARTIFACTS / f"study-form-{width}.png"), full_page=True)
        # The signed-in name was cut to "browser-ad…" at 1024: it is whole at every width,
        # on one line with the sections.
        name = page.locator("#account .name")
        expect(name).to_have_text("browser-admin")
        assert name.evaluate("e => e.scrollWidth <= e.clientWidth")
        top = page.locator(".topbar").bounding_box()
        assert top is not None and top["height"] < 60


def test_agreement_page_and_report_of_a_validation_study(browser: Browser, demo_engine: Engine,
                                                         live_server: str) -> None:
    setup = make_study(demo_engine, readers=3, design=Design.validation)
    with Session(demo_engine) as session:
        judge = [c.judge["overall"] for c in load(session, setup.study).cases]

    def reads(differ: set[int]) -> list[str]:
        return ["yes" if (j != (i % 5 in differ)) else "no" for i, j in enumerate(judge)]
    answer_all(demo_engine, setup, {"reader-0": reads({1}), "reader-1": reads({1, 2}),
                                    "reader-2": reads({3})}, skip={"reader-2": {0, 4}})
    page = browser.new_context(viewport={"width": 1366, "height": 768}).new_page()
    log_in(page, live_server, "browser-admin", f"/studies/{setup.study.id}/agreement")
    expect(page.locator("#ceiling")).to_be_visible()
    expect(page.locator('#ceiling tr[data-question="overall"]')).to_have_class("primary")
    expect(page.locator("#chart-agreement svg")).to_be_visible()
    for width, height in SIZES:
        page.set_viewport_size({"width": width, "height": height})
        page.screenshot(path=str(ARTIFACTS / f"agreement-{width}.png"), full_page=False)
    page.goto(f"{live_server}/studies/{setup.study.id}/report.html")
    expect(page.locator("#flow-diagram")).to_be_visible()
    page.set_viewport_size({"width": 1366, "height": 768})
    page.screenshot(path=str(ARTIFACTS / "report-1366.png"), full_page=True)


def test_a_study_without_readers_comes_back_with_its_name_and_the_reason_beside_the_readers(
        browser: Browser, demo_engine: Engine, live_server: str) -> None:
    make_study(demo_engine)  # reader accounts to choose from
    page = browser.new_context(viewport={"width": 1366, "height": 768}).new_page()
    log_in(page, live_server, "browser-admin", "/studies/new?modality=chest_xray")
    page.fill('input[name="name"]', "pilot without readers")
    page.fill('textarea[name="instructions"]', "Read in the dark room.")
    page.uncheck('input[name="viewer_tools"][value="flicker"]')
    page.click('#study-form button[type="submit"]')
    expect(page.locator("#study-error")).to_contain_text("tick at least one reader")
    beside = page.locator("#field-readers #error-readers")
    expect(beside).to_have_text("tick at least one reader")
    beside.scroll_into_view_if_needed()
    expect(beside).to_be_in_viewport()
    expect(page.locator('input[name="name"]')).to_have_value("pilot without readers")
    expect(page.locator('textarea[name="instructions"]')).to_have_value("Read in the dark room.")
    expect(page.locator('input[name="viewer_tools"][value="flicker"]')).not_to_be_checked()
    expect(page.locator('input[name="viewer_tools"][value="swipe"]')).to_be_checked()
    page.click('#study-error a[href="#field-readers"]')  # the summary leads to the field
    expect(page.locator("#field-readers")).to_be_in_viewport()
    ARTIFACTS.mkdir(exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / "study-form-refused.png"))
    # The refused form was left at /studies?..., so a reload posted it again: the address is
    # the form's own, and a reload opens it afresh.
    expect(page).to_have_url(re.compile(r"/studies/new\?design=validation&modality=chest_xray#field-readers$"))
    posts: list[str] = []
    page.on("request", lambda r: posts.append(r.url) if r.method == "POST" else None)
    page.reload()
    expect(page.locator("#study-form")).to_be_visible()
    expect(page.locator("#study-error")).to_have_count(0)
    assert posts == []


def test_the_form_says_how_many_known_answer_cases_each_reader_gets(
        browser: Browser, demo_engine: Engine, live_server: str) -> None:
    make_study(demo_engine, readers=2)  # reader accounts to choose from
    page = browser.new_context(viewport={"width": 1366, "height": 768}).new_page()
    log_in(page, live_server, "browser-admin", "/studies/new?modality=chest_xray")
    for box in page.locator('input[name="readers"]').all()[:2]:
        box.check()
    for box in page.locator("#strata-table input[type=number]").all():
        box.fill("25")  # the paper's 100 cases: too few known-answer cases to expect a pause
    page.fill('input[name="known_share"]', "10")
    page.locator('input[name="known_share"]').dispatch_event("change")
    line = page.locator("#known-outlook-line")
    expect(line).to_contain_text("known-answer case")
    expect(line).to_contain_text("Too few to expect a pause")
    page.fill('input[name="known_share"]', "40")
    page.fill('input[name="total"]', "")
    for box in page.locator("#strata-table input[type=number]").all():
        box.fill("40")
    page.locator('input[name="known_share"]').dispatch_event("change")
    expect(line).to_contain_text("halfway through their list")
    # The box, not the line: a later change's answer replaces the line inside it.
    page.locator("#known-outlook").scroll_into_view_if_needed()
    for width, height in SIZES:
        page.set_viewport_size({"width": width, "height": height})
        page.screenshot(path=str(ARTIFACTS / f"study-form-known-{width}.png"))
