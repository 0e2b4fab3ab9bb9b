"""A study's instructions and image tools: set by the admin until the first answer, then
frozen; a withheld tool is neither shown nor served, and tool use is recorded and exported."""

import csv
import io
import json

import pytest
from bs4 import BeautifulSoup
from sqlalchemy.engine import Engine
from sqlmodel import Session, select

from app.models import Role
from app.settings import Settings
from app.studies.models import Answer, Study
from tests.studies.conftest import StudySetup, make_study
from tests.web.routes.test_reading import FORM, as_user


@pytest.fixture
def study(demo_engine: Engine) -> StudySetup:
    return make_study(demo_engine)


def test_the_admin_sets_instructions_and_tools_until_the_first_answer(
        demo_engine: Engine, settings: Settings, study: StudySetup) -> None:
    admin = as_user(demo_engine, settings, "study-admin", Role.admin)
    sid = study.study.id
    page = BeautifulSoup(admin.get(f"/studies/{sid}").text, "html.parser")
    assert {i["value"] for i in page.select("#setup-form input[name=viewer_tools][checked]")} == {
        "window", "flicker", "swipe", "difference"}
    assert "Instruction compliance" in page.select_one("#study-rubric").text

    saved = admin.post(f"/studies/{sid}/setup", data={"instructions": "  Read on a calibrated monitor.\r\n",
                                                      "viewer_tools": ["window"]}, follow_redirects=False)
    assert saved.status_code == 303
    # "Save instructions and tools" gave no confirmation: the page it leads to says so.
    shown = BeautifulSoup(admin.get(saved.headers["location"]).text, "html.parser")
    assert "Saved" in shown.select_one("#setup-saved[role=status]").text
    assert page.select_one("#setup-saved") is None
    with Session(demo_engine) as s:
        stored = s.get(Study, sid)
        assert stored is not None
        assert stored.instructions == "Read on a calibrated monitor." and stored.viewer_tools == '["window"]'

    bad = admin.post(f"/studies/{sid}/setup", data={"instructions": "Kept as typed",
                                                    "viewer_tools": ["x-ray vision"]})
    assert bad.status_code == 422
    page = BeautifulSoup(bad.text, "html.parser")
    assert "choose one of" in page.select_one("#field-viewer_tools #error-viewer_tools").text
    assert page.select_one("#setup-form textarea[name=instructions]").text == "Kept as typed"

    reader = as_user(demo_engine, settings, "reader-0")
    screen = BeautifulSoup(reader.get(f"/read/{sid}/1").text, "html.parser")
    assert screen.select_one("#viewer")["data-tools"] == "window"
    assert not screen.select('[data-action="flicker"], [data-swipe], [data-diff], .viewport[data-diff]')
    assert screen.select_one("#study-instructions .prose").text == "Read on a calibrated monitor."
    uid = screen.select_one("#img-edit")["src"].split("/")[4]
    assert reader.get(f"/read/{sid}/diff/{uid}").status_code == 403

    # A tool the study withholds is not recorded (a draft from before the change may hold it).
    used = json.dumps({"window": {"uses": 2, "ms": 4100}, "flicker": {"uses": 1, "ms": 300}})
    assert reader.post(f"/read/{sid}/1", data=FORM | {"submission_id": "sub-tools-0002", "tool_use": used},
                       follow_redirects=False).status_code == 303
    with Session(demo_engine) as s:
        [answer] = s.exec(select(Answer)).all()
        assert json.loads(answer.tool_use or "") == {"window": {"uses": 2, "ms": 4100}}

    frozen = admin.post(f"/studies/{sid}/setup", data={"instructions": "changed", "viewer_tools": ["window"]})
    assert frozen.status_code == 409
    page = BeautifulSoup(admin.get(f"/studies/{sid}").text, "html.parser")
    assert page.select_one("#setup-form") is None
    assert page.select_one("#study-instructions").text == "Read on a calibrated monitor."

    rows = list(csv.DictReader(io.StringIO(admin.get(f"/studies/{sid}/answers-long.csv").text)))
    assert rows and all(r["window_uses"] == "2" and r["window_ms"] == "4100" and r["flicker_uses"] == "0"
                        for r in rows)


def test_tool_use_records_are_checked(demo_engine: Engine, settings: Settings, study: StudySetup) -> None:
    reader = as_user(demo_engine, settings, "reader-0")
    sid = study.study.id
    for n, bad in enumerate(("not json", "[1]", '{"flicker": {"uses": -1, "ms": 3}}',
                             '{"flicker": {"uses": 1, "ms": 2.5}}', '{"flicker": {"uses": 1}}',
                             '{"zoom": {"uses": 1, "ms": 1}}', "[" * 990 + "]" * 990)):
        answer = reader.post(f"/read/{sid}/1", data=FORM | {"submission_id": f"sub-bad-tool-{n:04d}",
                                                            "tool_use": bad})
        assert answer.status_code == 422, bad
    with Session(demo_engine) as s:
        assert s.exec(select(Answer)).all() == []


def test_the_report_prints_the_rubric_the_instructions_the_tools_and_certification(
        demo_engine: Engine, settings: Settings, study: StudySetup) -> None:
    from app.accounts.users import describe_user
    from app.models import User
    from pipeline.rubric import rubric

    admin = as_user(demo_engine, settings, "study-admin", Role.admin)
    sid = study.study.id
    admin.post(f"/studies/{sid}/setup", data={"instructions": "Use the reading room monitor.",
                                              "viewer_tools": ["window", "swipe"]})
    with Session(demo_engine) as s:
        reader = s.exec(select(User).where(User.name == "reader-0")).one()
        describe_user(session=s, user=reader, qualification="radiologist", experience_years=9,
                      board_certified=True)
    page = BeautifulSoup(admin.get(f"/studies/{sid}/report.html").text, "html.parser")
    assert page.select_one("#report-instructions").text == "Use the reading room monitor."
    tools = page.select_one("#report-tools").text
    assert "Swipe" in tools and "Flicker" not in tools
    document = page.select_one("#rubric").text
    assert all(q.definition in document for q in rubric().values())
    row = next(r for r in page.select("#reader-table tbody tr") if r.select_one("td").text == "reader-0")
    assert [td.text for td in row.select("td")[1:4]] == ["radiologist", "9", "yes"]



def test_a_draft_with_a_bad_tool_record_is_refused_when_saved(
        demo_engine: Engine, settings: Settings, study: StudySetup) -> None:
    reader = as_user(demo_engine, settings, "reader-0")
    sid = study.study.id
    bad = reader.put(f"/read/{sid}/1/draft", json={"tool_use": '{"flicker": {"uses": "many", "ms": 1}}'})
    assert bad.status_code == 422
    good = reader.put(f"/read/{sid}/1/draft", json={"tool_use": '{"flicker": {"uses": 2, "ms": 900}}'})
    assert good.status_code == 204
    page = BeautifulSoup(reader.get(f"/read/{sid}/1").text, "html.parser")
    assert json.loads(page.select_one("#tool-use-input")["value"]) == {"flicker": {"uses": 2, "ms": 900}}
