"""The agreement page, its JSON report and CSV tables: admins only, filters checked."""

import csv
import io
import re

from bs4 import BeautifulSoup
from fastapi.testclient import TestClient
from sqlalchemy.engine import Engine

from app.models import Role
from app.settings import Settings
from tests.agreement.test_report import answer_all
from tests.studies.conftest import StudySetup, make_study
from tests.web.routes.test_reading import as_user


def answered_study(engine: Engine) -> StudySetup:
    setup = make_study(engine, readers=3)
    answer_all(engine, setup, {"reader-0": ["yes"] * 6 + ["no", "cannot_assess"],
                               "reader-1": ["yes"] * 5 + ["no"] * 3,
                               "reader-2": ["yes"] * 4 + ["no"] * 4})
    return setup


def test_the_page_shows_every_question_with_its_n(demo_engine: Engine, settings: Settings) -> None:
    setup = answered_study(demo_engine)
    admin = as_user(demo_engine, settings, "study-admin", Role.admin)
    response = admin.get(f"/studies/{setup.study.id}/agreement")
    assert response.status_code == 200
    page = BeautifulSoup(response.text, "html.parser")
    rows = page.select("#judge-vs-reference table.figures tbody tr")
    assert [r["data-question"] for r in rows] == ["compliance", "structure", "realism",
                                                  "fidelity", "overall"]
    assert page.select_one("#n-cases").get_text() == "8"
    assert page.select_one("#charts")["hx-get"] == f"/studies/{setup.study.id}/agreement/charts"
    charts = BeautifulSoup(admin.get(page.select_one("#charts")["hx-get"],
                                     headers={"HX-Request": "true"}).text, "html.parser")
    assert charts.select_one("#chart-agreement svg") is not None
    assert charts.select_one("#chart-by-disease svg") is not None
    assert len(charts.select(".heat-tables svg")) == 5
    decided = page.select_one('#decisions tr[data-question="compliance"]').select("td")
    # unanimous, single vote, majority, adjudicated, tie, no vote
    assert [d.get_text() for d in decided] == ["6", "0", "2", "0", "0", "0"]
    # The headline: the judge against human agreement, per question, primary marked.
    ceiling = page.select('#ceiling tbody tr')
    assert [r["data-question"] for r in ceiling][-1] == "overall"
    assert "primary" in page.select_one('#ceiling tr[data-question="overall"]')["class"]
    assert len(page.select("#judge-vs-reference .two-by-two")) == 5
    assert page.select_one(".judge-identity").get_text().startswith("imported")
    # Once rendered a Python method ("<built-in method items ...>") instead of the count.
    assert "(8 cases)" in page.select_one(".summary").get_text()


def test_json_and_csv_follow_the_slice(demo_engine: Engine, settings: Settings) -> None:
    setup = answered_study(demo_engine)
    admin = as_user(demo_engine, settings, "study-admin", Role.admin)
    sid = setup.study.id
    report = admin.get(f"/studies/{sid}/agreement.json?direction=remove").json()
    assert report["n_cases"] == 4 and report["slice"]["direction"] == ["remove"]
    assert report["study"]["id"] == sid
    text = admin.get(f"/studies/{sid}/agreement/judge-vs-reference.csv").text
    table = list(csv.DictReader(io.StringIO(text)))
    assert [r["question"] for r in table][-1] == "overall"
    assert table[-1]["primary"] == "True" and table[0]["primary"] == "False"
    for name in ("judge-vs-readers", "readers-vs-others", "reader-pairs", "among-readers",
                 "human-ceiling", "sensitivity", "reference-decisions", "by-disease", "flow",
                 "case-table"):
        response = admin.get(f"/studies/{sid}/agreement/{name}.csv")
        assert response.status_code == 200 and response.text.count("\n") > 1, name


def test_bad_input_and_readers_are_refused(demo_engine: Engine, settings: Settings,
                                           client: TestClient) -> None:
    setup = answered_study(demo_engine)
    sid = setup.study.id
    reader = as_user(demo_engine, settings, "reader-0")
    assert reader.get(f"/studies/{sid}/agreement").status_code == 403
    assert client.get("/studies/999/agreement").status_code == 404
    assert client.get(f"/studies/{sid}/agreement?modality=xray").status_code == 422
    assert client.get(f"/studies/{sid}/agreement?round=0").status_code == 422
    assert client.get(f"/studies/{sid}/agreement/nonsense.csv").status_code == 404


