"""The image viewer in Chromium: linked zoom, flicker, swipe, difference map, window/level,
full screen. Pixels are read back from screenshots, so a filter that does nothing fails."""

import io
import re

import numpy as np
import pytest
from PIL import Image
from playwright.sync_api import Page, expect
from sqlalchemy import func, select
from sqlalchemy.engine import Engine
from sqlmodel import Session, col

from app.models import Attempt, Task
from tests.browser.conftest import ARTIFACTS
from tests.browser.helpers import IMAGES_SHOWN

pytestmark = pytest.mark.browser

STAGES = "() => Array.from(document.querySelectorAll('.viewport .stage')).map(s => s.style.transform)"


def task_with_most_rounds(engine: Engine, modality: str) -> int:
    with Session(engine) as session:
        query = (select(Task.id).join(Attempt, col(Attempt.run_id) == Task.latest_run_id)
                 .where(col(Task.modality) == modality, col(Task.outcome) == "success")
                 .group_by(col(Task.id)).order_by(func.count().desc(), col(Task.id)).limit(1))
        return int(session.scalars(query).one())


def open_case(page: Page, base: str, task_id: int) -> None:
    page.goto(f"{base}/cases/{task_id}")
    page.wait_for_function(IMAGES_SHOWN)
    page.wait_for_function("() => window.MedBanana && window.MedBanana.viewer")


def mean_grey(page: Page, selector: str) -> float:
    shot = page.locator(selector).screenshot()
    return float(np.asarray(Image.open(io.BytesIO(shot)).convert("L"), dtype=np.float64).mean())


def scale_of(transform: str) -> float:
    found = re.search(r"scale\(([\d.]+)\)", transform)
    return float(found.group(1)) if found else 1.0


def test_zoom_in_one_pane_zooms_every_linked_pane(page: Page, live_server: str,
                                                  demo_engine: Engine) -> None:
    open_case(page, live_server, task_with_most_rounds(demo_engine, "chest_xray"))
    viewports = page.locator(".viewport")
    assert viewports.count() >= 3  # original, failed round(s), accepted edit
    box = viewports.nth(1).bounding_box()
    assert box is not None
    page.mouse.move(box["x"] + box["width"] * 0.3, box["y"] + box["height"] * 0.4)
    for _ in range(6):  # each notch zooms by e^0.1
        page.mouse.wheel(0, -200)
    # Transforms are applied on the next animation frame: wait for the wheel to settle.
    page.wait_for_function(f"() => {{ const t = ({STAGES})(); return t.every(x => x === t[0]) "
                           "&& /scale\\(1\\.[5-9]|scale\\([2-9]/.test(t[0]); }")
    transforms = page.evaluate(STAGES)
    assert len(set(transforms)) == 1, transforms  # same zoom and pan everywhere
    assert scale_of(transforms[0]) > 1.5
    # Past the preview's resolution the file itself is swapped in.
    page.wait_for_function(
        "() => document.querySelector('.viewport .layer-base').currentSrc.endsWith('size=full')")

    ARTIFACTS.mkdir(exist_ok=True)
    page.keyboard.press("d")
    page.wait_for_function("() => Array.from(document.querySelectorAll('.layer-diff'))"
                           ".every(i => i.complete && i.naturalWidth > 0)")
    page.screenshot(path=str(ARTIFACTS / "viewer-zoomed-difference.png"))
    page.keyboard.press("d")

    page.keyboard.press("l")  # unlinked: only the pane under the pointer moves
    expect(page.locator("[data-link]")).not_to_be_checked()
    before = page.evaluate(STAGES)
    page.mouse.wheel(0, 200)
    page.wait_for_function(f"(before) => ({STAGES})()[1] !== before[1]", arg=before)
    after = page.evaluate(STAGES)
    assert after[0] == before[0] and after[2] == before[2]

    page.keyboard.press("l")
    page.mouse.dblclick(box["x"] + 20, box["y"] + 20)  # fit, on every pane
    page.wait_for_function(f"() => ({STAGES})().every(t => /scale\\(1\\)/.test(t))")


def test_flicker_swaps_the_visible_image(page: Page, live_server: str, demo_engine: Engine) -> None:
    open_case(page, live_server, task_with_most_rounds(demo_engine, "chest_xray"))
    visible = """() => Array.from(document.querySelectorAll('.viewport')).map(v =>
        Array.from(v.querySelectorAll('img.layer')).filter(i => getComputedStyle(i).visibility === 'visible')
          .map(i => new URL(i.currentSrc).pathname))"""
    shown = page.evaluate(visible)
    assert shown[0] == [p for p in shown[0] if p.startswith("/images/source/")]
    assert all(len(p) == 1 and p[0].startswith("/images/attempt/") for p in shown[1:])

    page.keyboard.press(" ")  # a tap toggles
    swapped = page.evaluate(visible)
    assert swapped[0][0].startswith("/images/attempt/")
    assert all(p == [shown[0][0]] for p in swapped[1:])  # every edit pane shows the original
    expect(page.locator(".viewport").nth(1).locator(".pane-label .other")).to_be_visible()
    page.keyboard.press(" ")
    assert page.evaluate(visible) == shown

    page.keyboard.down(" ")  # a hold swaps back on release
    page.wait_for_timeout(500)
    assert page.evaluate(visible) == swapped
    page.keyboard.up(" ")
    assert page.evaluate(visible) == shown


