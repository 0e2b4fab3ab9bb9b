"""Steps that several browser tests take: logging in, answering a case with keys."""

from playwright.sync_api import Page

from tests.accounts import PASSWORD

# The page's images drawn and its scripts run: a prefetched image is complete before the
# deferred scripts that listen for keys have run, and a key pressed then is lost (under a
# loaded machine the browser tests pressed keys into pages not yet listening).
IMAGES_SHOWN = ("() => document.readyState === 'complete'"
                " && Array.from(document.images).every(i => i.complete && i.naturalWidth > 0)")


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
