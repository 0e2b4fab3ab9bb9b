"""The reading room at 1366x768 and 1024x768: images and answers in one view, every key visible where the
eyes are, a failed submit that says so, and the tag and previous-case keys."""

import json
import re

import pytest
from playwright.sync_api import Browser, Locator, Page, expect
from sqlalchemy.engine import Engine
from sqlmodel import Session, select

from app.studies.models import Answer, Study
from tests.browser.conftest import ARTIFACTS
from tests.browser.helpers import IMAGES_SHOWN, answer_with_keys, log_in
from tests.studies.conftest import make_study

pytestmark = pytest.mark.browser
VIEW = {"width": 1366, "height": 768}


def in_view(page: Page, locator: Locator, view: dict[str, int] = VIEW) -> None:
    box = locator.bounding_box()
    assert box is not None, locator
    assert box["x"] >= 0 and box["y"] >= 0, box
    assert box["x"] + box["width"] <= view["width"] and box["y"] + box["height"] <= view["height"], box


def open_first_case(browser: Browser, demo_engine: Engine, live_server: str) -> tuple[Page, int]:
    study = make_study(demo_engine).study
    assert study.id is not None
    page = browser.new_context(viewport=VIEW).new_page()
    log_in(page, live_server, "reader-0", f"/read/{study.id}")
    page.wait_for_function(IMAGES_SHOWN)
    return page, study.id


@pytest.mark.parametrize("view", [VIEW, {"width": 1024, "height": 768}])
def test_images_and_the_whole_answer_panel_share_the_screen(browser: Browser, demo_engine: Engine,
                                                            live_server: str,
                                                            view: dict[str, int]) -> None:
    """A whole case without scrolling, at both sizes: at 1024 the failure reasons, the
    comment and Submit were below the panel's fold, and at 1366 the study's instructions."""
    study = make_study(demo_engine).study
    with Session(demo_engine) as session:
        found = session.get(Study, study.id)
        assert found is not None
        found.instructions = ("Read each case as you would a clinical film. Answer every "
                              "question; can't assess only when the image does not let you.")
        session.add(found)
        session.commit()
    page = browser.new_context(viewport=view).new_page()
    log_in(page, live_server, "reader-0", f"/read/{study.id}")
    page.wait_for_function(IMAGES_SHOWN)
    page.keyboard.press("Enter")  # the study's instructions, shown whole before the first case
    expect(page.locator("#study-instructions-now")).not_to_be_visible()
    in_view(page, page.locator("#img-original"), view)
    in_view(page, page.locator("#img-edit"), view)
    for part in (".instruction:visible", 'fieldset[data-name="compliance"]',
                 'fieldset[data-name="confidence"]', "#tags", "textarea[name=comment]",
                 "#submit-answer", "#study-instructions summary"):
        in_view(page, page.locator(part), view)
    assert page.evaluate("document.scrollingElement.scrollHeight") <= view["height"]
    assert page.locator("#answer-panel").evaluate("e => e.scrollHeight - e.clientHeight") <= 1
    # Every question's choices, with the keys that choose them, where the eyes are.
    keys = page.locator("#choice-keys:visible, fieldset[data-name=compliance] .options kbd:visible")
    expect(keys.first).to_be_visible()
    # Each (square) image fills its frame: no band of black above and below it.
    for image in ("#img-original", "#img-edit"):
        picture = page.locator(image).bounding_box()
        frame = page.locator(image).locator("xpath=ancestor::div[contains(@class,'frame')]"
                                            ).bounding_box()
        assert picture is not None and frame is not None
        assert picture["height"] >= frame["height"] - 4 and picture["width"] >= frame["width"] - 4
    ARTIFACTS.mkdir(exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / f"reading-screen-{view['width']}.png"))


def test_every_answer_key_lights_up_what_it_changed(browser: Browser, demo_engine: Engine,
                                                    live_server: str) -> None:
    page, _ = open_first_case(browser, demo_engine, live_server)
    # One key per answer (y, n, e) on the marked question, which then moves on; 1-4 mark.
    keys = [("y", "compliance", "yes"), ("n", "structure", "no"), ("e", "realism", "cannot_assess"),
            ("y", "fidelity", "yes"), ("a", "overall", "accept"), ("r", "overall", "reject")]
    keys += [(f"Shift+Digit{c}", "confidence", str(c)) for c in range(1, 6)]
    for key, name, value in keys:
        page.keyboard.press(key)
        label = page.locator(f'input[name="{name}"][value="{value}"]').locator("xpath=..")
        expect(label.locator("input")).to_be_checked()
        expect(label).to_have_class(re.compile(r"\bchanged\b"))
        # The chosen value is drawn filled, unlike its neighbours.
        chosen = label.locator("span").evaluate("e => getComputedStyle(e).backgroundColor")
        others = page.locator(f'input[name="{name}"]:not(:checked) + span').first
        assert chosen != others.evaluate("e => getComputedStyle(e).backgroundColor"), key
        in_view(page, label)
    page.keyboard.press("1")  # marks compliance again, and changes no answer
    expect(page.locator('fieldset[data-name="compliance"]')).to_have_class(re.compile(r"\bcurrent\b"))
    expect(page.locator('input[name="compliance"][value="yes"]')).to_be_checked()
    page.keyboard.press("n")
    expect(page.locator('input[name="compliance"][value="no"]')).to_be_checked()
    page.keyboard.press("h")
    expect(page.locator("#help-compliance")).to_be_visible()
    expect(page.locator("#help-compliance")).to_contain_text("Yes means")
    page.keyboard.press("h")
    expect(page.locator("#help-compliance")).to_be_hidden()


