"""/quality and /api/quality: the reason when no study can give an estimate, the corrected
rates once a study is read, bad values dropped on the page and refused by the API."""

from bs4 import BeautifulSoup
from sqlalchemy.engine import Engine

from app.background import wait_for_background
from app.models import Role
from app.settings import Settings
from tests.accounts import add_user
from tests.quality.conftest import read_study, validation_study
from tests.web.routes.test_accounts import client_for


def test_without_a_study_the_page_and_the_json_say_why(demo_engine: Engine, settings: Settings) -> None:
    admin = client_for(demo_engine, settings, "chief", Role.admin)
    page = admin.get("/quality")
    assert page.status_code == 200
    reason = BeautifulSoup(page.text, "html.parser").select_one("#quality-reason")
    assert reason is not None and "No study" in reason.text
    data = admin.get("/api/quality").json()
    assert data["reason"].startswith("No study") and data["populations"] == []
    charts = admin.get("/quality/charts")
    assert charts.status_code == 200
    assert "No curve" in BeautifulSoup(charts.text, "html.parser").select_one("#charts-none").text
    assert admin.get("/quality/charts?target=80").status_code == 422


def test_an_unread_study_says_it_waits_for_the_readers(demo_engine: Engine, settings: Settings) -> None:
    validation_study(demo_engine)
    admin = client_for(demo_engine, settings, "chief", Role.admin)
    data = admin.get("/api/quality").json()
    assert data["study"]["name"] == "quality" and "consensus" in data["reason"]


def test_a_read_study_gives_corrected_rates_by_part(demo_engine: Engine, settings: Settings) -> None:
    study = validation_study(demo_engine)
    read_study(demo_engine, study)
    admin = client_for(demo_engine, settings, "chief", Role.admin)
    data = admin.get(f"/api/quality?study={study.id}&target=4").json()
    assert data["reason"] is None and data["target"] == 0.04
    judged = next(p for p in data["populations"] if p["key"] == "judged")
    assert judged["edits"] == 321
    whole = judged["parts"][0]["questions"]["overall"]
    assert whole["reads"] == 112 and whole["ppi"]["low"] <= whole["ppi"]["value"] <= whole["ppi"]["high"]
    assert whole["rogan_gladen"] is not None and whole["plan"]["target"] == 0.04
    accepted = next(p for p in data["populations"] if p["key"] == "accepted")
    overall = accepted["parts"][0]["questions"]["overall"]
    # The judge passed every accepted edit: it adds nothing, and the page says so.
    assert overall["judge_rate"] == 1.0 and overall["lam"] == 0.0 and "every edit" in overall["reason"]
    small = next(p for p in judged["parts"] if p["level"] == 3 and p["questions"]["overall"]["reads"] < 10)
    row = small["questions"]["overall"]
    assert row["ppi"] is None and "no estimate" in row["reason"]

    page = BeautifulSoup(admin.get(f"/quality?study={study.id}&question=compliance").text, "html.parser")
    rows = page.select("#population-judged table.quality-summary tbody tr")
    assert [r["data-question"] for r in rows] == ["overall", "compliance", "structure", "realism", "fidelity"]
    assert page.select_one("#population-judged tr[data-question=compliance]")["class"] == ["chosen"]
    assert page.select_one("#population-judged tr[data-question=overall] td.ppi strong").text.endswith("%")
    assert page.select("#population-judged table.quality-parts tr.level-1")
    assert "more edits read" in page.select_one("#widest").text
    short = page.select_one("#population-judged table.quality-parts td.reason")
    assert short is not None and "no estimate" in short["title"]
    marks = page.select("#population-accepted table.quality-summary .note-mark a")
    assert marks and all(page.select_one(m["href"]) is not None for m in marks)
    # a marker reads as a note, not as a digit stuck to a dash
    assert all(m.text.startswith("(note ") for m in marks)
    assert not page.select("#population-accepted table.quality-summary sup")
    # Plain words first, the method's name in the note: headers said "PPI++", "Rogan-Gladen"
    # and "more for ±5" with no unit.
    headers = [th.text for th in page.select("#population-judged table.quality-summary thead th")]
    assert "judge corrected by the reads" in headers and not any("PPI" in h for h in headers)
    assert "edits more to read for ± 5 points" in headers


