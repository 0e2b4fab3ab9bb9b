"""An admin ticks two cases, regenerates them with the offline backend, watches the job
finish, and finds the new run beside the old one on the case page."""

import re
from pathlib import Path

import pytest
from playwright.sync_api import Page, expect

from app.settings import Settings
from tests.browser.conftest import ARTIFACTS
from tests.config import server_settings

pytestmark = pytest.mark.browser


@pytest.fixture
def settings(tmp_path: Path) -> Settings:
    """This server runs jobs itself, as `make demo` does."""
    return server_settings(tmp_path / "var", page_size=10, worker=True)


def test_regenerate_two_cases_and_watch(page: Page, live_server: str) -> None:
    page.goto(f"{live_server}/cases?modality=fundus&outcome=success")
    rows = page.locator("tr.case-row")
    first_id = rows.nth(0).get_attribute("data-case-id")
    for n in (0, 1):
        rows.nth(n).locator('input[name="task"]').check()
    page.click("#regenerate-selected")
    expect(page.locator("#job-count")).to_have_text("2")
    page.fill("#rounds", "3")
    page.once("dialog", lambda dialog: dialog.accept())
    page.click("#start-job")
    expect(page).to_have_url(re.compile(r"/jobs/\d+$"))
    expect(page.locator("#job-status")).to_have_text("done", timeout=30_000)
    expect(page.locator("#job-done")).to_have_text("2")
    expect(page.locator("#cancel-form")).to_have_count(0)  # once stayed after the end
    ARTIFACTS.mkdir(exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / "job-done.png"), full_page=True)
    page.goto(f"{live_server}/cases/{first_id}")
    runs = page.locator(".run-history li")
    expect(runs).to_have_count(2)
    expect(runs.nth(1)).to_contain_text("regeneration")
    page.click(".run-history li:nth-child(2) a")
    expect(page.locator('[data-backend="offline"]').first).to_be_visible()
    page.wait_for_function("() => Array.from(document.images).every(i => i.complete && i.naturalWidth > 0)")


def test_regenerate_with_gemini_against_the_fake_server(page: Page, live_server: str,
                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    """The same, through the gemini backend and the real client, against the local fake."""
    from tests.fake_gemini import FakeGemini

    fake = FakeGemini()
    with fake.serve() as url:
        monkeypatch.setenv("GEMINI_API_KEY", "browser-test-key")
        monkeypatch.setenv("GOOGLE_GEMINI_BASE_URL", url)
        page.goto(f"{live_server}/cases?modality=chest_xray&outcome=success")
        first_id = page.locator("tr.case-row").nth(0).get_attribute("data-case-id")
        page.locator('tr.case-row input[name="task"]').nth(0).check()
        page.click("#regenerate-selected")
        page.select_option('select[name="backend"]', "gemini")
        page.once("dialog", lambda dialog: dialog.accept())
        page.click("#start-job")
        expect(page.locator("#job-status")).to_have_text("done", timeout=30_000)
        expect(page.locator("#job-progress .badge.pass").last).to_contain_text("1 succeeded")
    assert {model for model, *_ in fake.calls} == {"gemini-2.5-pro", "gemini-2.5-flash-image"}
    page.goto(f"{live_server}/cases/{first_id}")
    expect(page.locator(".run-history li")).to_have_count(2)
    expect(page.locator(".pane-accepted")).to_contain_text("gemini-2.5-pro")