def test_a_submit_with_answers_missing_names_them_and_focuses_the_first(
        browser: Browser, demo_engine: Engine, live_server: str) -> None:
    page, sid = open_first_case(browser, demo_engine, live_server)
    for key in ("y", "a"):
        page.keyboard.press(key)
    page.keyboard.press("Enter")
    summary = page.locator("#missing-summary")
    expect(summary).to_be_visible()
    expect(summary).to_contain_text("Structure, Realism, Fidelity, Confidence")
    in_view(page, summary)
    focused = page.evaluate("[document.activeElement.name, document.activeElement.value]")
    assert focused == ["structure", "yes"]
    expect(page.locator('fieldset[data-name="structure"]')).to_have_attribute("aria-invalid", "true")
    expect(page).to_have_url(re.compile(rf"/read/{sid}/1$"))  # nothing was sent
    page.keyboard.press("2")  # the keys still work: the focus sits on a radio, not a text field
    page.keyboard.press("y")
    expect(page.locator('fieldset[data-name="structure"]')).not_to_have_attribute("aria-invalid", "true")
    ARTIFACTS.mkdir(exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / "reading-missing-answers.png"))


def test_tag_keys_and_the_previous_case(browser: Browser, demo_engine: Engine, live_server: str) -> None:
    page, sid = open_first_case(browser, demo_engine, live_server)
    page.keyboard.press("t")
    expect(page.locator("#tags")).to_have_class(re.compile(r"\barmed\b"))
    expect(page.locator("#tag-mode-hint")).to_be_visible()
    page.keyboard.press("c")  # the third tag, not the viewer's colour key
    expect(page.locator('input[name="tags"]').nth(2)).to_be_checked()
    expect(page.locator("#tags")).not_to_have_class(re.compile(r"\barmed\b"))
    page.keyboard.press("t")
    page.keyboard.press("Escape")  # leaves the mode, ticks nothing
    page.keyboard.press("b")
    expect(page.locator('input[name="tags"]:checked')).to_have_count(1)
    page.keyboard.press("t")
    page.keyboard.press("c")  # again: unticks
    expect(page.locator('input[name="tags"]:checked')).to_have_count(0)
    page.keyboard.press("t")
    page.keyboard.press("l")
    answer_with_keys(page)
    page.keyboard.press("Enter")
    expect(page).to_have_url(re.compile(rf"/read/{sid}/2$"))
    page.wait_for_function(IMAGES_SHOWN)
    page.keyboard.press("p")
    expect(page).to_have_url(re.compile(rf"/read/{sid}/1$"))
    expect(page.locator("#answered")).to_be_visible()
    expect(page.locator('input[name="tags"][value="text_or_label"]')).to_be_checked()
    page.keyboard.press("r")  # revise: the change is a new version of the answer
    page.keyboard.press("Enter")
    expect(page).to_have_url(re.compile(rf"/read/{sid}/2$"))
    page.keyboard.press("Backspace")
    expect(page.locator("#answered")).to_have_text("answered · version 2")
    expect(page.locator('input[name="overall"][value="reject"]')).to_be_checked()


def test_the_tools_a_reader_uses_are_recorded_with_the_answer(browser: Browser, demo_engine: Engine,
                                                              live_server: str) -> None:
    page, sid = open_first_case(browser, demo_engine, live_server)
    page.keyboard.press(" ")  # flicker on ...
    page.wait_for_timeout(150)
    page.keyboard.press(" ")  # ... and off
    page.keyboard.press("w")  # a window preset
    answer_with_keys(page)
    page.keyboard.press("Enter")
    expect(page).to_have_url(re.compile(rf"/read/{sid}/2$"))
    with Session(demo_engine) as session:
        [answer] = session.exec(select(Answer)).all()
    used = json.loads(answer.tool_use or "{}")
    assert set(used) == {"flicker", "window"} and used["flicker"]["uses"] == 1
    assert used["flicker"]["ms"] >= 100


