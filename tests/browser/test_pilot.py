"""The paper's pilot, end to end in Chromium: a 100-case chest X-ray validation study (50 add,
50 remove, half judged pass and half fail, seed 42), two readers reading blinded with the
keyboard, then the lock; the judge's 2x2 is non-degenerate, so too strict and too lenient
are both estimated."""

import csv
import hashlib
import io
import re
from collections import Counter

import httpx
import pytest
from playwright.sync_api import Browser, Page, expect
from sqlalchemy.engine import Engine
from sqlmodel import Session

from app.accounts.users import issue_token
from app.models import Role
from app.studies.planner import plan_cases
from tests.accounts import add_user
from tests.browser.conftest import ARTIFACTS
from tests.browser.helpers import IMAGES_SHOWN, answer_with_keys, log_in
from tests.demo_counts import MODALITIES

CHEST_TASKS = MODALITIES["chest_xray"]

pytestmark = pytest.mark.browser
KEYBOARD_CASES = 3
ANSWER = {"compliance": "yes", "structure": "yes", "realism": "no", "fidelity": "yes",
          "overall": "reject", "confidence": "3"}


def create_pilot(admin: Page, base: str, reader_ids: list[int]) -> int:
    log_in(admin, base, "browser-admin", "/cases")
    admin.click('.facet[data-facet="modality"] a[data-value="chest_xray"]')
    expect(admin).to_have_url(re.compile(r"modality=chest_xray"))
    expect(admin.locator("#total")).to_have_text(str(CHEST_TASKS))
    admin.click("#new-study-from-filter")
    # The form's defaults: both verdicts, counts in proportion to the pool (here all of it),
    # so the figures are the data set's at no cost in reads.
    expect(admin.locator('input[name="design"][value="validation"]')).to_be_checked()
    expect(admin.locator("#strata-table tbody tr")).to_have_count(4)
    for row in admin.locator("#strata-table tbody tr").all():
        expect(row.locator('input[type="number"]')).to_have_value(row.locator(".pool").inner_text())
    expect(admin.locator("#allocation-cost")).to_contain_text("in proportion to the pool")
    # The paper's design instead, 25 per verdict x direction: the form says what it costs.
    for row in admin.locator("#strata-table tbody tr").all():
        row.locator('input[type="number"]').fill("25")
        row.locator('input[type="number"]').dispatch_event("change")
    expect(admin.locator("#allocation-cost")).to_contain_text("% more reads")
    expect(admin.locator('input[name="seed"]')).to_have_value("42")
    # 0.81 ± 0.05 planned, with the clustering the default sample of this pool would have
    # (all 268 of its edits, on 75 images).
    edits = float(admin.locator('input[name="plan_edits_per_image"]').input_value())
    assert 1 < edits < 8
    expect(admin.locator("#plan-cases strong")).to_have_text(
        str(plan_cases(0.81, 0.05, edits_per_image=edits).cases))
    expect(admin.locator('input[name="blinded"]')).to_be_checked()
    admin.fill('input[name="name"]', "Pilot: 100 chest X-ray edits")
    for reader_id in reader_ids:
        admin.check(f'input[name="readers"][value="{reader_id}"]')
    admin.click('#study-form button[type="submit"]')
    expect(admin).to_have_url(re.compile(r"/studies/\d+$"))
    return int(admin.url.rsplit("/", 1)[1])


def read_with_keyboard(browser: Browser, base: str, name: str, study_id: int) -> None:
    context = browser.new_context(viewport={"width": 1400, "height": 1000})
    page = context.new_page()
    log_in(page, base, name, "/read")
    page.click("#my-studies a.continue")
    for sequence in range(1, KEYBOARD_CASES + 1):
        expect(page).to_have_url(re.compile(rf"/read/{study_id}/{sequence}$"))
        expect(page.locator("#reader-progress")).to_have_text(f"{sequence - 1} of 100 done")
        page.wait_for_function(IMAGES_SHOWN)
        assert page.locator("#reveal").count() == 0  # blinded: nothing of the judge
        answer_with_keys(page)
        page.keyboard.press("Enter")
    expect(page).to_have_url(re.compile(rf"/read/{study_id}/{KEYBOARD_CASES + 1}$"))
    context.close()


def read_the_rest_by_api(engine: Engine, base: str, reader_id: int, name: str,
                         study_id: int, strata: dict[int, str], disputed: dict[int, bool]) -> str:
    """What is left, as a scripted client would send it: the same route as the form. The
    reader mostly agrees with the judge (whose verdict the test, not the reader, knows from
    the design export) and differs from it on about every fifth case, both ways: the same
    cases for both readers, since each reader's order is now drawn from a secret."""
    from app.accounts.users import find_user

    with Session(engine) as session:
        user = find_user(session, name)
        assert user is not None and user.id == reader_id
        token = issue_token(session=session, user=user)
    with httpx.Client(base_url=base, headers={"Authorization": f"Bearer {token}"}) as client:
        for sequence in range(KEYBOARD_CASES + 1, 101):
            judge_passed = strata[sequence].startswith("pass")
            accept = judge_passed != disputed[sequence]
            response = client.post(f"/read/{study_id}/{sequence}", data=ANSWER | {
                "overall": "accept" if accept else "reject",
                "submission_id": f"pilot-{name}-{sequence:03d}"})
            assert response.status_code == 303
    return token


