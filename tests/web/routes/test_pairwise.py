"""A pairwise study through the web: made from its own form (kept when refused), read with
sides drawn per read and recorded, its answers checked, and its figures page."""

import io
import json
import secrets
import zipfile
from pathlib import Path

from bs4 import BeautifulSoup
from sqlalchemy.engine import Engine
from sqlmodel import Session, col, select

from app.background import wait_for_background
from app.models import Role, Task, User
from app.settings import Settings
from app.studies.models import Assignment, PairAnswer, Study, StudyItem, StudyPair
from tests.accounts import add_user
from tests.regeneration import regenerate_offline
from tests.web.routes.test_accounts import as_user, client_for


def soup(text: str) -> BeautifulSoup:
    return BeautifulSoup(text, "html.parser")


def reader_ids(engine: Engine, names: list[str]) -> list[int]:
    with Session(engine) as session:
        return [session.exec(select(User).where(User.name == n)).one().id or 0 for n in names]


def test_a_pairwise_study_made_read_and_counted(demo_engine: Engine, settings: Settings) -> None:
    admin = client_for(demo_engine, settings, "chief", Role.admin)
    readers = {n: client_for(demo_engine, settings, n, Role.reader) for n in ("dr-a", "dr-b")}
    ids = reader_ids(demo_engine, list(readers))
    page = soup(admin.get("/studies/new/pairwise?kind=accepted&facets=modality").text)
    counts = {tr["data-stratum"]: int(tr.select_one("td.num").text)
              for tr in page.select("#pair-strata tbody tr")}
    assert set(counts) == {"chest_xray", "brain_mri", "fundus"} and all(n > 0 for n in counts.values())
    refused = admin.post("/studies/new/pairwise", data={
        "name": "", "kind": "accepted", "facets": ["modality"], "per_stratum": "2",
        "readers": [str(i) for i in ids]})
    assert refused.status_code == 422
    kept = soup(refused.text)
    assert kept.select_one("input[name=per_stratum]")["value"] == "2"
    assert [i["value"] for i in kept.select("input[name=readers][checked]")] == [str(i) for i in ids]
    for bad in ({"kind": "sideways"}, {"per_stratum": "0"}, {"readers": []},
                {"readers": ["99999999999999999999"]},  # past the database's range: a 422
                {"facets": ["modality", "disease"]}, {"facets": ["modality", "modality"]}):
        posted = {"name": "x", "kind": "accepted", "facets": ["modality"], "per_stratum": "2",
                  "readers": [str(i) for i in ids]} | bad
        answer = admin.post("/studies/new/pairwise", data=posted)
        assert answer.status_code == 422, bad
        # Each reason above the form links to the field it names.
        shown = soup(answer.text)
        links = shown.select("#form-errors a[href^='#field-']")
        assert links and all(shown.select_one(a["href"]) is not None for a in links), bad
    with Session(demo_engine) as session:  # nothing was made by a refused form
        assert session.exec(select(Study)).all() == [] and session.exec(select(StudyPair)).all() == []
    made = admin.post("/studies/new/pairwise", data={
        "name": "rounds compared", "kind": "accepted", "facets": ["modality"], "per_stratum": "2",
        "readers": [str(i) for i in ids]}, follow_redirects=False)
    wait_for_background()  # its images are drawn in a thread of its own
    assert made.status_code == 303
    study_id = int(made.headers["location"].rsplit("/", 1)[1])
    detail = soup(admin.get(f"/studies/{study_id}").text)
    assert detail.select_one("#pairwise-link")["href"].endswith(f"/studies/{study_id}/pairwise")
    # a pair asks which edit is better: no rubric, no primary question
    for rubric_only in ("#study-rubric", "#agreement-link", "#export-long", "#adjudicator",
                        "#primary-question"):
        assert detail.select_one(rubric_only) is None
    # every answer version, reasons and comments included, is its own export
    assert detail.select_one("#export-csv")["href"].endswith(f"/studies/{study_id}/answers.csv")
    offered = {i["value"] for i in detail.select("input[name=viewer_tools]")}
    assert offered == {"window", "flicker"}
    with Session(demo_engine) as session:
        items = session.exec(select(StudyItem).where(StudyItem.study_id == study_id)).all()
        pairs = {p.item_id: p for p in session.exec(select(StudyPair)).all()}
    assert len(items) == 6 and set(pairs) == {i.id for i in items}
    assert all(pairs[i.id].first_attempt_id != i.attempt_id and pairs[i.id].kind == "accepted"
               for i in items)

    # An admin who asks for the difference map anyway (a hand-made post) gets it stored,
    # but never served: the design has none.
    asked = admin.post(f"/studies/{study_id}/setup", data={
        "instructions": "", "viewer_tools": ["window", "flicker", "difference"]}, follow_redirects=False)
    assert asked.status_code in (200, 303)
    # Each reader reads every pair; the screen names sides only.
    sides = []
    for client in readers.values():
        for sequence in range(1, 7):
            screen = soup(client.get(f"/read/{study_id}/{sequence}").text)
            assert screen.select_one("#img-a")["src"].endswith("/left?size=preview")
            assert "round" not in screen.select_one("#answer-panel").text.lower()
            uid = screen.select_one("#img-a")["src"].split("/image/")[1].split("/")[0]
            assert client.get(f"/read/{study_id}/image/{uid}/left").status_code == 200
            assert client.get(f"/read/{study_id}/image/{uid}/edit").status_code == 404
            # No difference map: it would say which edit is the item's own.
            assert client.get(f"/read/{study_id}/diff/{uid}").status_code == 403
            call = "a" if sequence % 2 else "equal"
            answered = client.post(f"/read/{study_id}/{sequence}", data={
                "call": call, "confidence": "4", "tags": [], "comment": "",
                "submission_id": secrets.token_hex(8)}, follow_redirects=False)
            assert answered.status_code == 303
    neither = readers["dr-a"].post(f"/read/{study_id}/1", data={
        "call": "c", "confidence": "4", "submission_id": secrets.token_hex(8)})
    assert neither.status_code == 422
    nul = readers["dr-a"].post(f"/read/{study_id}/1", data={
        "call": "a", "confidence": "4", "comment": "bad\x00text",
        "submission_id": secrets.token_hex(8)})
    assert nul.status_code == 422  # no database stores it
    unknown = readers["dr-a"].post(f"/read/{study_id}/1", data={
        "call": "b", "confidence": "4", "tags": ["no such reason"], "comment": "kept",
        "submission_id": secrets.token_hex(8)})
    assert unknown.status_code == 422
    kept = soup(unknown.text)
    assert kept.select_one("#error-tags") is not None
    assert kept.select_one("textarea[name=comment]").text == "kept"
    assert kept.select_one("input[name=call][value=b]").has_attr("checked")
    refused_call = "fieldset[data-name=call][aria-invalid=true] #error-call"
    assert soup(neither.text).select_one(refused_call) is not None
    with Session(demo_engine) as session:
        answers = session.exec(select(PairAnswer)).all()
        for a in answers:
            assignment = session.get(Assignment, a.assignment_id)
            assert assignment is not None
            sides.append(a.first_left)
            if a.version == 1:
                said_a = assignment.sequence % 2 == 1
                if said_a:  # "A" is the left edit: the first when the first was on the left
                    assert a.choice == ("first" if a.first_left else "second")
                else:
                    assert a.choice == "equal"
    assert len(answers) == 12 and True in sides and False in sides

    # Every page and download the study page offers is there.
    links = soup(admin.get(f"/studies/{study_id}").text).select("#study-figures a, #study-exports a")
    assert {a["id"] for a in links} == {"pairwise-link", "pairwise-pairs", "export-csv", "export-design"}
    assert all(admin.get(a["href"]).status_code == 200 for a in links)
    figures = soup(admin.get(f"/studies/{study_id}/pairwise").text)
    assert "12" in figures.select_one("#pairwise-summary strong").text
    assert figures.select_one("#left-preferred") is not None
    assert figures.select_one("#premature") is not None and figures.select_one("#wrongful") is not None
    assert figures.select_one("#readers-agree") is not None
    # The agreement page of a pairwise study is its own figures page.
    moved = admin.get(f"/studies/{study_id}/agreement", follow_redirects=False)
    assert moved.headers["location"].endswith(f"/studies/{study_id}/pairwise")
    with Session(demo_engine) as session:
        other = session.exec(select(Study).where(col(Study.id) != study_id)).first()
    assert other is None or admin.get(f"/studies/{other.id}/pairwise").status_code == 404