def test_long_format_export_has_a_row_per_case_reader_and_question(
        demo_engine: Engine, settings: Settings) -> None:
    setup = answered_study(demo_engine)
    admin = as_user(demo_engine, settings, "study-admin", Role.admin)
    response = admin.get(f"/studies/{setup.study.id}/answers-long.csv")
    assert response.status_code == 200 and response.headers["content-type"].startswith("text/csv")
    table = list(csv.DictReader(io.StringIO(response.text)))
    assert len(table) == 8 * 3 * 5
    assert {r["question"] for r in table} == {"compliance", "structure", "realism", "fidelity",
                                              "overall"}
    fidelity = [r for r in table if r["question"] == "fidelity"]
    assert {r["judge_answer"] for r in fidelity} == {""}  # imported verdicts never scored it
    overall = [r for r in table if r["question"] == "overall"]
    assert {r["judge_answer"] for r in overall} <= {"pass", "fail"}
    assert {r["answer"] for r in overall} <= {"accept", "reject"}


def test_a_slice_with_no_case_says_so_rather_than_failing(demo_engine: Engine, settings: Settings) -> None:
    """A slice that matches nothing (no fifth rounds here) once ended in a 500."""
    setup = answered_study(demo_engine)
    admin = as_user(demo_engine, settings, "study-admin", Role.admin)
    sid = setup.study.id
    page = admin.get(f"/studies/{sid}/agreement?round=5")
    assert page.status_code == 200
    assert BeautifulSoup(page.text, "html.parser").select_one("#n-cases").get_text() == "0"
    report = admin.get(f"/studies/{sid}/agreement.json?round=5").json()
    assert report["questions"]["overall"]["judge_vs_reference"]["agreement"]["value"] is None
    for url in (f"/studies/{sid}/agreement/charts?round=5", f"/studies/{sid}/report.html?round=5",
                f"/studies/{sid}/agreement/among-readers.csv?round=5"):
        assert admin.get(url).status_code == 200, url


def test_random_readers_come_first_with_the_fixed_view_beside(demo_engine: Engine,
                                                              settings: Settings) -> None:
    setup = answered_study(demo_engine)
    admin = as_user(demo_engine, settings, "study-admin", Role.admin)
    shell = BeautifulSoup(admin.get(f"/studies/{setup.study.id}/agreement").text, "html.parser")
    assert "reader(s)" not in shell.text and "read by 3 readers" in shell.select_one(".summary").text
    sections = [s["id"] for s in shell.select("section[id]")]
    assert sections.index("random-readers") < sections.index("human-ceiling")
    placeholder = shell.select_one("#random-readers[hx-trigger=load]")
    page = BeautifulSoup(admin.get(placeholder["hx-get"], headers={"HX-Request": "true"}).text,
                         "html.parser")
    views = [v["id"] for v in page.select("#random-readers-views .view")]
    assert views == ["random-readers-rrrc", "random-readers-frrc"]
    assert "radiologists in general" in page.select_one("#random-readers-rrrc").get_text()
    assert "these readers only" in page.select_one("#random-readers-frrc").get_text()
    assert page.select_one("#few-readers") is not None  # three readers: the page says so
    assert page.select_one("#random-readers-chart svg") is not None
    readers = [r["data-reader"] for r in page.select("#random-readers-table tr[data-reader]")]
    assert readers == ["reader-0", "reader-1", "reader-2"]
    # Eight cases: under the alternative annotator test's 30 per reader, each is left out.
    conclusion = page.select_one("#alt-test-conclusion")
    assert conclusion.select_one("[data-conclusion]")["data-conclusion"] == "not tested: too few readers"
    assert not conclusion.get_text().startswith("The judge can stand in")  # it read as a yes
    # The readers' mean and the judge's rest on the cases, each once (they said n = the sum
    # of every reader's cases), their intervals stay inside 0-100 %, and the caption says why
    # each reader's n is their own; the difference is in percentage points.
    means = page.select_one("#random-readers-means").get_text()
    scored = {int(td.get_text()) for td in page.select("#random-readers-table td.num:nth-of-type(1)")}
    assert "on 8 cases" in means and scored
    shown = [float(x) for x in re.findall(r"(\d+\.\d) %", means)]
    assert shown and all(0 <= x <= 100 for x in shown)
    assert "each reader's n is their own" in page.select_one("#random-readers-caption").get_text()
    assert "percentage points" in page.select_one("#random-readers-rrrc .sentence").get_text()
    assert "p = <" not in page.get_text()
    assert "points" in page.select_one("#few-readers").get_text()  # its widths were shares
    assert page.select_one("#alt-test-skipped") is not None
    assert page.select_one("#alt-epsilon")["value"] == "0.1"
    figures = admin.get(page.select_one("#random-readers-json")["href"]).json()
    assert figures["rrrc"]["generalises"].startswith("radiologists in general")
    assert figures["alternative_annotator_test"]["epsilon"] == 0.1
    assert admin.get(f"/studies/{setup.study.id}/agreement/random-readers.json?epsilon=9").status_code == 422


