"""A pairwise study in Chromium: made through its form, read keyboard-only by two readers at
1366x768 and 1024x768 with no page scroll (flicker swaps A and B, and says so where the eyes
are), then its figures opened and its pairs downloaded."""

import re
import zipfile
from pathlib import Path

import pytest
from playwright.sync_api import Browser, Page, expect
from sqlalchemy.engine import Engine

from app.models import Role
from tests.accounts import add_user
from tests.browser.conftest import ARTIFACTS
from tests.browser.helpers import IMAGES_SHOWN, log_in

pytestmark = pytest.mark.browser


def _side(page: Page, image: str) -> float:
    box = page.locator(image).bounding_box()
    assert box is not None
    return min(box["width"], box["height"])


def _images_are_large(page: Page, width: int) -> None:
    """A and B were 338 px at 1366x768, beside a 270-px original, in panes 40-60 % black.
    Now they take the width, the original is a key away, and each picture fills its frame."""
    if width == 1366:
        assert _side(page, "#img-a") >= 450 and _side(page, "#img-b") >= 450
    for image in ("#img-a", "#img-b"):
        picture = page.locator(image).bounding_box()
        frame = page.locator(image).locator("xpath=ancestor::div[contains(@class,'frame')]"
                                            ).bounding_box()
        assert picture is not None and frame is not None
        assert picture["width"] * picture["height"] >= 0.95 * frame["width"] * frame["height"]
    expect(page.locator("#img-original")).to_be_hidden()
    page.keyboard.press("o")  # the original in A's and B's place, labelled where the eyes are
    expect(page.locator(".pane-a .pane-label .original")).to_be_visible()
    expect(page.locator(".pane-a .layer-original")).to_be_visible()
    expect(page.locator("#img-a")).to_be_hidden()
    expect(page.locator("[data-viewer-status]")).to_contain_text("ORIGINAL")
    page.keyboard.press("o")
    expect(page.locator("#img-a")).to_be_visible()
    expect(page.locator(".pane-a .pane-label .original")).to_be_hidden()


def _read_all(page: Page, base: str, study_id: str, pairs: int, width: int) -> None:
    for n in range(1, pairs + 1):
        expect(page).to_have_url(re.compile(rf"/read/{study_id}/{n}$"))
        page.wait_for_function(IMAGES_SHOWN)
        if n == 1:
            # No page scroll at a reading room's common widths.
            assert page.evaluate("document.documentElement.scrollHeight <= window.innerHeight + 1")
            assert page.evaluate("document.documentElement.scrollWidth <= window.innerWidth + 1")
            page.keyboard.press("Enter")  # nothing chosen: held, named, focused
            expect(page.locator("#missing-summary")).to_have_text(
                "Not saved: still to answer which is better, confidence.")
            page.keyboard.press("Escape")
            page.keyboard.press("Space")  # flicker: B shown in A's place, and labelled so
            expect(page.locator("#viewer")).to_have_class(re.compile(r"\bflicker\b"))
            expect(page.locator(".pane .pane-label .other").nth(1)).to_be_visible()
            page.keyboard.press("Space")
            # "t" then a letter the image viewer also owns ("i" inverts) ticks the reason:
            # the two-key command comes before the viewer.
            page.keyboard.press("t")
            page.keyboard.press("i")
            expect(page.locator('#tags label[data-tag-key="i"] input')).to_be_checked()
            expect(page.locator("input[data-invert]")).not_to_be_checked()
            page.keyboard.press("t")
            page.keyboard.press("i")
            expect(page.locator('#tags label[data-tag-key="i"] input')).not_to_be_checked()
            _images_are_large(page, width)
            ARTIFACTS.mkdir(exist_ok=True)
            page.screenshot(path=str(ARTIFACTS / f"pairwise-reading-{width}.png"))
            if width == 1366:  # the other common widths, looked at and kept scroll-free
                for other, height in ((1280, 800), (1920, 1080)):
                    page.set_viewport_size({"width": other, "height": height})
                    assert page.evaluate(
                        "document.documentElement.scrollHeight <= window.innerHeight + 1")
                    page.screenshot(path=str(ARTIFACTS / f"pairwise-reading-{other}.png"))
                    if other == 1920:  # room for the original beside them, A and B still large
                        expect(page.locator("#img-original")).to_be_visible()
                        assert _side(page, "#img-a") >= 500 and _side(page, "#img-original") >= 400
                page.set_viewport_size({"width": width, "height": 768})
        key = ["a", "b", "e", "n"][n % 4]
        page.keyboard.press(key)
        expect(page.locator("input[name=call]:checked")).to_have_value(
            {"a": "a", "b": "b", "e": "equal", "n": "neither"}[key])
        page.keyboard.press("Shift+Digit4")
        page.keyboard.press("t")
        page.keyboard.press("a")  # the first reason ticked, by its letter
        page.keyboard.press("Enter")
    expect(page).to_have_url(re.compile(rf"/read\?done={study_id}$"))


