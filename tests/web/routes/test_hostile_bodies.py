"""Every form and JSON body the reading, study and job routes accept, sent hostile, on SQLite
and on PostgreSQL: a 4xx with a reason, never a 500, nothing stored, and the pages that show
the stored values still open."""

import json
from pathlib import Path

import pytest
from bs4 import BeautifulSoup
from fastapi.testclient import TestClient
from sqlalchemy.engine import Engine
from sqlmodel import Session, select

from app.models import Role
from app.studies.models import Answer, Draft, Study
from app.web.main import create_app
from tests.config import server_settings
from tests.studies.conftest import StudySetup, make_study

ANSWER = {"compliance": "yes", "structure": "no", "realism": "yes", "fidelity": "cannot_assess",
          "overall": "reject", "confidence": "3", "comment": "ok", "time_on_case_ms": "4200",
          "submission_id": "sub-hostile-001"}
DEEP = "[" * 20_000 + "]" * 20_000


@pytest.fixture
def setup(engine_of: Engine) -> StudySetup:
    return make_study(engine_of)


def as_user(engine: Engine, tmp_path: Path, name: str) -> TestClient:
    from app.accounts.users import find_user, issue_token

    with Session(engine) as session:
        user = find_user(session, name)
        assert user is not None
        token = issue_token(session=session, user=user)
    app = create_app(server_settings(tmp_path / "var", worker=False), engine)
    return TestClient(app, headers={"Authorization": f"Bearer {token}"},
                      raise_server_exceptions=False)


@pytest.mark.parametrize("body", [
    '{"tags": 5}', "null", "[]", '"text"', '{"comment": "\\ud800"}', '{"elapsed_ms": NaN}',
    '{"comment": "a\\u0000b"}', json.dumps({"roi": DEEP}), '{"roi": "{\\"kind\\": 1}"}',
    '{"confidence": 9}', '{"tags": ["not_a_tag"]}', '{"unknown": 1}',
    '{"overall": null, "x": [' + DEEP + "]}",
    '{"elapsed_ms": 1e400}', '{"submission_id": 123}',
])
def test_hostile_drafts_are_refused_and_the_screen_still_opens(
        engine_of: Engine, setup: StudySetup, tmp_path: Path, body: str) -> None:
    reader = as_user(engine_of, tmp_path, "reader-0")
    sid = setup.study.id
    response = reader.put(f"/read/{sid}/1/draft", content=body,
                          headers={"Content-Type": "application/json"})
    assert 400 <= response.status_code < 500, (body[:40], response.status_code, response.text[:200])
    with Session(engine_of) as s:
        assert s.exec(select(Draft)).all() == []
    assert reader.get(f"/read/{sid}/1").status_code == 200


def test_a_good_draft_round_trips(engine_of: Engine, setup: StudySetup, tmp_path: Path) -> None:
    reader = as_user(engine_of, tmp_path, "reader-0")
    sid = setup.study.id
    draft = {"compliance": "no", "confidence": "4", "tags": ["too_subtle"], "comment": "héllo 🫁",
             "elapsed_ms": 1200, "submission_id": "sub-draft-0001", "roi": ""}
    assert reader.put(f"/read/{sid}/1/draft", json=draft).status_code == 204

    page = BeautifulSoup(reader.get(f"/read/{sid}/1").text, "html.parser")
    assert page.select_one("input[name=compliance][value=no]").has_attr("checked")
    assert page.select_one("textarea[name=comment]").get_text() == "héllo 🫁"


def test_a_draft_stored_before_validation_is_set_aside(engine_of: Engine, setup: StudySetup,
                                                        tmp_path: Path) -> None:
    from app.studies.worklist import get_assignment

    with Session(engine_of) as s:
        assignment = get_assignment(s, setup.study, setup.readers[0], 1)
        s.add(Draft(assignment_id=assignment.id or 0, payload='{"tags": 5}'))
        s.commit()
    reader = as_user(engine_of, tmp_path, "reader-0")
    assert reader.get(f"/read/{setup.study.id}/1").status_code == 200


@pytest.mark.parametrize("change", [
    {"roi": DEEP}, {"roi": json.dumps({"kind": "freehand", "points": [[0.1, 0.1], [0.2, 0.2], [0.3, 0.3]]})},
    {"roi": json.dumps({"kind": "freehand", "points": [[0.1, 0.1], [0.1, 0.1], [0.1, 0.1]]})},
    {"comment": "a\x00b"}, {"confidence": str(2**70)},
    {"time_on_case_ms": str(2**70)}, {"submission_id": "a" * 100},
])
def test_hostile_answers_are_refused(engine_of: Engine, setup: StudySetup, tmp_path: Path,
                                     change: dict[str, str]) -> None:
    reader = as_user(engine_of, tmp_path, "reader-0")
    response = reader.post(f"/read/{setup.study.id}/1", data=ANSWER | change)
    assert 400 <= response.status_code < 500, (change, response.status_code)
    with Session(engine_of) as s:
        assert s.exec(select(Answer)).all() == []