def test_window_level_invert_and_reset_change_the_pixels(page: Page, live_server: str,
                                                         demo_engine: Engine) -> None:
    open_case(page, live_server, task_with_most_rounds(demo_engine, "chest_xray"))
    pane = ".pane-original .viewport .stage"
    plain = mean_grey(page, pane)
    page.keyboard.press("2")  # dark detail: a lower level brightens
    brighter = mean_grey(page, pane)
    assert brighter > plain + 10
    page.keyboard.press("0")
    assert abs(mean_grey(page, pane) - plain) < 1.5
    page.keyboard.press("i")
    inverted = mean_grey(page, pane)
    assert abs(inverted - (255 - plain)) < 3
    page.keyboard.press("0")

    # Right-drag to the left narrows the window: more contrast, so a larger spread.
    box = page.locator(pane).bounding_box()
    assert box is not None
    cx, cy = box["x"] + box["width"] / 2, box["y"] + box["height"] / 2
    page.mouse.move(cx, cy)
    page.mouse.down(button="right")
    page.mouse.move(cx - box["width"] * 0.4, cy, steps=5)
    page.mouse.up(button="right")
    status = page.locator("[data-viewer-status]")
    expect(status).to_contain_text(re.compile(r"W (\d\d?) %"))
    width = int(re.search(r"W (\d+) %", status.inner_text()).group(1))  # type: ignore[union-attr]
    assert width < 60


def test_fundus_colour_is_left_alone_unless_asked(page: Page, live_server: str,
                                                  demo_engine: Engine) -> None:
    open_case(page, live_server, task_with_most_rounds(demo_engine, "fundus"))
    viewer = page.locator("#viewer")
    page.keyboard.press("4")
    expect(viewer).not_to_have_class(re.compile(r"\blevels\b"))
    page.keyboard.press("c")
    expect(viewer).to_have_class(re.compile(r"\blevels\b"))
    # With the key list open, keys belong to it, not to the images behind it.
    page.keyboard.press("?")
    expect(page.locator("#keys-help")).to_be_visible()
    expect(page.locator("#keys-help")).to_contain_text("window/level on a colour (fundus) image")
    page.keyboard.press("d")
    expect(viewer).not_to_have_class(re.compile(r"\bdiff\b"))
    page.keyboard.press("Escape")
    expect(page.locator("#keys-help")).to_be_hidden()


def test_swipe_difference_opacity_and_full_screen(page: Page, live_server: str,
                                                  demo_engine: Engine) -> None:
    open_case(page, live_server, task_with_most_rounds(demo_engine, "chest_xray"))
    page.keyboard.press("s")
    alt = page.locator(".viewport").nth(1).locator(".layer-alt")
    expect(alt).to_be_visible()
    page.locator("[data-swipe-range]").fill("20")
    # The edit shows left of the line, the original right of it (20 % of the frame).
    page.wait_for_function("() => Math.abs(parseFloat(getComputedStyle(document.querySelectorAll("
                           "'.viewport .layer-alt')[1]).clipPath.split(' ')[3]) - 20) < 0.5")
    page.keyboard.press("s")

    page.keyboard.press("d")
    diff = page.locator(".viewport").nth(1).locator(".layer-diff")
    expect(diff).to_be_visible()
    page.wait_for_function("() => document.querySelector('.layer-diff').naturalWidth > 0")
    page.locator("[data-diff-opacity]").fill("25")
    assert diff.evaluate("i => getComputedStyle(i).opacity") == "0.25"

    page.keyboard.press("f")
    expect(page.locator("#viewer")).to_have_class(re.compile(r"\bsingle\b"))
    expect(page.locator("#panes figure.pane:visible")).to_have_count(1)
    page.screenshot(path=str(ARTIFACTS / "viewer-full-screen.png"))
    page.keyboard.press("]")
    page.keyboard.press("Escape")
    expect(page.locator("#viewer")).not_to_have_class(re.compile(r"\bsingle\b"))
    assert page.locator("#panes figure.pane:visible").count() >= 3


def test_a_difference_map_on_its_way_says_so_on_the_pane(page: Page, live_server: str,
                                                         demo_engine: Engine) -> None:
    """An overlay still being drawn must not be read as "nothing changed": until the map has
    come, the pane and the status line say it is being drawn."""
    from playwright.sync_api import Route

    held: list[Route] = []
    page.route(re.compile(r"/images/diff/"), lambda route: held.append(route))
    open_case(page, live_server, task_with_most_rounds(demo_engine, "chest_xray"))
    page.keyboard.press("d")
    frame = page.locator(".viewport").nth(1)
    expect(frame).to_have_attribute("data-diff-state", "loading")
    label = frame.evaluate("f => getComputedStyle(f, '::after').content")
    assert "drawing the difference map" in label
    expect(page.locator("[data-viewer-status]")).to_contain_text("difference map: drawing")
    ARTIFACTS.mkdir(exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / "viewer-diff-loading.png"))
    for route in held:
        route.continue_()
    page.unroute(re.compile(r"/images/diff/"))
    expect(frame).to_have_attribute("data-diff-state", "ready")
    assert frame.evaluate("f => getComputedStyle(f, '::after').content") in ("none", "normal")
    expect(page.locator("[data-viewer-status]")).not_to_contain_text("drawing")
