"""Steps that several browser tests take: logging in, answering a case with keys."""

from playwright.sync_api import Page

from tests.accounts import PASSWORD

IMAGES_SHOWN = "() => Array.from(document.images).every(i => i.complete && i.naturalWidth > 0)"


def log_in(page: Page, base: str, name: str, start: str) -> None:
    page.goto(f"{base}{start}")
    page.fill("#name", name)
    page.fill("#password", PASSWORD)
    page.keyboard.press("Enter")
    page.wait_for_load_state("networkidle")


def answer_with_keys(page: Page) -> None:
    # one key per answer: compliance yes, structure no, realism yes, fidelity cannot assess
    for key in ("y", "n", "y", "e", "a", "Shift+Digit4"):
        page.keyboard.press(key)
