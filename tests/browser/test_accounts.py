"""Accounts in Chromium: an admin adds a reader, resets the password, and deactivates the
account, which logs the reader out at once."""

import re

import pytest
from playwright.sync_api import Browser, Dialog, Page, expect

from tests.browser.conftest import ARTIFACTS

pytestmark = pytest.mark.browser


def test_create_reset_and_deactivate_an_account(page: Page, browser: Browser, live_server: str) -> None:
    page.set_viewport_size({"width": 1366, "height": 768})
    page.goto(f"{live_server}/cases")
    page.click("nav >> text=Accounts")
    expect(page).to_have_url(f"{live_server}/accounts")
    page.fill("#account-form input[name=name]", "dr-new")
    page.select_option("#account-form select[name=role]", "reader")
    page.click("#account-form button[type=submit]")
    first = page.locator("#new-password").inner_text()
    assert len(first) >= 12
    # A page answering a POST: a reload opens the page afresh, never posts the form again.
    posts: list[str] = []
    page.on("request", lambda r: posts.append(r.url) if r.method == "POST" else None)
    page.reload()
    expect(page.locator("#account-form")).to_be_visible()
    expect(page.locator("#new-password")).to_have_count(0)
    assert posts == []
    row = page.locator('tr.account-row[data-name="dr-new"]')
    row.locator("input[name=qualification]").fill("radiologist, neuro")
    row.locator("input[name=experience_years]").fill("7")
    row.locator("select[name=board_certified]").select_option("yes")
    row.locator(".qualification-form button").click()
    row = page.locator('tr.account-row[data-name="dr-new"]')
    expect(row.locator("input[name=experience_years]")).to_have_value("7")

    reader = browser.new_context(viewport={"width": 1366, "height": 768}).new_page()
    reader.goto(f"{live_server}/read")
    reader.fill("#name", "dr-new")
    reader.fill("#password", first)
    reader.keyboard.press("Enter")
    expect(reader).to_have_url(f"{live_server}/read")

    page.once("dialog", lambda dialog: dialog.accept())
    row.locator("button.reset-password").click()
    second = page.locator("#new-password").inner_text()
    assert second != first
    ARTIFACTS.mkdir(exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / "accounts-page.png"), full_page=True)
    reader.reload()  # the reset ended the reader's session
    expect(reader).to_have_url(re.compile(r"/login"))
    reader.fill("#name", "dr-new")
    reader.fill("#password", second)
    reader.keyboard.press("Enter")
    expect(reader).to_have_url(f"{live_server}/read")

    asked: list[str] = []

    def accept(dialog: Dialog) -> None:
        asked.append(dialog.message)
        dialog.accept()

    page.once("dialog", accept)
    page.locator('tr.account-row[data-name="dr-new"] button.deactivate').click()
    expect(page.locator('tr.account-row[data-name="dr-new"] .account-state')).to_contain_text("deactivated")
    assert asked and "logged out at once" in asked[0]
    reader.reload()
    expect(reader).to_have_url(re.compile(r"/login"))

    page.click("#audit-link")
    expect(page.locator(".audit-line").first.locator(".audit-action")).to_have_text("deactivated")
    expect(page.locator(".audit-line")).to_have_count(4)  # created, described, reset, deactivated