def test_bad_values_are_dropped_on_the_page_and_refused_by_the_api(demo_engine: Engine,
                                                                    settings: Settings) -> None:
    admin = client_for(demo_engine, settings, "chief", Role.admin)
    page = admin.get("/quality?target=400&question=beauty")
    notices = [n.text for n in BeautifulSoup(page.text, "html.parser").select(".notice")]
    assert page.status_code == 200 and len(notices) == 2 and "'400'" in notices[0]
    assert admin.get("/api/quality?target=400").status_code == 422
    assert admin.get("/api/quality?target=abc").status_code == 422
    assert admin.get("/api/quality?target=nan").status_code == 422
    assert len(BeautifulSoup(admin.get("/quality?target=nan").text, "html.parser").select(".notice")) == 1
    assert admin.get("/api/quality?study=99999").status_code == 404
    assert admin.get("/quality?study=99999").status_code == 404


def test_readers_cannot_see_it(demo_engine: Engine, settings: Settings) -> None:
    reader = client_for(demo_engine, settings, "dr-lee", Role.reader)
    assert reader.get("/quality").status_code == 403
    assert reader.get("/api/quality").status_code == 403


def test_a_part_without_spread_shows_no_interval(demo_engine: Engine, settings: Settings) -> None:
    """The readers side with the judge on every addition: within each verdict stratum every
    read addition got the same answer. Its normal interval has no width, which is no
    certainty: the page says "no interval" and the planner assumes the worst case."""
    study = validation_study(demo_engine)
    read_study(demo_engine, study)
    admin = client_for(demo_engine, settings, "chief", Role.admin)
    data = admin.get(f"/api/quality?study={study.id}").json()
    judged = next(p for p in data["populations"] if p["key"] == "judged")
    add = next(p for p in judged["parts"] if p["part"] == {"modality": "chest_xray", "direction": "add"})
    row = add["questions"]["overall"]
    assert row["ppi"]["low"] == row["ppi"]["high"] and "no spread" in row["reason"]
    assert row["plan"]["more"] > 0 and row["plan"]["assumed"]
    page = BeautifulSoup(admin.get(f"/quality?study={study.id}").text, "html.parser")
    cell = page.select_one('#population-judged tr[data-part="chest_xray · add"] td.ppi .ci')
    assert cell is not None and cell.text == "no interval"


def test_the_judges_calibration_against_the_readers(demo_engine: Engine, settings: Settings) -> None:
    study = validation_study(demo_engine)
    read_study(demo_engine, study)
    admin = client_for(demo_engine, settings, "chief", Role.admin)
    calibration = admin.get(f"/api/quality?study={study.id}").json()["calibration"]
    assert calibration["reads"] == 112 and calibration["reason"] is None
    assert "rubric weights" in calibration["score_source"]  # imported runs: no stored score
    auc = calibration["auc"]
    assert 0.5 < auc["low"] <= auc["value"] <= auc["high"] <= 1.0
    assert calibration["thresholds"][0]["threshold"] == 0.7
    assert calibration["roc"][0]["threshold"] is None  # the curve starts at (0, 0)
    # The readers (judge_rule) fail every third removal the judge passed: too lenient there.
    assert calibration["failures"] and all(f["too_lenient"] >= 1 and f["direction"] == "remove"
                                           for f in calibration["failures"])
    overall = calibration["questions"]["overall"]
    assert overall["sensitivity"]["value"] == 1.0 and overall["specificity"]["value"] < 1.0

    page = BeautifulSoup(admin.get(f"/quality?study={study.id}").text, "html.parser")
    assert page.select_one("#calibration-auc strong").text == f"{auc['value']:.3f}"
    lazy = page.select_one("#calibration-charts")
    assert lazy is not None and lazy["hx-trigger"] == "load"
    charts = BeautifulSoup(admin.get(lazy["hx-get"]).text, "html.parser")
    assert charts.select_one("#chart-roc svg") is not None
    assert charts.select_one("#chart-reliability svg") is not None
    assert len(page.select("#calibration-thresholds tbody tr")) == 2
    assert [r["data-question"] for r in page.select("#calibration-questions tbody tr")] == [
        "overall", "compliance", "structure", "realism"]  # the imported judge never scored fidelity
    assert page.select("#calibration-failures tbody tr")


