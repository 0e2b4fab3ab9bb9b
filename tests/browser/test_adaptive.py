"""An adaptive study in Chromium: made on the form, read by three readers on the reading
screen, its next batches drawn as they answer; the study page shows the figures with intervals
valid at every look, the reads still needed, and "precise enough" once the target is met."""

import re
import time
from pathlib import Path

import pytest
from playwright.sync_api import Browser, Page, expect
from sqlalchemy.engine import Engine
from sqlmodel import Session, col, select

from app.agreement.service import watch_for
from app.designs.adaptive.top_up import top_up
from app.models import Role
from app.studies.models import Study, StudyBatch
from tests.accounts import add_user
from tests.browser.conftest import ARTIFACTS
from tests.browser.helpers import IMAGES_SHOWN, answer_with_keys, log_in
from tests.designs.adaptive.test_top_up import read_all

pytestmark = pytest.mark.browser
WIDTHS = (1024, 1280, 1366, 1920)


def open_for_reading(page: Page, live_server: str, study_id: int) -> None:
    """The study opens once its images are drawn (a few seconds at most)."""
    deadline = time.monotonic() + 30
    while page.locator("#study-preparing").count():
        assert time.monotonic() < deadline, "the study's images were never drawn"
        time.sleep(0.3)
        page.goto(f"{live_server}/studies/{study_id}")


def until(engine: Engine, study_id: int, cache: Path, done: object) -> None:
    """Readers answer everything in their lists, batches are topped up, until ``done``."""
    for _ in range(30):
        with Session(engine) as session:
            study = session.get(Study, study_id)
            assert study is not None
            found = watch_for(session, study)
            if done(found):  # type: ignore[operator]
                return
        read_all(engine, study_id)
        top_up(engine, study_id, cache)
    raise AssertionError("the study never got there")


def test_three_readers_run_an_adaptive_study_until_it_may_stop(
        browser: Browser, demo_engine: Engine, live_server: str, tmp_path: Path) -> None:
    for i in range(3):
        add_user(demo_engine, f"adaptive-reader-{i}", Role.reader)
    admin = browser.new_context(viewport={"width": 1366, "height": 900}).new_page()
    log_in(admin, live_server, "browser-admin", "/studies/new")
    admin.check('input[name="design"][value="adaptive"]')
    expect(admin.locator("#adaptive-explained")).to_be_visible()
    admin.fill('input[name="name"]', "adaptive pilot")
    admin.fill('input[name="total"]', "30")
    admin.fill('input[name="batch_images"]', "3")
    admin.fill('input[name="target_agreement"]', "0.25")
    admin.locator('input[name="total"]').dispatch_event("change")
    expect(admin.locator("#budget-reads")).to_contain_text("Tick the readers")
    for i in range(3):
        admin.check(f'#field-readers label:has-text("adaptive-reader-{i}") input')
    # What the budget reads, updated where it is typed, as readers are ticked.
    edits = int(admin.locator("#budget-edits").inner_text())
    # The fragment follows each tick: its last answer counts the three readers.
    expect(admin.locator("#budget-reads-total")).to_have_text(str(3 * edits))
    expect(admin.locator("#budget-per-reader")).to_have_text(str(edits))
    admin.locator("#field-total").scroll_into_view_if_needed()
    admin.screenshot(path=str(ARTIFACTS / "adaptive-form-budget-1366.png"))
    admin.click('#study-form button[type="submit"]')
    expect(admin).to_have_url(re.compile(r"/studies/\d+$"))
    study_id = int(admin.url.rsplit("/", 1)[1])
    open_for_reading(admin, live_server, study_id)
    expect(admin.locator('#watch-table tr[data-endpoint="agreement"] .target')).to_have_text("± 0.25")

    for i in range(3):  # each reader answers on the reading screen, with keys
        reader = browser.new_context(viewport={"width": 1366, "height": 900}).new_page()
        log_in(reader, live_server, f"adaptive-reader-{i}", f"/read/{study_id}")
        for case in (1, 2):
            expect(reader).to_have_url(re.compile(rf"/read/{study_id}/{case}$"))
            reader.wait_for_function(IMAGES_SHOWN)
            answer_with_keys(reader)
            reader.keyboard.press("Enter")
        reader.context.close()

    cache = tmp_path / "cache"
    until(demo_engine, study_id, cache, lambda w: w.endpoints[0].reads_needed is not None)
    admin.goto(f"{live_server}/studies/{study_id}")
    agreement = admin.locator('#watch-table tr[data-endpoint="agreement"]')
    expect(agreement.locator(".interval")).to_contain_text("n = ")
    expect(agreement.locator(".reads-needed")).to_be_visible()
    expect(admin.locator("#precise-enough")).to_have_count(0)
    expect(admin.locator("#interim")).to_contain_text("Interim:")

    until(demo_engine, study_id, cache, lambda w: w.precise_enough)
    admin.goto(f"{live_server}/studies/{study_id}")
    expect(admin.locator("#precise-enough")).to_contain_text("Precise enough: the study may stop.")
    expect(agreement.locator(".status")).to_contain_text("met after")
    # The narrowing drawn beside the table, the agreement's target a level of its own.
    plot = admin.locator("#watch-plot svg")
    expect(plot).to_be_visible()
    expect(plot.locator("text", has_text="target ± 0.25")).to_have_count(1)
    with Session(demo_engine) as session:
        batches = session.scalars(select(StudyBatch).where(col(StudyBatch.study_id) == study_id)).all()
    assert len(batches) > 2 and all(b.ready for b in batches)
    ARTIFACTS.mkdir(exist_ok=True)
    for width in WIDTHS:
        admin.set_viewport_size({"width": width, "height": 900})
        admin.locator("#study-watch").screenshot(path=str(ARTIFACTS / f"adaptive-watch-{width}.png"))
