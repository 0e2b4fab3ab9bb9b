"""An adaptive study from the new-study form: made with its first batch, refused beside the
design when its pool cannot carry one, and topped up as readers answer."""

import pytest
from bs4 import BeautifulSoup
from fastapi.testclient import TestClient
from sqlalchemy.engine import Engine
from sqlmodel import Session, col, func, select

from app.models import Role, User
from app.settings import Settings
from app.studies.models import Study, StudyBatch, StudyDraw
from tests.accounts import add_user
from tests.web.routes.test_accounts import as_user, client_for


@pytest.fixture
def readers(demo_engine: Engine) -> list[int]:
    return [add_user(demo_engine, f"adaptive-reader-{i}", Role.reader).id or 0 for i in range(3)]


def form(readers: list[int], **extra: str) -> dict[str, object]:
    return {"name": "adaptive", "design": "adaptive", "total": "30", "batch_images": "4",
            "seed": "5", "readers": [str(r) for r in readers], "primary_question": "overall",
            **extra}


def test_the_form_makes_an_adaptive_study_with_its_first_batch(
        demo_engine: Engine, settings: Settings, readers: list[int]) -> None:
    admin = client_for(demo_engine, settings, "chief", Role.admin)
    page = BeautifulSoup(admin.get("/studies/new?design=adaptive").text, "html.parser")
    assert "Judged edits are drawn a batch at a time" in page.select_one("#adaptive-explained").text
    created = admin.post("/studies", data=form(readers), follow_redirects=False)
    assert created.status_code == 303
    with Session(demo_engine) as session:
        study = session.scalars(select(Study).where(col(Study.name) == "adaptive")).one()
        assert study.design == "adaptive"
        assert session.scalar(select(func.count()).select_from(StudyDraw)
                              .where(col(StudyDraw.study_id) == study.id)) == 4


@pytest.mark.parametrize(("query", "typed", "field", "words"), [
    ("?modality=chest_xray", {}, "design", "at least 2 strata"),
    ("", {"batch_images": "0"}, "batch_images", "at least 1"),
    ("", {"total": ""}, "total", "the most edits"),
    ("", {"target_agreement": "0"}, "target_agreement", "greater than 0"),
    # The budget, not the pool, bounds what it can read: 3 images cannot give +-0.1.
    ("", {"total": "3", "batch_images": "3", "target_agreement": "0.1"}, "target_agreement",
     "out of reach"),
])
def test_an_adaptive_study_it_cannot_make_is_refused_with_the_field_named(
        demo_engine: Engine, settings: Settings, readers: list[int], query: str,
        typed: dict[str, str], field: str, words: str) -> None:
    admin = client_for(demo_engine, settings, "chief", Role.admin)
    refused = admin.post(f"/studies{query}", data=form(readers, **typed))
    assert refused.status_code == 422
    page = BeautifulSoup(refused.text, "html.parser")
    assert words in page.select_one(f"#error-{field}").text
    assert page.select_one('input[name="name"]')["value"] == "adaptive"
    with Session(demo_engine) as session:
        assert session.scalar(select(func.count()).select_from(Study)) == 0
        assert session.scalar(select(func.count()).select_from(StudyBatch)) == 0


def test_the_report_and_pages_of_an_adaptive_study_say_what_is_weighted(
        demo_engine: Engine, settings: Settings, readers: list[int]) -> None:
    from tests.designs.adaptive.test_top_up import read_all

    admin = client_for(demo_engine, settings, "chief", Role.admin)
    created = admin.post("/studies", data=form(readers, target_agreement="0.45"),
                         follow_redirects=False)
    study_id = int(created.headers["location"].rsplit("/", 1)[1])
    read_all(demo_engine, study_id)
    page = BeautifulSoup(admin.get(f"/studies/{study_id}").text, "html.parser")
    agreement = page.select_one('#watch-table tr[data-endpoint="agreement"]')
    assert agreement.select_one(".interval").text.strip() != "no compared case yet"
    report = BeautifulSoup(admin.get(f"/studies/{study_id}/report.html").text, "html.parser")
    assert "inverse of its probability" in report.select_one("#adaptive-methods").text
    assert report.select_one("#adaptive-headline").text.startswith("Adaptive design:")
    results = BeautifulSoup(admin.get(f"/studies/{study_id}/agreement").text, "html.parser")
    assert "estimates the pool" in results.select_one("#adaptive-note").text
    assert "weight every case" in report.select_one("#adaptive-headline").text
    assert "each read is weighted" in page.select_one("#figure-scope").text
    assert page.select_one("#study-steer").text.startswith("How the last batch was drawn: batch")


