"""A third reader settles the ties: assignment rules, blinding to the judge, versions, lock."""

import pytest
from bs4 import BeautifulSoup
from sqlalchemy.engine import Engine
from sqlmodel import Session, select

from app.agreement.reads import load
from app.agreement.report import study_report
from app.designs.rubric.disagreements import disagreements, to_adjudicate
from app.models import Attempt, JudgeVerdict, Role
from app.settings import Settings
from app.studies.adjudication import DecisionIn, assign_adjudicator, item_by_uid, submit_decision
from app.studies.design import StudyError
from app.studies.models import Adjudication, Study, StudyItem
from app.studies.versions import StudyLocked, lock_study
from app.studies.viewer_tools import tools_json
from tests.accounts import add_user
from tests.agreement.test_report import answer_all
from tests.studies.conftest import StudySetup, make_study
from tests.web.routes.test_reading import as_user

# Two readers who disagree on compliance in the last three cases: three ties to settle.
PATTERN = {"reader-0": ["yes"] * 8, "reader-1": ["yes"] * 5 + ["no"] * 3}
DECISION = dict(compliance="no", structure="yes", realism="yes", fidelity="yes", overall="reject")


def tied_study(engine: Engine) -> tuple[StudySetup, int]:
    setup = make_study(engine)
    answer_all(engine, setup, PATTERN)
    third = add_user(engine, "third-reader", Role.reader)
    with Session(engine) as session:
        assign_adjudicator(session, setup.study, third)
    return setup, third.id or 0


def test_ties_are_listed_and_settled_by_the_decision(demo_engine: Engine) -> None:
    setup, third_id = tied_study(demo_engine)
    with Session(demo_engine) as session:
        data = load(session, setup.study)
        ties = to_adjudicate(data)
        assert len(ties) == 3 and all(t.questions == ["compliance", "overall"] for t in ties)
        before = study_report(data, resamples=100).questions["compliance"].reference.decided
        assert before["tie"] == 3
        third = session.get(type(setup.admin), third_id)
        assert third is not None
        item = item_by_uid(session, setup.study, ties[0].case.uid)
        first = submit_decision(session, setup.study, item, third,
                                DecisionIn(**DECISION, submission_id="adj-00000001"))
        again = submit_decision(session, setup.study, item, third,
                                DecisionIn(**DECISION, submission_id="adj-00000001"))
        changed = submit_decision(session, setup.study, item, third, DecisionIn(
            **DECISION | {"compliance": "yes"}, submission_id="adj-00000002"))
        assert first.id == again.id and changed.version == 2
        data = load(session, setup.study)
        after = study_report(data, resamples=100).questions["compliance"].reference.decided
    assert after == {"unanimous": 5, "single_vote": 0, "majority": 0, "adjudicated": 1, "tie": 2,
                     "no_vote": 0}
    assert [t.decided for t in to_adjudicate(data)].count(True) == 1


def test_a_tie_is_offered_even_while_a_reader_has_not_read_the_case(demo_engine: Engine) -> None:
    """Once, a case was offered only when every reader had read it: a 1-1 split with a third
    reader who never read it was silently left out of the comparison."""
    setup = make_study(demo_engine, readers=3)
    answer_all(demo_engine, setup, {"reader-0": ["yes"] * 8, "reader-1": ["yes"] * 6 + ["no"] * 2,
                                    "reader-2": ["yes"] * 8}, skip={"reader-2": {6, 7}})
    with Session(demo_engine) as session:
        data = load(session, setup.study)
    ties = to_adjudicate(data)
    assert len(ties) == 2 and all(t.unread == ("reader-2",) for t in ties)
    assert {t.case.item_id for t in ties} == {data.cases[6].item_id, data.cases[7].item_id}


def test_the_adjudicator_must_be_a_third_reader_and_the_lock_holds(demo_engine: Engine) -> None:
    setup = make_study(demo_engine)
    with Session(demo_engine) as session:
        with pytest.raises(StudyError):
            assign_adjudicator(session, setup.study, setup.readers[0])
        with pytest.raises(StudyError):
            assign_adjudicator(session, setup.study, setup.admin)
        lock_study(session, setup.study)
        with pytest.raises(StudyLocked):
            assign_adjudicator(session, setup.study, setup.outsider)


def test_disagreement_queue_by_kind(demo_engine: Engine) -> None:
    setup, _ = tied_study(demo_engine)
    with Session(demo_engine) as session:
        data = load(session, setup.study)
    readers = disagreements(data, "compliance", "readers")
    assert len(readers) == 3 and all(r.readers_differ for r in readers)
    # The judge accepted every edit; the readers rejected none unanimously, so on "overall"
    # the judge never differs from a resolved reference.
    assert disagreements(data, "overall", "judge") == []


