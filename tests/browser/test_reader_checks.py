"""A reader practises, qualifies, reads a study with known-answer cases beside two other
readers reading at the same time, is paused by a planted drop in accuracy (the two steady
readers never are) and resumed by the admin: in Chromium, with screenshots at four widths."""


import pytest
from playwright.sync_api import Browser, Page, expect
from sqlalchemy.engine import Engine
from sqlmodel import Session, select

from app.background import wait_for_background
from app.cases.filters import CaseFilter
from app.studies.design import StudyPlan, create_study
from app.studies.models import Design
from app.studies.practice import Requirement, create_practice
from app.studies.reader_models import Qualification, ReaderPause
from tests.accounts import add_user
from tests.browser.conftest import ARTIFACTS
from tests.browser.helpers import IMAGES_SHOWN, log_in
from tests.known_answers import settled_by_sequence
from tests.readers.test_figures_without_known import mark_edits
from tests.studies.conftest import opened

pytestmark = pytest.mark.browser
WIDTHS = (1024, 1280, 1366, 1920)
FLIP = {"yes": "no", "no": "yes", "accept": "reject", "reject": "accept"}


def _settled(engine: Engine, study_id: int, user_id: int) -> dict[int, dict[str, str]]:
    return settled_by_sequence(engine, study_id, user_id)


def _answer(page: Page, answers: dict[str, str]) -> None:
    """Every question by its key, the verdict, a confidence, and Enter."""
    page.wait_for_function(IMAGES_SHOWN)
    for question in ("compliance", "structure", "realism", "fidelity"):
        page.keyboard.press("y" if answers.get(question, "yes") == "yes" else "n")
    page.keyboard.press("a" if answers.get("overall", "accept") == "accept" else "r")
    page.keyboard.press("Shift+Digit4")
    with page.expect_navigation():
        page.keyboard.press("Enter")


def _shots(page: Page, name: str) -> None:
    ARTIFACTS.mkdir(exist_ok=True)
    for width in WIDTHS:
        page.set_viewport_size({"width": width, "height": 900 if width < 1900 else 1080})
        page.screenshot(path=str(ARTIFACTS / f"{name}-{width}.png"), full_page=True)
    page.set_viewport_size({"width": 1366, "height": 768})