def test_a_bad_epsilon_is_refused_and_kept(demo_engine: Engine, settings: Settings) -> None:
    setup = answered_study(demo_engine)
    admin = as_user(demo_engine, settings, "study-admin", Role.admin)
    for typed in ("1.5", "lots"):
        response = admin.get(f"/studies/{setup.study.id}/agreement/random-readers",
                             params={"epsilon": typed}, headers={"HX-Request": "true"})
        assert response.status_code == 422
        page = BeautifulSoup(response.text, "html.parser")
        assert "epsilon" in page.select_one("#random-readers-error").get_text()
        assert page.select_one("#alt-epsilon")["value"] == typed
    ok = admin.get(f"/studies/{setup.study.id}/agreement/random-readers", params={"epsilon": "0.2"})
    assert ok.status_code == 200
    assert BeautifulSoup(ok.text, "html.parser").select_one("#alt-epsilon")["value"] == "0.2"


def test_the_report_puts_readers_random_first(demo_engine: Engine, settings: Settings) -> None:
    setup = answered_study(demo_engine)
    admin = as_user(demo_engine, settings, "study-admin", Role.admin)
    page = BeautifulSoup(admin.get(f"/studies/{setup.study.id}/report.html").text, "html.parser")
    summary = page.select_one("#summary")
    first = summary.select_one("#random-readers-summary")
    assert first is not None and "radiologists in general" in first.get_text()
    assert "these readers only" in first.get_text()
    ordered = [e.get("id") for e in summary.find_all(["p", "ul"]) if e.get("id")]
    assert ordered.index("random-readers-summary") < ordered.index("endpoints")
    headline = page.select_one("#headline")
    assert headline.select_one("#random-readers") is not None and headline.select_one("svg") is not None
    assert page.select_one("#random-readers-methods") is not None


def test_readers_who_all_read_alike_get_strict_json_and_no_zero_width_interval(
        demo_engine: Engine, settings: Settings) -> None:
    """Three readers who give the same answers: each is ahead of the judge by the same amount,
    so Hillis's df is unbounded (the JSON once failed with a 500 on it); the readers' mean,
    the same on every resample, gets no interval rather than one of zero width; and no size
    table is predicted from a spread estimated as zero."""
    setup = make_study(demo_engine, readers=3)
    same = ["yes", "no", "yes", "yes", "no", "no", "yes", "no"] * 2
    answer_all(demo_engine, setup, {f"reader-{i}": same for i in range(3)})
    admin = as_user(demo_engine, settings, "study-admin", Role.admin)
    answer = admin.get(f"/studies/{setup.study.id}/agreement/random-readers.json")
    assert answer.status_code == 200
    figures = answer.json()
    assert figures["rrrc"]["df"] is None and figures["rrrc"]["readers_ci"] == [None, None]
    assert figures["sample_size"]["rows"] == []
    page = BeautifulSoup(admin.get(f"/studies/{setup.study.id}/agreement/random-readers").text,
                         "html.parser")
    view = page.select_one("#random-readers-rrrc").get_text()
    assert "df ∞" in view and "no interval: every reader the same" in view
    assert "exactly the same advantage over the judge" in view
    assert "cannot be predicted" in page.select_one("#few-readers").get_text()
    assert page.select_one("#sample-size-table") is None
    assert page.select_one("#accepted-note") is not None  # make_study draws accepted edits