def test_screens_show_reads_never_the_judge(demo_engine: Engine, settings: Settings) -> None:
    setup, _ = tied_study(demo_engine)
    adjudicator = as_user(demo_engine, settings, "third-reader")
    sid = setup.study.id
    worklist = BeautifulSoup(adjudicator.get(f"/adjudicate/{sid}").text, "html.parser")
    links = worklist.select("#to-adjudicate a")
    assert len(links) == 3
    url = links[0]["href"]
    screen = adjudicator.get(str(url))
    assert screen.status_code == 200
    page = BeautifulSoup(screen.text, "html.parser")
    assert len(page.select(".earlier-read")) == 2
    with Session(demo_engine) as session:
        uid = str(url).rsplit("/", 1)[1]
        item = session.exec(select(StudyItem).where(StudyItem.uid == uid)).one()
        verdict = session.exec(select(JudgeVerdict).where(
            JudgeVerdict.attempt_id == item.attempt_id)).first()
        attempt = session.get(Attempt, item.attempt_id)
    assert verdict is not None and verdict.reason and verdict.reason not in screen.text
    assert attempt is not None and attempt.image_relpath and attempt.image_relpath not in screen.text
    for which in ("original", "edit"):
        assert adjudicator.get(f"/adjudicate/{sid}/image/{uid}/{which}").status_code == 200
    diff_url = page.select_one("#viewer .viewport[data-diff]")["data-diff"]
    assert diff_url == f"/adjudicate/{sid}/diff/{uid}?size=preview"
    diff = adjudicator.get(diff_url)
    assert diff.status_code == 200 and diff.headers["content-type"] == "image/png"
    token = page.select_one('input[name="submission_id"]')["value"]
    bad = adjudicator.post(str(url), data=DECISION | {"overall": "maybe", "submission_id": token})
    assert bad.status_code == 422
    done = adjudicator.post(str(url), data=DECISION | {"submission_id": token}, follow_redirects=False)
    assert done.status_code == 303
    with Session(demo_engine) as session:
        [stored] = session.exec(select(Adjudication)).all()
    assert stored.saw_earlier_reads and stored.compliance == "no"
    # Readers of the study, and anyone else, are not the adjudicator.
    reader = as_user(demo_engine, settings, "reader-0")
    assert reader.get(f"/adjudicate/{sid}").status_code == 403
    assert reader.get(f"/adjudicate/{sid}/image/{uid}/edit").status_code == 403
    assert reader.get(f"/adjudicate/{sid}/diff/{uid}").status_code == 403


def test_admin_assigns_and_sees_the_queue(demo_engine: Engine, settings: Settings) -> None:
    setup = make_study(demo_engine)
    answer_all(demo_engine, setup, PATTERN)
    third = add_user(demo_engine, "third-reader", Role.reader)
    admin = as_user(demo_engine, settings, "study-admin", Role.admin)
    sid = setup.study.id
    assert admin.post(f"/studies/{sid}/adjudicator", data={"user_id": str(third.id)},
                      follow_redirects=False).status_code == 303
    detail = BeautifulSoup(admin.get(f"/studies/{sid}").text, "html.parser")
    assert detail.select_one("#adjudicator-name").get_text() == "third-reader"
    queue = BeautifulSoup(admin.get(f"/studies/{sid}/disagreements?kind=readers").text, "html.parser")
    assert queue.select_one("#queue-count").get_text() == str(len(queue.select("tr.queue-row")))
    assert all(r["data-readers-differ"] == "true" for r in queue.select("tr.queue-row"))
    assert admin.get(f"/studies/{sid}/disagreements?question=nope").status_code == 422
    assert admin.post(f"/studies/{sid}/adjudicator", data={"user_id": "99999"}).status_code == 404
    reader = setup.readers[0]
    assert admin.post(f"/studies/{sid}/adjudicator",
                      data={"user_id": str(reader.id)}).status_code == 422
    csv_text = admin.get(f"/studies/{sid}/disagreements.csv").text
    assert csv_text.splitlines()[0].startswith("case,task,modality")


def test_reference_csv_has_every_case_and_question(demo_engine: Engine, settings: Settings) -> None:
    import csv
    import io

    setup, _ = tied_study(demo_engine)
    admin = as_user(demo_engine, settings, "study-admin", Role.admin)
    table = list(csv.DictReader(io.StringIO(admin.get(f"/studies/{setup.study.id}/reference.csv").text)))
    assert len(table) == 8 * 5
    compliance = [r for r in table if r["question"] == "compliance"]
    assert sorted(r["decided"] for r in compliance) == ["tie"] * 3 + ["unanimous"] * 5


def test_the_adjudicator_reads_under_the_studys_image_tools(demo_engine: Engine, settings: Settings) -> None:
    setup, _ = tied_study(demo_engine)
    with Session(demo_engine) as session:
        study = session.get(Study, setup.study.id)
        assert study is not None
        study.viewer_tools = tools_json(["window", "swipe"])
        session.add(study)
        session.commit()
    adjudicator = as_user(demo_engine, settings, "third-reader")
    sid = setup.study.id
    url = BeautifulSoup(adjudicator.get(f"/adjudicate/{sid}").text, "html.parser").select_one(
        "#to-adjudicate a")["href"]
    page = BeautifulSoup(adjudicator.get(str(url)).text, "html.parser")
    assert page.select_one("#viewer")["data-tools"] == "window swipe"
    assert page.select_one("[data-swipe]") and not page.select('[data-diff], [data-action="flicker"]')
    uid = str(url).rsplit("/", 1)[1]
    assert adjudicator.get(f"/adjudicate/{sid}/diff/{uid}").status_code == 403
