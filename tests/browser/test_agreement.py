"""The adjudicator settles a tie with the keyboard; the admin sees it in the agreement page."""

import re

import pytest
from playwright.sync_api import Browser, expect
from sqlalchemy.engine import Engine
from sqlmodel import Session

from app.models import Role
from app.studies.adjudication import assign_adjudicator
from tests.accounts import add_user
from tests.agreement.test_report import answer_all
from tests.browser.conftest import ARTIFACTS
from tests.browser.helpers import IMAGES_SHOWN, log_in
from tests.studies.conftest import make_study

pytestmark = pytest.mark.browser


def test_adjudicate_with_keys_then_read_the_agreement(browser: Browser, demo_engine: Engine,
                                                      live_server: str) -> None:
    setup = make_study(demo_engine)
    answer_all(demo_engine, setup, {"reader-0": ["yes"] * 8, "reader-1": ["yes"] * 5 + ["no"] * 3})
    third = add_user(demo_engine, "third-reader", Role.reader)
    with Session(demo_engine) as session:
        assign_adjudicator(session, setup.study, third)
    sid = setup.study.id

    tab = browser.new_context(viewport={"width": 1400, "height": 1000}).new_page()
    log_in(tab, live_server, "third-reader", "/read")
    tab.click(f'#adjudicate-studies a[href="/adjudicate/{sid}"]')
    expect(tab.locator("tr.to-settle")).to_have_count(3)
    tab.locator("#to-adjudicate a").first.click()
    tab.wait_for_function(IMAGES_SHOWN)
    expect(tab.locator(".earlier-read")).to_have_count(2)
    for key in ("y", "y", "y", "y", "r"):
        tab.keyboard.press(key)
    expect(tab.locator('input[name="compliance"][value="yes"]')).to_be_checked()
    expect(tab.locator('input[name="overall"][value="reject"]')).to_be_checked()
    ARTIFACTS.mkdir(exist_ok=True)
    for width in (1366, 1024):  # the rubric's fields as the keys left them
        tab.set_viewport_size({"width": width, "height": 768})
        tab.screenshot(path=str(ARTIFACTS / f"adjudication-{width}.png"), full_page=True)
    tab.keyboard.press("Enter")
    expect(tab).to_have_url(re.compile(rf"/adjudicate/{sid}$"))
    expect(tab.locator('tr.to-settle[data-decided="true"]')).to_have_count(1)

    admin = browser.new_context(viewport={"width": 1400, "height": 1000}).new_page()
    log_in(admin, live_server, "study-admin", f"/studies/{sid}/agreement")
    row = admin.locator('#decisions tr[data-question="compliance"] td')
    expect(row.nth(3)).to_have_text("1")  # adjudicated (after unanimous, single vote, majority)
    expect(row.nth(4)).to_have_text("2")  # ties still open
    expect(admin.locator("#chart-agreement svg")).to_be_visible()
    admin.check('#slice-form input[name="direction"][value="remove"]')
    admin.click('#slice-form button[type="submit"]')
    expect(admin).to_have_url(re.compile(r"direction=remove"))
    expect(admin.locator("#n-cases")).to_have_text("4")
    ARTIFACTS.mkdir(exist_ok=True)
    admin.screenshot(path=str(ARTIFACTS / "agreement.png"), full_page=True)
    # The paper's headline figures, too strict and too lenient, are seen without sideways
    # scroll (the one wide table was 2,288 px in a 1,330 px box at 1366), and every ⚠ is
    # said in words.
    for width in (1366, 1024):
        admin.set_viewport_size({"width": width, "height": 768})
        for table in ("#judge-headline", "#judge-conditional", "#judge-chance"):
            fits = admin.locator(table).evaluate(
                "t => t.scrollWidth <= t.closest('.table-scroll').clientWidth + 1")
            assert fits, (table, width)
        strict = admin.locator('#judge-headline tr[data-question="overall"] td.too-strict')
        box = strict.bounding_box()
        assert box is not None and box["x"] + box["width"] <= width
        admin.screenshot(path=str(ARTIFACTS / f"agreement-{width}.png"), full_page=True)
    marks = admin.locator("#judge-vs-reference abbr.warn").count()
    if marks:  # each warning in words, one line per reason (opened when there are many)
        if admin.locator("#figure-warnings[open]").count() == 0:
            admin.click("#figure-warnings summary")
        expect(admin.locator("#figure-warnings li").first).to_be_visible()
