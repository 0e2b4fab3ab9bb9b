"""The judge observatory in Chromium: a candidate made through the form, scored as a job, and
the leaderboard read, keyboard-reachable and without page errors at common widths."""

import os
import re
from pathlib import Path

from sqlalchemy.engine import Engine

from app.jobs import claim, make_backend, run_job
from app.settings import Settings
from pipeline.loop import RetryPolicy
from tests import aio
from tests.reference_study import Reference

WIDTHS = (1024, 1280, 1366, 1920)


def test_make_score_and_read_a_candidate(page, live_server: str, demo_engine: Engine,  # type: ignore[no-untyped-def]
                                         settings: Settings, reference: Reference,
                                         tmp_path: Path) -> None:
    errors: list[str] = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.goto(f"{live_server}/judges")
    assert page.locator("#template-same").is_visible()
    template = page.locator("textarea[name=template]")
    template.fill(template.input_value() + "\nAnswer in one sentence.")
    template.press("End")  # a key, so the diff is redrawn as it would be while typing
    page.locator("#template-diff .diff-added", has_text="Answer in one sentence.").wait_for()
    assert page.locator("#template-hash").inner_text() != page.locator(
        "#template-diff-box p code").nth(1).inner_text()
    page.fill("input[name=name]", "strict judge")
    page.select_option("select[name=bias]", "strict")
    page.click("#add-candidate")
    page.wait_for_url(re.compile(r"/judges/\d+$"))
    assert page.locator("#candidate-version").inner_text().strip() != ""
    page.locator(f'#outlooks tr[data-study-id="{reference.study_id}"] button.score').click()
    page.wait_for_url(re.compile(r"/jobs/\d+$"))
    lease = claim(demo_engine)
    assert lease is not None
    aio.run(run_job(demo_engine, lease, lambda o: make_backend(o, settings), tmp_path,
                    policy=RetryPolicy(attempts=1, base_seconds=0.0)))
    page.goto(f"{live_server}/judges/leaderboard?study={reference.study_id}")
    rows = page.locator("#leaderboard tbody tr")
    assert rows.count() == 2
    assert page.locator('#leaderboard tr[data-judge="strict judge"] td.too-strict').inner_text() != ""
    forest = page.locator("#leaderboard-forest svg")
    assert forest.is_visible()
    record = forest.locator("text", has_text="judge of record · n=")
    assert record.count() == 1 and "font-weight: 700" in (record.get_attribute("style") or "")
    assert forest.locator("text", has_text="strict judge · n=").count() == 1
    shots = Path(os.environ.get("MEDBANANA_SCREENSHOTS", tmp_path))
    for width in WIDTHS:
        page.set_viewport_size({"width": width, "height": 900})
        page.screenshot(path=str(shots / f"judges-leaderboard-{width}.png"), full_page=True)
    # On paper the chart is inverted with its hues kept: dark text and lines on white.
    page.emulate_media(media="print")
    assert "invert(1)" in forest.evaluate("e => getComputedStyle(e).filter")
    assert page.evaluate("getComputedStyle(document.body).backgroundColor") == "rgb(255, 255, 255)"
    page.screenshot(path=str(shots / "judges-leaderboard-print.png"), full_page=True)
    page.emulate_media(media="screen")
    page.goto(f"{live_server}/judges")
    page.set_viewport_size({"width": 1366, "height": 900})
    page.screenshot(path=str(shots / "judges-index-1366.png"), full_page=True)
    assert errors == []


def _work(engine: Engine, settings: Settings, tmp_path: Path) -> None:
    """What the server's worker does (tests run without one): the queued jobs, to their end."""
    while (lease := claim(engine)) is not None:
        aio.run(run_job(engine, lease, lambda o: make_backend(o, settings), tmp_path,
                        policy=RetryPolicy(attempts=1, base_seconds=0.0)))


