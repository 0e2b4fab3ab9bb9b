"""The checks on the readers through the web: the study page's table, a reader paused by a
drop in known-answer accuracy and resumed by the admin with nothing lost, and the exports."""

import csv
import io

import pytest
from bs4 import BeautifulSoup
from sqlalchemy.engine import Engine
from sqlmodel import Session, col, select

from app.background import wait_for_background
from app.settings import Settings
from app.studies.models import Assignment, Design, Draft
from app.studies.reader_models import ReaderPause
from tests.known_answers import settled_by_sequence
from tests.readers.test_figures_without_known import mark_edits
from tests.studies.conftest import StudySetup, make_study
from tests.web.routes.test_reading import as_user

RIGHT = {"compliance": "yes", "structure": "yes", "realism": "yes", "fidelity": "yes",
         "overall": "accept", "confidence": "4", "time_on_case_ms": "30000"}


def _known_sequences(engine: Engine, setup: StudySetup, reader: int) -> dict[int, dict[str, str]]:
    """The reader's known-answer reads: sequence -> settled answers."""
    return settled_by_sequence(engine, setup.study.id or 0, setup.readers[reader].id or 0)


def _wrong(settled: dict[str, str]) -> dict[str, str]:
    flip = {"yes": "no", "no": "yes", "accept": "reject", "reject": "accept"}
    return RIGHT | {q: flip[a] for q, a in settled.items()} | {
        q: "no" for q in ("compliance", "structure", "fidelity") if q not in settled}


def test_a_reader_whose_accuracy_drops_is_paused_and_resumed_with_nothing_lost(
        demo_engine: Engine, settings: Settings, monkeypatch: pytest.MonkeyPatch) -> None:
    # The pause holds one read after the test fires here (tests/readers/test_pause.py holds
    # the random delay): this small list could end before a longer one.
    monkeypatch.setattr("app.readers.pause.PAUSE_AFTER", (1, 1))
    mark_edits(demo_engine, 40)
    setup = make_study(demo_engine, design=Design.validation, known_share=0.5)
    sid = setup.study.id
    reader = as_user(demo_engine, settings, "reader-0")
    admin = as_user(demo_engine, settings, "study-admin")
    known = _known_sequences(demo_engine, setup, 0)
    assert len(known) == 16
    paused_at = None
    # Every read in the reader's order: the first 8 known-answer cases answered right (their
    # baseline), the rest wrong, the ordinary ones alike throughout, until the reader is
    # paused (a few reads after the test fires: the pause must not point at a case).
    known_order = sorted(known)
    for sequence in range(1, 33):
        page = reader.get(f"/read/{sid}/{sequence}")
        if BeautifulSoup(page.text, "html.parser").select_one("#paused"):
            paused_at = sequence
            break
        count = known_order.index(sequence) if sequence in known else -1
        form = (_wrong(known[sequence]) if count >= 8 else RIGHT | known[sequence]) if count >= 0 else RIGHT
        response = reader.post(f"/read/{sid}/{sequence}",
                               data=form | {"submission_id": f"drop-{sequence:04d}-xx"},
                               follow_redirects=False)
        assert response.status_code == 303
        wait_for_background()
    assert paused_at is not None, "known-answer cases answered wrongly after 8 right, never paused"
    # The reader is told in neutral words: nothing about accuracy, known answers or a test.
    screen = BeautifulSoup(reader.get(f"/read/{sid}").text, "html.parser")
    message = screen.select_one("#paused-message")
    assert message is not None
    assert not any(w in message.text.lower() for w in ("accura", "known", "wrong", "test", "cusum"))
    # An answer sent while paused is not stored, but kept as the read's draft.
    refused = reader.post(f"/read/{sid}/{paused_at}",
                          data=RIGHT | {"comment": "typed while paused",
                                        "submission_id": "drop-paused-xx"})
    assert refused.status_code == 409
    with Session(demo_engine) as session:
        read = session.scalars(select(Assignment).where(
            col(Assignment.study_id) == sid, col(Assignment.user_id) == setup.readers[0].id,
            col(Assignment.sequence) == paused_at)).one()
        draft = session.get(Draft, read.id)
        assert draft is not None and "typed while paused" in draft.payload
        [pause] = session.scalars(select(ReaderPause)).all()
    assert pause.cause == "accuracy" and "Known-answer accuracy fell" in pause.reason
    # Their list says so, in the same neutral word.
    listed = BeautifulSoup(reader.get("/read").text, "html.parser")
    mark = listed.select_one(f'a.paused[data-study="{sid}"]')
    assert mark is not None and mark.text == "Paused"
    # The admin sees why, and resumes.
    study_page = BeautifulSoup(admin.get(f"/studies/{sid}").text, "html.parser")
    row = study_page.select_one(f"#paused-{setup.readers[0].id} .pause-reason")
    assert row is not None and "change-point" in row.text
    resumed = admin.post(f"/studies/{sid}/readers/{setup.readers[0].id}/resume",
                         data={"note": "talked it through"}, follow_redirects=False)
    assert resumed.status_code == 303
    # They go on with their first open case, in their order; the one they were typing when
    # paused still holds what they typed.
    first_open = paused_at  # every read before it answered
    going_on = reader.get(f"/read/{sid}", follow_redirects=False)
    assert going_on.headers["location"] == f"/read/{sid}/{first_open}"
    again = BeautifulSoup(reader.get(f"/read/{sid}/{paused_at}").text, "html.parser")
    comment = again.select_one("textarea[name=comment]")
    assert comment is not None and "typed while paused" in comment.text
    # Resuming twice is a 409, not a second record.
    assert admin.post(f"/studies/{sid}/readers/{setup.readers[0].id}/resume").status_code == 409