def test_pairs_of_runs_show_each_editor_and_the_later_run(demo_engine: Engine, settings: Settings,
                                                          tmp_path: Path) -> None:
    with Session(demo_engine) as session:
        tasks = [t.id or 0 for t in session.exec(select(Task).order_by(col(Task.id)).limit(4)).all()]
    regenerate_offline(demo_engine, tasks, tmp_path)
    admin = client_for(demo_engine, settings, "chief", Role.admin)
    reader = client_for(demo_engine, settings, "dr-a", Role.reader)
    made = admin.post("/studies/new/pairwise", data={
        "name": "before and after", "kind": "runs", "per_stratum": "10",
        "readers": [str(i) for i in reader_ids(demo_engine, ["dr-a"])]}, follow_redirects=False)
    wait_for_background()  # its images are drawn in a thread of its own
    assert made.status_code == 303, made.text
    study_id = int(made.headers["location"].rsplit("/", 1)[1])
    for sequence in range(1, 5):
        assert reader.post(f"/read/{study_id}/{sequence}", data={
            "call": "ab"[sequence % 2], "confidence": "3",
            "submission_id": secrets.token_hex(8)}, follow_redirects=False).status_code == 303
    page = soup(admin.get(f"/studies/{study_id}/pairwise").text)
    editors = [row["data-item"] for row in page.select("#by-editor tbody tr")]
    assert editors == ["imported", "regenerated · offline-heuristic-1"]
    assert "later run" in page.select_one("#later-preferred th").text
    assert page.select_one("#by-editor-none") is None
    # Drawn beside the table: each editor's row, the first the reference, with the reads' n.
    drawn = [t.get_text() for t in page.select("#by-editor-plot svg text")]
    assert "imported (reference)" in drawn and "regenerated · offline-heuristic-1" in drawn
    assert any("n = 4 reads" in t for t in drawn)
    # The pairs name who made each edit, the preferred one first.
    archive = zipfile.ZipFile(io.BytesIO(admin.get(f"/studies/{study_id}/pairwise/pairs.zip").content))
    rows = [json.loads(line) for line in archive.read("pairs.jsonl").decode().splitlines()]
    assert rows and all({r["editor1"], r["editor2"]} == set(editors) for r in rows)
    # A pair of runs holds each run's final round, whichever it is: no round strengths.
    assert page.select_one("#by-round") is None and page.select_one("#rounds-heading") is None