def test_the_planner_makes_a_follow_up_study(demo_engine: Engine, settings: Settings) -> None:
    study = validation_study(demo_engine)
    read_study(demo_engine, study)
    reader = add_user(demo_engine, "dr-follow", Role.reader)
    admin = client_for(demo_engine, settings, "chief", Role.admin)
    page = BeautifulSoup(admin.get(f"/quality?study={study.id}").text, "html.parser")
    form = page.select_one("form#follow-up")
    assert form is not None
    chosen = form.select_one("select[name=part] option[selected]")
    # The part that needs the most reads: none has the 30 an interval needs, so each part's
    # need assumes the worst case, and the largest part needs the most.
    accepted = admin.get(f"/api/quality?study={study.id}").json()["populations"][0]
    parts = [p for p in accepted["parts"] if "direction" in p["part"]]
    widest = max(parts, key=lambda p: p["questions"]["overall"]["plan"]["more"])
    assert chosen is not None and chosen["value"] == "{modality}/{direction}".format(**widest["part"])
    assert form.select_one("input[name=reads]")["value"] == str(
        widest["questions"]["overall"]["plan"]["more"])
    assert form.select_one(f"input[name=readers][value='{reader.id}']") is not None

    refused = admin.post("/quality/follow-up", data={
        "study": str(study.id), "part": "fundus/remove", "reads": "12", "name": "fundus removals"})
    assert refused.status_code == 422
    again = BeautifulSoup(refused.text, "html.parser")
    assert "active reader" in again.select_one("#error-readers").text
    assert again.select_one("form#follow-up input[name=name]")["value"] == "fundus removals"
    assert again.select_one("form#follow-up input[name=reads]")["value"] == "12"
    kept = again.select_one("form#follow-up select[name=part] option[selected]")
    assert kept is not None and kept["value"] == "fundus/remove"

    bad = admin.post("/quality/follow-up", data={"study": str(study.id), "part": "fundus/remove",
                                                 "reads": "lots", "name": "x", "readers": str(reader.id)})
    assert bad.status_code == 422
    assert "whole number" in BeautifulSoup(bad.text, "html.parser").select_one("#error-reads").text

    made = admin.post("/quality/follow-up", data={
        "study": str(study.id), "part": "fundus/remove", "reads": "12", "name": "fundus removals",
        "readers": str(reader.id)}, follow_redirects=False)
    wait_for_background()  # its images are drawn in a thread of its own
    assert made.status_code == 303
    data = admin.get(f"/api/quality?study={study.id}").json()
    assert [s["name"] for s in data["studies"]] == ["quality", "fundus removals"]
    assert data["studies"][1]["part"] == {"modality": "fundus", "direction": "remove"}
    # A follow-up is no study to start from: the list offers the root only.
    assert [c["name"] for c in data["choices"]] == ["quality"]