def test_practise_qualify_read_be_paused_and_be_resumed(browser: Browser, demo_engine: Engine,
                                                        live_server: str,
                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    # The pause holds one read after the test fires here; tests/readers/test_pause.py holds
    # the random delay.
    monkeypatch.setattr("app.readers.pause.PAUSE_AFTER", (1, 1))
    mark_edits(demo_engine, 60)  # enough left once the practice's images are kept apart
    from app.models import Role

    admin = add_user(demo_engine, "chief", Role.admin)
    reader = add_user(demo_engine, "dr-reader", Role.reader)
    steady = [add_user(demo_engine, f"dr-steady-{i}", Role.reader) for i in range(2)]
    with Session(demo_engine) as session:
        practice = create_practice(session, name="warm-up", cases=6, reader_ids=[reader.id or 0],
                                   created_by=admin)
        requirement = Requirement(practice.id or 0, 0.6, 4)
        plan = StudyPlan(name="with checks", case_filter=CaseFilter(modality=("chest_xray",)),
                         design=Design.validation,
                         reader_ids=[reader.id or 0, *(u.id or 0 for u in steady)],
                         seed=5, strata_facets=("verdict",), per_stratum={"pass": 6, "fail": 6},
                         known_share=0.5, qualification=requirement)
        study = create_study(session=session, plan=plan, created_by=admin)
        pid, sid = practice.id or 0, study.id or 0
        # The two steady readers qualified before (their practice is not what is shown here).
        for user in steady:
            session.add(Qualification(user_id=user.id or 0, practice_id=pid, cases=4, right=4,
                                      asked=4, low=0.4, high=1.0, threshold=0.6, min_cases=4,
                                      on="estimate"))
        session.commit()
    opened(demo_engine, pid)
    opened(demo_engine, sid)
    page = browser.new_context(viewport={"width": 1366, "height": 768}).new_page()
    # Not qualified yet: the study sends the reader to practise.
    log_in(page, live_server, "dr-reader", f"/read/{sid}")
    expect(page.locator("#qualify-first")).to_be_visible()
    page.click("#practice-link")
    practice_answers = _settled(demo_engine, pid, reader.id or 0)
    for sequence in range(1, 5):
        page.wait_for_url(f"**/read/{pid}/{sequence}")
        _answer(page, practice_answers[sequence])
        expect(page.locator("#practice-feedback")).to_be_visible()
        expect(page.locator("#settled-answers tr[data-question=overall]")).to_have_class("agree")
        if sequence == 1:
            _shots(page, "practice-feedback")
        with page.expect_navigation():
            page.keyboard.press("g")  # on to the next practice case, by its key
    # Qualified: the study opens.
    page.goto(f"{live_server}/read/{sid}")
    expect(page.locator("#answer-form")).to_be_visible()
    known = _settled(demo_engine, sid, reader.id or 0)
    assert len(known) == 12
    others = []
    for user in steady:
        other_page = browser.new_context(viewport={"width": 1366, "height": 768}).new_page()
        log_in(other_page, live_server, user.name, f"/read/{sid}")
        others.append((other_page, _settled(demo_engine, sid, user.id or 0)))
    paused = False
    # The three read in turn, case by case: the steady two answer every known-answer case
    # as settled; dr-reader the first 6 as settled (their own baseline) and the later ones
    # wrongly, until paused. Ordinary cases are answered alike by all.
    order = sorted(known)
    for sequence in range(1, 25):
        # Each submit lands on the reader's next case (or the paused screen): no other step.
        for other_page, theirs in others:
            other_page.wait_for_url(f"**/read/{sid}/{sequence}")
            assert not other_page.locator("#paused").count(), "a steady reader was paused"
            _answer(other_page, theirs.get(sequence, {}))
        if paused:
            continue
        if page.locator("#paused").count():
            paused = True
            continue
        page.wait_for_url(f"**/read/{sid}/{sequence}")
        if sequence in known:
            settled = known[sequence]
            _answer(page, settled if order.index(sequence) < 6
                    else {q: FLIP[a] for q, a in settled.items()})
            wait_for_background()
        else:
            _answer(page, {})
    wait_for_background()
    if not paused:
        page.goto(f"{live_server}/read/{sid}")
        paused = bool(page.locator("#paused").count())
    assert paused, "known-answer cases answered wrongly after 6 right, never paused"
    with Session(demo_engine) as session:
        # Only dr-reader: the steady two read every case and were never paused.
        [pause] = session.scalars(select(ReaderPause)).all()
        assert pause.user_id == reader.id and pause.cause == "accuracy"
    message = page.locator("#paused-message").inner_text().lower()
    assert "accura" not in message and "known" not in message
    # Nothing on the paused screen points at a case: no sequence, no image, no question.
    assert page.locator("#paused img, #paused [data-sequence], #paused .case-ref").count() == 0
    _shots(page, "reader-paused")
    # The admin sees why and resumes; the reader goes on where they stopped.
    desk = browser.new_context(viewport={"width": 1366, "height": 768}).new_page()
    log_in(desk, live_server, "chief", f"/studies/{sid}")
    expect(desk.locator(f"#paused-{reader.id} .pause-reason")).to_contain_text("change-point")
    desk.locator("#reader-checks").scroll_into_view_if_needed()
    _shots(desk, "reader-checks-study-page")
    desk.fill(f"#resume-{reader.id} input[name=note]", "spoke with the reader")
    with desk.expect_navigation():
        desk.click(f"#resume-{reader.id} button[type=submit]")
    expect(desk.locator("tr[data-reader=dr-reader] .saved")).to_have_text("Resumed")
    desk.goto(f"{live_server}/studies/{sid}/readers")
    expect(desk.locator(".reader-detail[data-reader=dr-reader] .fatigue")).to_be_visible()
    _shots(desk, "reader-checks-detail")
    page.goto(f"{live_server}/read/{sid}")
    expect(page.locator("#answer-form")).to_be_visible()
