"""Readers random in Chromium: the agreement page's first section loads after the page, says
what each view generalises to, plots the readers and the judge on one axis, and re-tests at a
new epsilon without leaving the page (a bad one is named and kept); the real-or-edited results
lead with radiologists in general. Screenshots at 1024, 1280, 1366 and 1920 wide."""

import pytest
from playwright.sync_api import Browser, Page, expect
from sqlalchemy.engine import Engine

from app.settings import Settings
from tests.agreement.test_report import answer_all
from tests.browser.conftest import ARTIFACTS
from tests.browser.helpers import log_in
from tests.studies.conftest import make_real_or_edited, make_study
from tests.web.routes.test_real_or_edited import answer_apart

pytestmark = pytest.mark.browser
WIDTHS = (1024, 1280, 1366, 1920)


def _fits(page: Page, selector: str) -> bool:
    return bool(page.locator(selector).evaluate(
        "s => s.scrollWidth <= document.documentElement.clientWidth"))


def test_the_judge_as_one_more_reader_on_the_agreement_page(browser: Browser, demo_engine: Engine,
                                                           live_server: str) -> None:
    from app.studies.models import Design

    setup = make_study(demo_engine, design=Design.validation, readers=3)
    truth = ["yes", "no", "yes", "yes", "no", "no", "yes", "no"] * 2

    def slips(at: set[int]) -> list[str]:  # the truth, wrong on the cases in ``at``
        return [("no" if t == "yes" else "yes") if i in at else t for i, t in enumerate(truth)]

    answer_all(demo_engine, setup, {"reader-0": slips({1, 6}), "reader-1": slips({3, 10, 14}),
                                    "reader-2": slips({5})})
    sid = setup.study.id
    page = browser.new_context(viewport={"width": 1366, "height": 900}).new_page()
    log_in(page, live_server, "study-admin", f"/studies/{sid}/agreement")
    section = page.locator("#random-readers")
    expect(section.locator("#random-readers-rrrc")).to_contain_text("radiologists in general")
    expect(section.locator("#random-readers-frrc")).to_contain_text("these 3 readers only")
    expect(section.locator("#random-readers-chart svg")).to_be_visible()
    expect(section.locator("#few-readers")).to_be_visible()
    first = page.evaluate("[...document.querySelectorAll('main section[id]')].map(s => s.id)")
    assert first.index("random-readers") < first.index("human-ceiling")

    def test_at(typed: str) -> None:  # the fragment comes back in place, the page stays
        page.fill("#alt-epsilon", typed)
        with page.expect_response(lambda r: "/agreement/random-readers?epsilon=" in r.url):
            page.click("#alt-test-form button[type=submit]")
        expect(page.locator("#alt-epsilon")).to_have_value(typed)

    test_at("0.2")
    expect(page.locator("#alt-test-conclusion")).to_be_visible()
    test_at("two")
    expect(page.locator("#random-readers-error")).to_contain_text("is not a number")
    test_at("0.1")
    expect(page.locator("#random-readers-error")).to_have_count(0)
    expect(page.locator("#random-readers-chart svg")).to_be_visible()
    assert page.url.endswith(f"/studies/{sid}/agreement")

    ARTIFACTS.mkdir(exist_ok=True)
    for width in WIDTHS:
        page.set_viewport_size({"width": width, "height": 900})
        assert _fits(page, "#random-readers"), width
        section.screenshot(path=str(ARTIFACTS / f"random-readers-{width}.png"))


def test_real_or_edited_leads_with_radiologists_in_general(
        browser: Browser, demo_engine: Engine, live_server: str, settings: Settings) -> None:
    study = make_real_or_edited(demo_engine, readers=3, per_modality=4)
    sid = study.study.id
    answer_apart(demo_engine, settings, study)
    page = browser.new_context(viewport={"width": 1366, "height": 900}).new_page()
    log_in(page, live_server, "roe-admin", f"/studies/{sid}/real-or-edited")
    expect(page.locator("#readers-random-rrrc")).to_contain_text("radiologists in general")
    expect(page.locator("#readers-random-chart svg")).to_be_visible()
    expect(page.locator("#judge-not-a-reader")).to_contain_text("no score for an original")
    for width in WIDTHS:
        page.set_viewport_size({"width": width, "height": 900})
        assert _fits(page, "#readers-random"), width
        shot = ARTIFACTS / f"real-or-edited-random-{width}.png"
        page.locator("#readers-random").screenshot(path=str(shot))