def test_a_steady_reader_is_not_paused_and_the_table_shows_each_reader(
        demo_engine: Engine, settings: Settings) -> None:
    mark_edits(demo_engine, 40)
    setup = make_study(demo_engine, design=Design.validation, known_share=1 / 3)
    sid = setup.study.id
    for index in (0, 1):
        reader = as_user(demo_engine, settings, f"reader-{index}")
        known = _known_sequences(demo_engine, setup, index)
        for sequence in range(1, 25):
            settled = known.get(sequence)
            form = RIGHT | (settled or {})
            assert reader.post(f"/read/{sid}/{sequence}",
                               data=form | {"submission_id": f"steady-{index}-{sequence:04d}"},
                               follow_redirects=False).status_code == 303
    wait_for_background()
    admin = as_user(demo_engine, settings, "study-admin")
    page = BeautifulSoup(admin.get(f"/studies/{sid}").text, "html.parser")
    rows = page.select("#reader-checks-table tbody tr[data-reader]")
    assert [r["data-reader"] for r in rows] == ["reader-0", "reader-1"]
    cell = page.select_one(f"#known-{setup.readers[0].id}")
    assert cell is not None and cell.text.startswith("16/16")  # 8 cases, 2 settled answers each
    assert not page.select(".paused-reader")
    # 8 known-answer cases a reader, 2 readers: what the pause can see is said beside it.
    outlook = page.select_one("#pause-outlook")
    assert outlook is not None and "8 known-answer cases" in outlook.text
    assert "too few to expect a pause" in outlook.text or "can pause nobody" in outlook.text
    # In the report too: the agreement page and the one-file report.
    report = BeautifulSoup(admin.get(f"/studies/{sid}/agreement").text, "html.parser")
    assert len(report.select("#reader-checks-table tbody tr[data-reader]")) == 2
    assert not report.select("#reader-checks form")  # the report resumes nobody
    one_file = BeautifulSoup(admin.get(f"/studies/{sid}/report.html").text, "html.parser")
    assert len(one_file.select("#reader-checks tbody tr")) == 2
    detail = BeautifulSoup(admin.get(f"/studies/{sid}/readers").text, "html.parser")
    assert len(detail.select(".reader-detail")) == 2
    assert detail.select_one(".reader-detail .by-question tr[data-question=overall]") is not None
    # The exports: one row per reader; the known-answer reads apart from answers.csv.
    readers_csv = list(csv.DictReader(io.StringIO(admin.get(f"/studies/{sid}/readers.csv").text)))
    assert [r["reader"] for r in readers_csv] == ["reader-0", "reader-1"]
    assert readers_csv[0]["known_right"] == "16" and readers_csv[0]["paused_now"] == "no"
    assert float(readers_csv[0]["known_low"]) < 1 == float(readers_csv[0]["known_high"])
    answers = list(csv.DictReader(io.StringIO(admin.get(f"/studies/{sid}/answers.csv").text)))
    known = list(csv.DictReader(io.StringIO(admin.get(f"/studies/{sid}/known-answers.csv").text)))
    assert len(answers) == 32 and len(known) == 16
    assert {r["item"] for r in answers}.isdisjoint({r["item"] for r in known})
    assert all(r["settled_answers"].startswith("{") for r in known)


def _study_form(setup: StudySetup, **extra: str) -> dict[str, object]:
    return {"name": "checked", "design": "accepted", "facets": ["direction"], "n:add": "2",
            "n:remove": "2", "readers": [str(setup.readers[0].id)], "seed": "3", **extra}