def test_the_whole_loop(page, live_server: str, demo_engine: Engine,  # type: ignore[no-untyped-def]
                        settings: Settings, tmp_path: Path) -> None:
    """Two candidates made and scored, one promoted, the edits the readers rejected and the
    judge accepted regenerated with it, and the follow-up study opened: offline, no key."""
    from tests.judges.test_targets import _study_whose_readers_reject_some_accepted_edits

    study = _study_whose_readers_reject_some_accepted_edits(demo_engine)
    errors: list[str] = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.on("dialog", lambda dialog: dialog.accept())
    made = {}
    for name, bias in (("strict one", "strict"), ("lenient one", "lenient")):
        page.goto(f"{live_server}/judges")
        page.fill("input[name=name]", name)
        page.select_option("select[name=bias]", bias)
        page.click("#add-candidate")
        page.wait_for_url(re.compile(r"/judges/\d+$"))
        made[name] = page.url
        page.locator(f'#outlooks tr[data-study-id="{study}"] button.score').click()
        page.wait_for_url(re.compile(r"/jobs/\d+$"))
        _work(demo_engine, settings, tmp_path)
    page.goto(made["strict one"])
    page.click("#promote")
    page.locator("#is-promoted").wait_for()
    page.goto(f"{live_server}/judges/leaderboard?study={study}")
    assert page.locator("#leaderboard tbody tr").count() == 3
    page.locator("#regenerate-let-through button").click()
    page.wait_for_url(re.compile(r"/jobs/\d+$"))
    assert page.locator("#job-judge").get_attribute("href") == made["strict one"].replace(live_server, "")
    assert page.locator("#job-judge").inner_text() == "strict one (promoted)"
    _work(demo_engine, settings, tmp_path)
    page.reload()
    page.locator("#make-follow-up").click()
    page.wait_for_url(re.compile(r"/studies/\d+$"))
    page.goto(page.url + "/agreement")
    page.locator("#before-after").wait_for()
    assert page.locator("#before-after-waiting").is_visible()
    assert errors == []


def test_a_sentinel_set_watched_for_drift(page, live_server: str, demo_engine: Engine,  # type: ignore[no-untyped-def]
                                          settings: Settings, reference: Reference,
                                          tmp_path: Path) -> None:
    """A sentinel set drawn through the form from two locked studies, the judge of record
    asked again on it, and a schedule set, each visible on its leaderboard."""
    from tests.reference_study import second_study

    other = second_study(demo_engine, reference)
    errors: list[str] = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.goto(f"{live_server}/judges")
    page.fill("input[name=sentinel_name]", "monthly watch")
    page.check(f'#field-studies input[value="{reference.study_id}"]')
    page.check(f'#field-studies input[value="{other}"]')
    page.fill("input[name=per_study]", "5")
    shots = Path(os.environ.get("MEDBANANA_SCREENSHOTS", tmp_path))
    page.set_viewport_size({"width": 1366, "height": 900})
    page.locator("#new-sentinel").screenshot(path=str(shots / "judges-new-sentinel-1366.png"))
    page.click("#add-sentinel")
    page.wait_for_url(re.compile(r"/judges/leaderboard\?sentinel=\d+$"))
    board = page.url
    assert page.locator("#leaderboard tbody tr").count() == 1  # the judge of record alone
    page.click("#check-drift")
    page.wait_for_url(re.compile(r"/jobs/\d+$"))
    _work(demo_engine, settings, tmp_path)
    page.goto(board)
    assert page.locator("#drift-checks tbody tr").count() == 1
    page.fill('#drift-schedule input[name=every_hours]', "168")
    page.click("#set-schedule")
    page.locator("#schedule-state", has_text="every 168 hours").wait_for()
    for width in WIDTHS:
        page.set_viewport_size({"width": width, "height": 900})
        page.screenshot(path=str(shots / f"judges-sentinel-{width}.png"), full_page=True)
    page.click("#stop-schedule")
    page.locator("#set-schedule", has_text="Check on a schedule").wait_for()
    assert errors == []