def test_a_surrogate_in_a_form_is_stored_as_valid_text(engine_of: Engine, setup: StudySetup,
                                                       tmp_path: Path) -> None:
    """A form decodes bytes that are not UTF-8 (an encoded lone surrogate) as U+FFFD."""
    reader = as_user(engine_of, tmp_path, "reader-0")
    body = "&".join(f"{k}={v}" for k, v in ANSWER.items() if k != "comment") + "&comment=%ED%A0%80"
    response = reader.post(f"/read/{setup.study.id}/1", content=body,
                           headers={"Content-Type": "application/x-www-form-urlencoded"},
                           follow_redirects=False)
    assert response.status_code in (303, 422)
    with Session(engine_of) as s:
        for answer in s.exec(select(Answer)).all():
            answer.comment.encode("utf-8")
    assert reader.get(f"/read/{setup.study.id}/1").status_code == 200


@pytest.mark.parametrize("change", [
    {"readers": [str(2**70)]}, {"readers": ["-1"]}, {"name": "a\x00b"}, {"seed": str(2**70)},
    {"total": str(2**70)}, {"n:add": str(2**70)},
])
def test_hostile_study_forms_are_refused(engine_of: Engine, setup: StudySetup, tmp_path: Path,
                                         change: dict[str, object]) -> None:
    admin = as_user(engine_of, tmp_path, "study-admin")
    form: dict[str, object] = {"name": "second", "design": "accepted", "facets": ["direction"],
                               "n:add": "2", "n:remove": "2",
                               "readers": [str(r.id) for r in setup.readers]} | change
    response = admin.post("/studies?modality=chest_xray&outcome=success", data=form)
    assert 400 <= response.status_code < 500, (change, response.status_code)
    with Session(engine_of) as s:
        assert len(s.exec(select(Study)).all()) == 1


def test_a_reader_chosen_twice_is_refused_and_the_form_kept(engine_of: Engine, setup: StudySetup,
                                                            tmp_path: Path) -> None:

    admin = as_user(engine_of, tmp_path, "study-admin")
    rid = str(setup.readers[0].id)
    form = {"name": "twice", "design": "accepted", "facets": ["direction"], "n:add": "2",
            "n:remove": "2", "readers": [rid, rid]}
    response = admin.post("/studies?modality=chest_xray&outcome=success", data=form)
    assert response.status_code == 422
    page = BeautifulSoup(response.text, "html.parser")
    assert "more than once" in page.get_text()
    assert page.select_one("input[name=name]")["value"] == "twice"


def test_hostile_job_forms_are_refused(engine_of: Engine, setup: StudySetup, tmp_path: Path) -> None:
    admin = as_user(engine_of, tmp_path, "study-admin")
    for form in ({"task": [str(2**70)]}, {"task": ["0"]}, {"task": ["1"], "rounds": str(2**70)}):
        response = admin.post("/jobs", data=form)
        assert response.status_code == 422, (form, response.status_code)


@pytest.mark.parametrize("big", [2**31, 2**40, 2**63 - 1, 2**63, 2**70])
def test_ids_past_what_a_key_holds_are_422_on_both_engines(
        engine_of: Engine, setup: StudySetup, tmp_path: Path, big: int) -> None:
    # PostgreSQL's keys are 32-bit: from 2**31 on they were a 500 there (and the next
    # request on that connection was reset), a 404 on SQLite.
    study = setup.study.id
    admin = as_user(engine_of, tmp_path, "study-admin")
    for url in (f"/studies/{big}", f"/studies/{big}/agreement", f"/read/{big}/1",
                f"/jobs/{big}", f"/adjudicate/{big}", f"/judges/{big}"):
        assert admin.get(url).status_code == 422, url
    reader = as_user(engine_of, tmp_path, "reader-0")
    assert reader.get(f"/read/{study}/{big}").status_code == 422
    assert reader.post(f"/read/{study}/{big}", data=ANSWER).status_code == 422
    assert reader.get(f"/read/{study}/1").status_code == 200  # the connection is fine after
    added = admin.post("/judges", data={"name": "big", "backend": "offline", "model": "m",
                                        "template": "{{ instruction }}", "repeats": "1",
                                        "thinking_budget": str(big)})
    assert added.status_code == 422
    page = BeautifulSoup(added.text, "html.parser")
    assert page.select_one("input[name=name]")["value"] == "big"  # the form keeps what was typed


def test_role_of_the_reader_is_kept(engine_of: Engine, setup: StudySetup) -> None:
    assert setup.readers[0].role == Role.reader


def test_a_json_route_s_errors_are_json_whatever_the_accept_header(
        engine_of: Engine, setup: StudySetup, tmp_path: Path) -> None:
    admin = as_user(engine_of, tmp_path, "study-admin")
    for url, status in ((f"/studies/{2**31}/agreement.json", 422),
                        ("/studies/999999/agreement.json", 404),
                        ("/studies/999999/real-or-edited.json", 404)):
        answer = admin.get(url, headers={"Accept": "text/html"})
        assert answer.status_code == status, url
        assert answer.headers["content-type"].startswith("application/json"), url
        assert answer.json()["status"] == status and answer.json()["detail"]