def test_bad_reader_check_settings_are_422_beside_their_fields_and_keep_what_was_typed(
        demo_engine: Engine, settings: Settings) -> None:
    mark_edits(demo_engine, 40)
    setup = make_study(demo_engine)
    admin = as_user(demo_engine, settings, "study-admin")
    too_much = admin.post("/studies", data=_study_form(setup, known_share="60"))
    assert too_much.status_code == 422
    page = BeautifulSoup(too_much.text, "html.parser")
    error = page.select_one("#error-known_share")
    assert error is not None and "50%" in error.text
    assert page.select_one('input[name="known_share"]')["value"] == "60"
    # A threshold outside 0-1, against a real practice study.
    from app.studies.practice import create_practice

    with Session(demo_engine) as session:
        practice = create_practice(session, name="warm", cases=4, reader_ids=[setup.readers[1].id or 0],
                                   created_by=setup.admin)
    bad_bar = admin.post("/studies", data=_study_form(
        setup, qualify_practice=str(practice.id), qualify_threshold="1.5", qualify_cases="4"))
    assert bad_bar.status_code == 422
    page = BeautifulSoup(bad_bar.text, "html.parser")
    error = page.select_one("#error-qualify_threshold")
    assert error is not None and "between 0 and 1" in error.text
    assert page.select_one('input[name="qualify_threshold"]')["value"] == "1.5"
    # An empty practice set: no case asked, or more than the pool holds.
    for cases, words in (("0", "between 1"), ("400", "usable here")):
        empty = admin.post("/studies/practice", data={
            "name": "nothing", "cases": cases, "readers": [str(setup.readers[0].id)]})
        assert empty.status_code == 422
        page = BeautifulSoup(empty.text, "html.parser")
        error = page.select_one("#error-cases")
        assert error is not None and words in error.text
        assert page.select_one('input[name="cases"]')["value"] == cases
    with Session(demo_engine) as session:
        from app.studies.models import Study
        made = session.scalars(select(Study).where(col(Study.name).in_(["checked", "nothing"])))
        assert made.first() is None


def test_only_a_known_answer_read_schedules_a_check(demo_engine: Engine, settings: Settings,
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    """An ordinary answer cannot move the pause's test: it costs no check (issue 54: at 50
    readers, checks after every answer were most of the server's CPU)."""
    from app.web.routes import reading

    scheduled: list[int] = []
    monkeypatch.setattr(reading, "run_coalesced",
                        lambda key, *args: scheduled.append(key[2]))
    mark_edits(demo_engine, 40)
    setup = make_study(demo_engine, design=Design.validation, known_share=1 / 3)
    known = _known_sequences(demo_engine, setup, 0)
    # Past the reader's first known-answer case and an ordinary one: the list's order is the
    # study's own random draw, and the first six once held no known-answer case.
    ordinary = [s for s in range(1, 100) if s not in known]
    last = max(6, min(known), ordinary[0])
    reader = as_user(demo_engine, settings, "reader-0")
    for sequence in range(1, last + 1):
        assert reader.post(f"/read/{setup.study.id}/{sequence}",
                           data=RIGHT | known.get(sequence, {}) | {
                               "submission_id": f"once-{sequence:04d}"},
                           follow_redirects=False).status_code == 303
    assert 0 < len(scheduled) < last
    assert len(scheduled) == sum(1 for s in range(1, last + 1) if s in known)
    assert all(uid == setup.readers[0].id for uid in scheduled)


def test_checks_switched_off_schedule_nothing(demo_engine: Engine, settings: Settings,
                                              monkeypatch: pytest.MonkeyPatch) -> None:
    """MEDBANANA_READER_CHECKS=false (to measure what the checks cost): no check at all."""
    from app.web.routes import reading

    scheduled: list[int] = []
    monkeypatch.setattr(reading, "run_coalesced", lambda key, *args: scheduled.append(key[2]))
    mark_edits(demo_engine, 40)
    setup = make_study(demo_engine, design=Design.validation, known_share=1 / 3)
    known = _known_sequences(demo_engine, setup, 0)
    reader = as_user(demo_engine, settings.model_copy(update={"reader_checks": False}), "reader-0")
    for sequence in range(1, 7):
        assert reader.post(f"/read/{setup.study.id}/{sequence}",
                           data=RIGHT | known.get(sequence, {}) | {
                               "submission_id": f"off-{sequence:04d}"},
                           follow_redirects=False).status_code == 303
    assert known and scheduled == []