def test_a_pairwise_study_read_by_keyboard_then_counted_and_downloaded(
        browser: Browser, page: Page, demo_engine: Engine, live_server: str, tmp_path: Path) -> None:
    readers = [add_user(demo_engine, name, Role.reader) for name in ("pw-reader-1", "pw-reader-2")]
    errors: list[str] = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.goto(f"{live_server}/studies")
    page.click("#new-pairwise-study")  # found from the studies page, as a new user would
    for width in (1024, 1366):  # the kind and strata as labelled choices
        page.set_viewport_size({"width": width, "height": 768})
        page.screenshot(path=str(ARTIFACTS / f"pairwise-form-{width}.png"))
    page.check('#field-kind input[value="consecutive"]')
    for facet in ("direction", "verdicts"):
        page.uncheck(f'#pair-pool input[value="{facet}"]')
    page.click("#pair-pool button")
    page.wait_for_url(re.compile(r"kind=consecutive"))
    assert page.locator("#pair-strata tbody tr").count() == 3
    page.fill("input[name=name]", "rounds, side by side")
    page.fill("input[name=per_stratum]", "2")
    for reader in readers:
        page.check(f'#field-readers input[value="{reader.id}"]')
    page.click("#create-pairwise")
    page.wait_for_url(re.compile(r"/studies/\d+$"))
    study_id = page.url.rsplit("/", 1)[1]

    for reader, width in zip(readers, (1366, 1024), strict=True):
        tab = browser.new_context(viewport={"width": width, "height": 768}).new_page()
        tab.on("pageerror", lambda e: errors.append(str(e)))
        log_in(tab, live_server, reader.name, f"/read/{study_id}")
        _read_all(tab, live_server, study_id, 6, width)
        tab.context.close()

    page.goto(f"{live_server}/studies/{study_id}/pairwise")
    expect(page.locator("#pairwise-summary strong")).to_have_text("12")
    expect(page.locator("#later-preferred td").first).to_contain_text("%")
    expect(page.locator("tr.later-step").first).to_contain_text("preferred to round")
    expect(page.locator("#readers-agree")).to_contain_text("%")
    # The rounds' strengths drawn beside their table, one row per round.
    plot = page.locator("#by-round-plot svg")
    expect(plot).to_be_visible()
    for label in page.locator("#by-round tbody tr").evaluate_all("rows => rows.map(r => r.dataset.item)"):
        assert plot.locator("text", has_text=label).count() >= 1
    for width in (1024, 1280, 1366, 1920):
        page.set_viewport_size({"width": width, "height": 900})
        assert page.evaluate("document.documentElement.scrollWidth <= window.innerWidth + 1")
        page.screenshot(path=str(ARTIFACTS / f"pairwise-figures-{width}.png"), full_page=True)
    with page.expect_download() as download:
        page.click("#download-pairs")
    saved = tmp_path / "pairs.zip"
    download.value.save_as(saved)
    names = zipfile.ZipFile(saved).namelist()
    assert {"pairs.jsonl", "pairs.parquet", "manifest.json"} <= set(names)
    assert errors == []