def test_the_rubric_form_sends_a_pairwise_study_to_its_own_form(demo_engine: Engine,
                                                                 settings: Settings) -> None:
    admin = client_for(demo_engine, settings, "chief", Role.admin)
    client_for(demo_engine, settings, "dr-a", Role.reader)
    ids = reader_ids(demo_engine, ["dr-a"])
    refused = admin.post("/studies", data={"name": "pairs here", "design": "pairwise",
                                           "total": "4", "readers": [str(i) for i in ids]})
    assert refused.status_code == 422
    assert "own form" in soup(refused.text).select_one("#error-design").text
    # Asked for by hand, the rubric form sends a pairwise study to its own.
    sent = admin.get("/studies/new?design=pairwise", follow_redirects=False)
    assert sent.status_code == 303 and sent.headers["location"].endswith("/studies/new/pairwise")
    with Session(demo_engine) as session:
        assert session.exec(select(Study)).all() == []


def test_every_way_a_study_is_made_prepares_it(demo_engine: Engine, settings: Settings,
                                               tmp_path: Path) -> None:
    """A pairwise study (and a follow-up from /judges) opened at once with nothing drawn:
    GET /read/N/1 answered 200 with images_drawn 0."""
    from dataclasses import replace

    from app.cases.filters import CaseFilter
    from app.designs import design_of
    from app.studies.design import StudyPlan
    from app.studies.models import Design
    from app.studies.previews import prepare_unfinished

    admin = add_user(demo_engine, "chief", Role.admin)
    reader = add_user(demo_engine, "dr-a", Role.reader)
    plan = StudyPlan(name="pairs made elsewhere", case_filter=CaseFilter(modality=("chest_xray",)),
                     reader_ids=[reader.id or 0], design=Design.pairwise, total=2)
    with Session(demo_engine) as session:  # as a command would make it
        study = design_of(Design.pairwise).create(session, replace(plan, pair_kind="accepted"),
                                                  admin)
        study_id = study.id
        assert not study.images_ready and study.images_drawn == 0
    client = as_user(demo_engine, settings, "dr-a", Role.reader)
    assert client.get(f"/read/{study_id}/1").status_code == 409
    prepare_unfinished(demo_engine, settings.resolved_cache_dir())  # the web app's preparer
    with Session(demo_engine) as session:
        ready = session.get(Study, study_id)
        assert ready is not None and ready.images_ready and ready.images_drawn == 2
    assert client.get(f"/read/{study_id}/1").status_code == 200


