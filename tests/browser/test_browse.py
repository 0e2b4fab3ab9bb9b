"""End to end in a real Chromium: filter, open a case, every image loads, keys move on."""

import re

import pytest
from playwright.sync_api import Page, expect

from tests import demo_counts as demo
from tests.browser.conftest import ARTIFACTS

pytestmark = pytest.mark.browser


def all_images_loaded(page: Page) -> bool:
    return bool(page.evaluate(
        "() => Array.from(document.images).every(img => img.complete && img.naturalWidth > 0)"))


def test_filter_open_case_and_see_every_image(page: Page, live_server: str) -> None:
    page.goto(f"{live_server}/cases")
    expect(page.locator("#total")).to_have_text(str(demo.TASKS))
    page.click('.facet[data-facet="modality"] a[data-value="fundus"]')
    expect(page).to_have_url(re.compile(r"/cases\?modality=fundus$"))
    expect(page.locator("#total")).to_have_text(str(demo.MODALITIES["fundus"]))
    assert page.locator("html").count() == 1  # the htmx swap replaced a region, not the page

    page.click('.facet[data-facet="outcome"] a[data-value="success"]')
    expect(page).to_have_url(re.compile(r"modality=fundus&outcome=success"))
    rows = page.locator("tr.case-row")
    expect(rows.first).to_be_visible()
    page.locator("a.case-link").nth(2).click()
    page.wait_for_load_state("networkidle")
    assert re.search(r"/cases/\d+\?modality=fundus&outcome=success$", page.url)
    panes = page.locator("#panes figure.pane")
    assert panes.count() >= 2
    page.wait_for_function(
        "() => Array.from(document.images).every(img => img.complete)")
    assert all_images_loaded(page)
    ARTIFACTS.mkdir(exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / "case-page.png"), full_page=True)

    before = page.url
    page.keyboard.press("j")
    page.wait_for_url(lambda url: url != before)
    assert "modality=fundus&outcome=success" in page.url


def test_back_button_restores_the_filter(page: Page, live_server: str) -> None:
    page.goto(f"{live_server}/cases")
    page.click('.facet[data-facet="direction"] a[data-value="remove"]')
    expect(page.locator("#total")).to_have_text(str(demo.DIRECTIONS["remove"]))
    page.click('.facet[data-facet="modality"] a[data-value="brain_mri"]')
    expect(page.locator("#total")).to_have_text("6")
    page.go_back()
    expect(page).to_have_url(re.compile(r"/cases\?direction=remove$"))
    expect(page.locator("#total")).to_have_text(str(demo.DIRECTIONS["remove"]))


def test_search_box_filters_as_you_type(page: Page, live_server: str) -> None:
    page.goto(f"{live_server}/cases?modality=chest_xray")
    page.keyboard.press("/")
    page.keyboard.type("pneumoth")
    expect(page).to_have_url(re.compile(r"q=pneumoth"))
    expect(page).to_have_url(re.compile(r"modality=chest_xray"))
    expect(page.locator("#total")).to_have_text(str(demo.PNEUMOTHORAX_SEARCHABLE))
    ARTIFACTS.mkdir(exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / "case-list.png"))


def test_missing_image_shows_a_placeholder_not_a_broken_icon(page: Page, live_server: str) -> None:
    page.goto(f"{live_server}/cases?q=glioma&direction=remove")
    page.click("text=Te-gl_0002-glioma")
    placeholder = page.locator('figure[data-role="original"] .placeholder')
    expect(placeholder).to_contain_text("Image missing")
    # Wait for the edits to finish loading (once asserted too early and failed under load).
    page.wait_for_function("() => Array.from(document.images).every(img => img.complete)")
    assert all_images_loaded(page)


def test_a_bad_bookmark_opens_the_list_with_a_notice(page: Page, live_server: str) -> None:
    page.set_viewport_size({"width": 1366, "height": 768})
    page.goto(f"{live_server}/cases?modality=ct_scan&modality=Fundus&sort=bogus")
    notice = page.locator("#ignored-filters")
    expect(notice).to_be_visible()
    expect(notice).to_contain_text("modality=ct_scan")
    expect(page.locator("#total")).to_have_text(str(demo.MODALITIES["fundus"]))
    ARTIFACTS.mkdir(exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / "cases-bad-bookmark-1366.png"))
    # Choosing a facet after it keeps the filter as it was kept, without the bad values.
    page.click('.facet[data-facet="outcome"] a[data-value="success"]')
    expect(page).to_have_url(re.compile(r"/cases\?modality=fundus&outcome=success$"))
    expect(page.locator("#ignored-filters")).to_have_count(0)


def test_the_case_list_fits_1024_pixels(page: Page, live_server: str) -> None:
    page.set_viewport_size({"width": 1024, "height": 768})
    page.goto(f"{live_server}/cases")
    expect(page.locator("tr.case-row").first).to_be_visible()
    ARTIFACTS.mkdir(exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / "case-list-1024.png"))
    widths = page.evaluate("() => [document.documentElement.scrollWidth, window.innerWidth]")
    assert widths[0] <= widths[1], f"the page is {widths[0]} px wide in a {widths[1]} px window"
    # Nothing ticked: the button that acts on ticked cases says why it cannot act yet.
    button = page.locator("#regenerate-selected")
    expect(button).to_be_disabled()
    expect(button).to_have_attribute("title", "Tick at least one case first")
    page.locator('input[name="task"]').first.check()
    expect(button).to_be_enabled()