@pytest.mark.parametrize("view", [VIEW, {"width": 1024, "height": 768}])
def test_the_whole_instruction_and_every_tag_are_shown(browser: Browser, demo_engine: Engine,
                                                       live_server: str, view: dict[str, int]) -> None:
    """Compliance is judged against the instruction's last word: a long instruction is shown
    whole, on screen, with nothing to scroll; and no failure tag is cut short."""
    from app.studies.models import StudyItem

    study = make_study(demo_engine).study
    long = ("Add a moderate right-sided pleural effusion that blunts the costophrenic angle and "
            "tracks up the lateral chest wall with a meniscus; keep the cardiac silhouette, the "
            "mediastinum, the left lung, the ribs, the clavicles, the soft tissues and the "
            "support devices exactly as they are, match the noise texture and the exposure of "
            "the original, and do not change the image's size, orientation or markers. END.")
    with Session(demo_engine) as session:
        first = session.exec(select(StudyItem).where(StudyItem.study_id == study.id)).all()
        for item in first:
            item.reader_instruction = long
            session.add(item)
        session.commit()
    page = browser.new_context(viewport=view).new_page()
    log_in(page, live_server, "reader-0", f"/read/{study.id}")
    page.wait_for_function(IMAGES_SHOWN)
    instruction = page.locator(".instruction:visible")  # above the images at 1024 wide
    expect(instruction).to_contain_text("END.")
    hidden = instruction.evaluate("e => e.scrollHeight - e.clientHeight")
    assert hidden <= 1, f"{hidden} px of the instruction hidden"
    box = instruction.bounding_box()
    assert box is not None and box["y"] + box["height"] <= view["height"], box
    for label in page.locator(".tag-grid label, fieldset.choice > legend").all():
        assert label.evaluate("e => e.scrollWidth <= e.clientWidth + 1"), label.inner_text()
    expect(page.locator('fieldset[data-name="overall"] > legend')).to_have_text("a/r Keep in the data set?")
    assert page.evaluate("document.scrollingElement.scrollHeight") <= view["height"]
    ARTIFACTS.mkdir(exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / f"reading-long-instruction-{view['width']}.png"))


def test_study_instructions_open_on_the_first_case_and_after_a_change(
        browser: Browser, demo_engine: Engine, live_server: str) -> None:
    """Folded at the foot of the panel a reader may never open them: they are shown in full
    in front of the reader's first case, keys answer nothing behind them, Enter closes them,
    and they come back on the next case opened after an admin changed them."""
    from app.studies.models import Study

    study = make_study(demo_engine).study

    def write(text: str) -> None:
        with Session(demo_engine) as session:
            row = session.get(Study, study.id)
            assert row is not None
            row.instructions = text
            session.add(row)
            session.commit()

    write("Judge realism at full resolution. Ignore the burnt-in labels.")
    page = browser.new_context(viewport=VIEW).new_page()
    log_in(page, live_server, "reader-0", f"/read/{study.id}")
    shown = page.locator("#study-instructions-now")
    expect(shown).to_be_visible()
    expect(shown).to_contain_text("Ignore the burnt-in labels.")
    ARTIFACTS.mkdir(exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / "study-instructions-1366.png"))
    page.keyboard.press("y")  # read, not answered: the instructions have the keys
    expect(page.locator('input[name="compliance"]:checked')).to_have_count(0)
    page.keyboard.press("Enter")
    expect(shown).to_be_hidden()
    page.keyboard.press("y")
    expect(page.locator('input[name="compliance"][value="yes"]')).to_be_checked()
    page.goto(f"{live_server}/read/{study.id}/2")
    expect(page.locator("#study-instructions-now")).to_have_count(0)  # seen, unchanged
    write("Judge realism at full resolution. Ignore the burnt-in labels. Use window presets.")
    page.goto(f"{live_server}/read/{study.id}/2")
    expect(page.locator("#study-instructions-now")).to_contain_text("Use window presets.")
    page.keyboard.press("Escape")
    expect(page.locator("#study-instructions-now")).to_be_hidden()


def test_the_admins_instructions_box_has_the_pages_width(page: Page, demo_engine: Engine,
                                                        live_server: str) -> None:
    study = make_study(demo_engine).study
    page.set_viewport_size(VIEW)
    page.goto(f"{live_server}/studies/{study.id}")
    box = page.locator('#setup-form textarea[name="instructions"]').bounding_box()
    form = page.locator("#setup-form").bounding_box()
    assert box is not None and form is not None
    assert box["width"] >= 0.9 * form["width"] and box["width"] > 600, (box, form)
