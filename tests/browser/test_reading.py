"""A reader annotates three cases with the keyboard alone, reloads mid-case, and the admin
sees their progress."""

import re

import pytest
from playwright.sync_api import Browser, expect
from sqlalchemy import select
from sqlalchemy.engine import Engine
from sqlmodel import Session

from app.study_models import Answer
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