def test_the_papers_pilot_end_to_end(browser: Browser, demo_engine: Engine,
                                     live_server: str) -> None:
    names = ["radiologist-1", "radiologist-2"]
    readers = [add_user(demo_engine, name, Role.reader) for name in names]
    admin = browser.new_context(viewport={"width": 1400, "height": 1000}).new_page()
    study_id = create_pilot(admin, live_server, [r.id or 0 for r in readers])
    # Readers wait until every image is drawn; the page says how far that is and updates.
    expect(admin.locator("#study-preparing")).to_have_count(0, timeout=90_000)
    for name in names:
        row = admin.locator(f'.reader-progress[data-reader="{name}"]')
        expect(row.locator(".done")).to_have_text("0")
        expect(row.locator("td.num").nth(1)).to_have_text("100")

    design = list(csv.DictReader(io.StringIO(
        admin.request.get(f"{live_server}/studies/{study_id}/design.csv").text())))
    tokens = []
    for reader, name in zip(readers, names, strict=True):
        read_with_keyboard(browser, live_server, name, study_id)
        own = [r for r in design if r["reader"] == name]
        strata = {int(r["sequence"]): r["stratum"] for r in own}
        disputed = {int(r["sequence"]): int(hashlib.sha256(r["task_key"].encode()).hexdigest(), 16)
                    % 5 == 0 for r in own}
        tokens.append(read_the_rest_by_api(demo_engine, live_server, reader.id or 0, name,
                                           study_id, strata, disputed))

    admin.reload()
    for name in names:
        expect(admin.locator(f'.reader-progress[data-reader="{name}"] .done')).to_have_text("100")
    admin.once("dialog", lambda dialog: dialog.accept())
    admin.click("#lock-form button")
    expect(admin.locator("#study-status")).to_have_text("locked")
    ARTIFACTS.mkdir(exist_ok=True)
    admin.screenshot(path=str(ARTIFACTS / "pilot-study-locked.png"), full_page=True)

    assert Counter((r["reader"], r["direction"]) for r in design) == {
        (n, d): 50 for n in names for d in ("add", "remove")}
    assert Counter(r["stratum"].split("/")[0] for r in design) == {"pass": 100, "fail": 100}
    assert {r["modality"] for r in design} == {"chest_xray"} and all(r["judge_verdict_id"] for r in design)
    answers = list(csv.DictReader(io.StringIO(
        admin.request.get(f"{live_server}/studies/{study_id}/answers.csv").text())))
    assert Counter(r["reader"] for r in answers) == {n: 100 for n in names}
    keyboard = [r for r in answers if int(r["sequence"]) <= KEYBOARD_CASES]
    assert len(keyboard) == 2 * KEYBOARD_CASES
    assert all(r["overall"] == "accept" and int(r["time_on_case_ms"]) > 0 for r in keyboard)
    # The full report of the pilot: every figure with its n and interval, and the exports.
    report = admin.request.get(f"{live_server}/studies/{study_id}/agreement.json").json()
    assert report["n_cases"] == 100 and report["readers"] == names
    overall = report["questions"]["overall"]["judge_vs_reference"]
    assert overall["n"] + overall["left_out"] == 100
    assert min(overall["table"].values()) > 0  # judge and readers both pass and fail
    for figure in ("agreement", "kappa", "a_stricter", "a_more_lenient"):
        assert overall[figure]["value"] is not None and overall[figure]["low"] is not None, figure
    assert report["intervals"]["resamples"] == 2000 and report["facts"]["design"]["kind"] == "validation"
    long_rows = admin.request.get(f"{live_server}/studies/{study_id}/answers-long.csv").text()
    assert len(long_rows.strip().splitlines()) == 1 + 200 * 5
    admin.goto(f"{live_server}/studies/{study_id}/report.html")
    expect(admin.locator("#n-cases")).to_have_text("100")
    admin.goto(f"{live_server}/studies/{study_id}/agreement")
    expect(admin.locator("#chart-agreement svg")).to_be_visible()
    admin.screenshot(path=str(ARTIFACTS / "pilot-agreement.png"), full_page=True)
    late = httpx.post(f"{live_server}/read/{study_id}/1", headers={"Authorization": f"Bearer {tokens[0]}"},
                      data=ANSWER | {"submission_id": "pilot-after-the-lock"})
    assert late.status_code == 409