def test_the_forms_defaults_make_a_study_on_the_demo_and_the_filter_is_kept(
        demo_engine: Engine, settings: Settings) -> None:
    """Every draw of the defaults was refused (one original is missing in the demo), and
    ?modality= was dropped on submit."""
    admin = client_for(demo_engine, settings, "chief", Role.admin)
    reader = add_user(demo_engine, "dr-a", Role.reader)
    page = soup(admin.get("/studies/new/pairwise?modality=chest_xray").text)
    assert page.select_one("#pair-filter code").text == "modality=chest_xray"
    assert {i["name"]: i["value"] for i in page.select("#pair-pool input[type=hidden]")} == {
        "modality": "chest_xray"}
    assert page.select_one("#new-pairwise")["action"].endswith("?modality=chest_xray")
    for box in page.select("#field-kind input, #field-facets input"):  # each inside its label
        assert box.find_parent("label") is not None
    everywhere = soup(admin.get("/studies/new/pairwise").text)
    assert "original image is missing" in everywhere.select_one("#pairs-missing").text
    made = admin.post("/studies/new/pairwise?modality=chest_xray", data={
        "name": "defaults", "kind": "consecutive", "facets": ["modality", "direction", "verdicts"],
        "per_stratum": "10", "seed": "42", "readers": [str(reader.id)]}, follow_redirects=False)
    assert made.status_code == 303, made.text[:400]
    study_id = int(made.headers["location"].rsplit("/", 1)[1])
    with Session(demo_engine) as session:
        study = session.get(Study, study_id)
        assert study is not None and '"modality": ["chest_xray"]' in study.selection
        modalities = set(session.exec(select(Task.modality).join(
            StudyItem, col(StudyItem.task_id) == Task.id).where(StudyItem.study_id == study_id)).all())
    assert modalities == {"chest_xray"}
    made = admin.post("/studies/new/pairwise", data={
        "name": "every modality", "kind": "consecutive",
        "facets": ["modality", "direction", "verdicts"], "per_stratum": "10", "seed": "42",
        "readers": [str(reader.id)]}, follow_redirects=False)
    wait_for_background()  # its images are drawn in a thread of its own
    assert made.status_code == 303, made.text[:400]


def test_the_form_counts_the_pairs_of_identical_edits_it_leaves_out(
        demo_engine: Engine, settings: Settings) -> None:
    from app.images.metrics_store import compute_pending
    from tests.designs.pairwise.test_pairs import _make_identical

    admin = client_for(demo_engine, settings, "chief", Role.admin)
    _make_identical(demo_engine)
    pending = soup(admin.get("/studies/new/pairwise?modality=fundus").text)
    assert pending.select_one("#pairs-identical") is None
    assert "not yet checked" in pending.select_one("#pairs-unchecked").text
    while compute_pending(demo_engine, limit=500):
        pass
    page = soup(admin.get("/studies/new/pairwise?modality=fundus").text)
    assert page.select_one("#pairs-identical").text.startswith("1 pair of this kind left out")
    assert page.select_one("#pairs-unchecked") is None