def made_and_opened(engine: Engine, settings: Settings, readers: list[int]
                    ) -> tuple[TestClient, Study, TestClient]:
    """An adaptive study made from the form, its first batch ready: the admin's client, the
    study and its first reader's client."""
    from app.background import wait_for_background

    admin = client_for(engine, settings, "chief", Role.admin)
    assert admin.post("/studies", data=form(readers), follow_redirects=False).status_code == 303
    wait_for_background()
    with Session(engine) as session:
        study = session.scalars(select(Study).where(col(Study.name) == "adaptive")).one()
        reader = session.get(User, readers[0])
        assert reader is not None
    return admin, study, as_user(engine, settings, reader.name, Role.reader)


def test_a_reader_never_waits_on_the_next_batch(demo_engine: Engine, settings: Settings,
                                                 readers: list[int],
                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    """The next batch was drawn on the reader's request, after the answer and before the
    next case: 5-30 s after Enter. It is drawn off the request now."""
    import threading

    from app.background import wait_for_background
    from app.web.routes import reading

    drawing, released, finished = threading.Event(), threading.Event(), threading.Event()

    def slow_top_up(*_: object) -> None:
        # A draw that lasts until the test lets it go (30 s at most: a limit for a hang).
        drawing.set()
        released.wait(30)
        finished.set()

    monkeypatch.setattr(reading, "top_up", slow_top_up)
    _, study, client = made_and_opened(demo_engine, settings, readers)
    answer = {q: "yes" for q in ("compliance", "structure", "realism", "fidelity")}
    sent = client.post(f"/read/{study.id}/1", data=answer | {
        "overall": "accept", "confidence": "3", "submission_id": "adaptive-fast-1"},
        follow_redirects=False)
    assert sent.status_code == 303
    assert client.get(sent.headers["location"]).status_code == 200
    # The answer and the next case came back while the draw was still running: the reader
    # did not wait for it (on the request, the draw had to end before the answer returned).
    assert drawing.wait(30) and not finished.is_set()
    released.set()
    wait_for_background()
    assert finished.is_set()


def test_the_form_and_the_study_page_state_the_budget_in_reads(
        demo_engine: Engine, settings: Settings, readers: list[int]) -> None:
    """30 source images gave 117 cases per reader while the study page said "30 cases, no
    strata"; and the form offered strata the design refuses."""
    admin = client_for(demo_engine, settings, "chief", Role.admin)
    page = BeautifulSoup(admin.get("/studies/new?design=adaptive").text, "html.parser")
    assert page.select_one("#fixed-strata strong").text == "modality"
    assert not page.select('#strata input[type=checkbox][name="facets"]')
    assert page.select_one('#strata input[type=hidden][name="facets"]')["value"] == "modality"
    assert page.select_one("#adaptive-budget")["hx-get"].endswith("/studies/new/budget")
    ids = "&".join(f"readers={r}" for r in readers)
    fragment = BeautifulSoup(admin.get(f"/studies/new/budget?design=adaptive&total=30&{ids}").text,
                             "html.parser")
    edits = int(fragment.select_one("#budget-edits").text)
    assert edits == 30  # one edit a draw: the draws are edits now
    assert int(fragment.select_one("#budget-reads-total").text) == pytest.approx(3 * edits, abs=2)
    assert int(fragment.select_one("#budget-per-reader").text) == pytest.approx(edits, abs=1)
    for query in ("design=adaptive&total=", "design=adaptive&total=x", "design=validation&total=30"):
        quiet = BeautifulSoup(admin.get(f"/studies/new/budget?{query}").text, "html.parser")
        assert quiet.select_one("#budget-reads") is None
    for query in ("design=adaptive&total=30&readers=abc", "design=bogus&total=30",
                  "design=adaptive&total=999999999999&target_agreement=0.0001",
                  "design=adaptive&total=30&target_agreement=nan&plan_agreement=inf"):
        assert admin.get(f"/studies/new/budget?{query}").status_code in (200, 422), query
    created = admin.post("/studies", data=form(readers), follow_redirects=False)
    study_id = int(created.headers["location"].rsplit("/", 1)[1])
    study = BeautifulSoup(admin.get(f"/studies/{study_id}").text, "html.parser")
    assert "no strata" not in study.select_one("#study-strata").text
    assert "modality" in study.select_one("#study-strata").text
    stated = study.select_one("#study-budget")
    assert "at most 30 edits" in stated.text
    assert int(stated.select("strong")[0].text) == edits
    assert int(stated.select("strong")[1].text) == pytest.approx(3 * edits, abs=2)
    report = BeautifulSoup(admin.get(f"/studies/{study_id}/report.html").text, "html.parser")
    assert report.select_one("#sampling").text.startswith("adaptive (see Methods): at most 30 edits")


def test_a_fast_reader_is_told_more_cases_are_coming_and_taken_to_them(
        demo_engine: Engine, settings: Settings, readers: list[int],
        monkeypatch: pytest.MonkeyPatch) -> None:
    """A reader who ran out while the next batch was drawn was told "You have answered every
    case of that study. Thank you."""
    from app.designs import top_up
    from app.web.routes import reading

    monkeypatch.setattr(reading, "top_up", lambda *_: None)  # the batch is slow to come
    admin, study, client = made_and_opened(demo_engine, settings, readers)
    answer = {q: "yes" for q in ("compliance", "structure", "realism", "fidelity")}
    where, n = f"/read/{study.id}", 0
    while True:
        where = client.get(where, follow_redirects=False).headers.get("location", where)
        if not where.rstrip("/").rsplit("/", 1)[1].isdigit():
            break
        n += 1
        where = client.post(where, data=answer | {
            "overall": "accept", "confidence": "3", "submission_id": f"fast-{n:04d}"},
            follow_redirects=False).headers["location"]
    assert where == f"/read/{study.id}/more" and n > 0
    page = BeautifulSoup(client.get(where).text, "html.parser")
    message = page.select_one("#more-coming-message")
    assert "More cases are being drawn" in message.text and "Thank you" not in page.text
    assert message["hx-trigger"].startswith("every")
    assert client.get(where, headers={"HX-Request": "true"}).status_code == 204
    top_up(demo_engine, study.id or 0, settings.resolved_cache_dir())  # the batch arrives
    asked = client.get(where, headers={"HX-Request": "true"})
    assert asked.status_code == 204 and asked.headers["HX-Redirect"].startswith(f"/read/{study.id}/")
    assert asked.headers["HX-Redirect"].rsplit("/", 1)[1].isdigit()
    # Its study page had no figure after these reads and said only "0 of 4 drawn source
    # images fully read": it says why in words.
    shown = BeautifulSoup(admin.get(f"/studies/{study.id}").text, "html.parser")
    empty = shown.select_one("#watch-empty")
    assert empty is not None and "No figure yet" in empty.text
    assert "once every case of a batch has been read by every reader" in empty.text


def test_the_adaptive_form_does_not_offer_the_known_answer_share_it_would_refuse(
        demo_engine: Engine, settings: Settings, readers: list[int]) -> None:
    """The form kept its 5 % known-answer default for an adaptive study, then refused it."""
    from tests.readers.test_figures_without_known import mark_edits

    mark_edits(demo_engine, 12)  # a settled pool: the default share would be 5 %
    admin = client_for(demo_engine, settings, "chief", Role.admin)
    page = BeautifulSoup(admin.get("/studies/new?design=adaptive").text, "html.parser")
    share = page.select_one('#study-form input[name="known_share"]')
    assert share["type"] == "hidden" and share["value"] == "0"
    assert "mixes in no known-answer cases" in page.select_one("#known-none").text
    sent = {i["name"]: i.get("value", "") for i in page.select("#study-form input[type=hidden]")
            if i.get("name") and i["name"] != "csrf_token"}
    made = admin.post("/studies", data=sent | form(readers), follow_redirects=False)
    assert made.status_code == 303
    validation = BeautifulSoup(admin.get("/studies/new?design=validation").text, "html.parser")
    assert validation.select_one('#study-form input[name="known_share"]')["value"] == "5"