def test_the_sensitivity_lines_stand_under_each_population(demo_engine: Engine, settings: Settings) -> None:
    study = validation_study(demo_engine, readers=3)  # the skill-weighted line needs three
    read_study(demo_engine, study)
    admin = client_for(demo_engine, settings, "chief", Role.admin)
    page = BeautifulSoup(admin.get(f"/quality?study={study.id}").text, "html.parser")
    lines = page.select('details.quality-sensitivity[data-population="judged"] tbody tr')
    assert [r["data-policy"] for r in lines] == [
        "primary", "ties_as_pass", "ties_as_fail", "cannot_assess_as_pass", "cannot_assess_as_fail",
        "skill_weighted"]
    # The skill-weighted line (a Dawid-Skene fit per question) comes after the page.
    placeholder = lines[-1]
    assert placeholder.get("hx-trigger") == "load" and placeholder.select_one("td strong") is None
    row = BeautifulSoup(admin.get(placeholder["hx-get"]).text, "html.parser").select_one("tr")
    assert row["data-policy"] == "skill_weighted"
    assert all(r.select_one("td strong").text.endswith("%") for r in [*lines[:-1], row])
    anytime = page.select_one('p.anytime-rate[data-population="judged"]')
    assert "valid at every look" in anytime.text and anytime.select_one("strong").text.endswith("%")
    data = admin.get(f"/api/quality?study={study.id}").json()
    judged = next(p for p in data["populations"] if p["key"] == "judged")
    assert set(judged["sensitivity"]) == {"ties_as_pass", "ties_as_fail", "cannot_assess_as_pass",
                                          "cannot_assess_as_fail", "skill_weighted"}


def test_without_a_study_named_the_locked_one_with_the_most_reads_is_taken_and_named(
        demo_engine: Engine, settings: Settings) -> None:
    """The newest study was taken: a 7-case follow-up with no estimate."""
    from sqlmodel import Session

    from app.studies.models import Study
    from app.studies.versions import lock_study

    read = validation_study(demo_engine)
    read_study(demo_engine, read)
    with Session(demo_engine) as session:
        row = session.get(Study, read.id)
        assert row is not None
        lock_study(session, row)
    validation_study(demo_engine, strata={"pass/chest_xray": 2, "fail/chest_xray": 2},
                     name="newer and unread")
    admin = client_for(demo_engine, settings, "chief", Role.admin)
    page = BeautifulSoup(admin.get("/quality").text, "html.parser")
    assert "quality" in page.select_one("#quality-default strong").text
    assert page.select_one("#quality-form option[selected]").text.startswith("quality ")
    data = admin.get("/api/quality").json()
    assert data["study"]["id"] == read.id and data["study"]["by_default"] is True


def test_the_page_without_the_skill_weighted_line_has_every_other_figure_alike(
        demo_engine: Engine, settings: Settings) -> None:
    """The page's report leaves the Dawid-Skene line for later and nothing else."""
    from sqlmodel import Session

    from app.quality.report import quality_report

    study = validation_study(demo_engine)
    read_study(demo_engine, study)
    with Session(demo_engine) as session:
        whole = quality_report(session, study.id).as_dict()
        page = quality_report(session, study.id, weighted=False).as_dict()
    for population in whole["populations"]:
        population["sensitivity"].pop("skill_weighted")
    assert page == whole
    admin = client_for(demo_engine, settings, "chief", Role.admin)
    assert admin.get(f"/quality/skill-weighted?population=everyone&study={study.id}").status_code == 422
    kept = admin.get(f"/quality/skill-weighted?population=judged&study={study.id}&target=lots")
    assert kept.status_code == 200  # a bad target was named on the page; here the default


def test_a_study_named_is_not_said_to_be_chosen_by_default_after_its_default_view(
        demo_engine: Engine, settings: Settings) -> None:
    """The kept report of /quality (no study named: the default one, "chosen by default")
    was served for /quality?study=ID of the same study, which then said it was chosen."""
    from sqlmodel import Session

    from app.quality.report import quality_report

    study = validation_study(demo_engine)
    read_study(demo_engine, study)
    with Session(demo_engine) as session:
        assert quality_report(session, weighted=False).study["by_default"] is True  # type: ignore[index]
        assert quality_report(session, study.id, weighted=False).study["by_default"] is False  # type: ignore[index]
