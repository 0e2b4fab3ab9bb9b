"""A study's targets and equivalence margin: typed on the new-study form, refused with the
field named when they cannot be used, and watched on the study page."""

import pytest
from bs4 import BeautifulSoup
from sqlalchemy.engine import Engine
from sqlmodel import Session, col, func, select

from app.models import Role
from app.settings import Settings
from app.studies.models import Study
from tests.agreement.test_report import answer_all
from tests.studies.conftest import StudySetup, make_study
from tests.web.routes.test_reading import as_user


@pytest.fixture
def study(demo_engine: Engine) -> StudySetup:
    return make_study(demo_engine)


def form(study: StudySetup, **extra: str) -> dict[str, object]:
    return {"name": "watched", "design": "validation", "facets": ["verdict", "direction"],
            "n:pass/add": "20", "n:fail/add": "20", "n:pass/remove": "20", "n:fail/remove": "20",
            "seed": "7", "readers": [str(r.id) for r in study.readers], "primary_question": "overall",
            **extra}


def set_targets(engine: Engine, study_id: int | None, targets: str) -> None:
    """Give a made study targets, as if they had been typed on its form."""
    with Session(engine) as session:
        study = session.get(Study, study_id)
        assert study is not None
        study.targets = targets
        session.add(study)
        session.commit()


def studies(engine: Engine) -> int:
    with Session(engine) as session:
        return session.scalar(select(func.count()).select_from(Study)) or 0


def test_targets_and_the_margin_are_kept_with_the_study(demo_engine: Engine, settings: Settings,
                                                        study: StudySetup) -> None:
    admin = as_user(demo_engine, settings, "study-admin", Role.admin)
    created = admin.post("/studies?modality=chest_xray", follow_redirects=False,
                         data=form(study, target_agreement="0.3", target_too_lenient="0.25",
                                   margin="0.08"))
    assert created.status_code == 303
    with Session(demo_engine) as session:
        made = session.scalars(select(Study).where(col(Study.name) == "watched")).one()
        assert made.margin == 0.08 and made.targets == '{"agreement": 0.3, "too_lenient": 0.25}'
    page = BeautifulSoup(admin.get(created.headers["location"]).text, "html.parser")
    rows = {r["data-endpoint"]: r for r in page.select("#watch-table tbody tr")}
    assert rows["agreement"].select_one(".target").text.strip() == "± 0.3"
    assert rows["too_strict"].select_one(".target").text.strip() == "none"
    assert page.select_one("#interim").text.startswith("Interim: 0 of 160 planned reads")
    assert page.select_one("#precise-enough") is None


@pytest.mark.parametrize(("typed", "field", "words"), [
    ({"target_agreement": "0"}, "target_agreement", "greater than 0"),
    ({"target_too_strict": "-0.1"}, "target_too_strict", "greater than 0"),
    ({"target_agreement": "0.01"}, "target_agreement", "out of reach"),
    ({"target_too_lenient": "lots"}, "target_too_lenient", "number"),
    ({"margin": "0"}, "margin", "greater than 0"),
])
def test_a_target_that_cannot_be_used_is_refused_beside_its_field_and_nothing_is_made(
        demo_engine: Engine, settings: Settings, study: StudySetup, typed: dict[str, str],
        field: str, words: str) -> None:
    admin = as_user(demo_engine, settings, "study-admin", Role.admin)
    before = studies(demo_engine)
    refused = admin.post("/studies?modality=chest_xray", data=form(study, **typed))
    assert refused.status_code == 422
    page = BeautifulSoup(refused.text, "html.parser")
    assert words in page.select_one(f"#field-{field}").find_next(id=f"error-{field}").text
    assert page.select_one(f'input[name="{field}"]')["value"] == typed[field]  # kept as typed
    assert page.select_one('input[name="name"]')["value"] == "watched"
    assert studies(demo_engine) == before


def test_the_study_page_says_precise_enough_once_every_target_is_met(
        demo_engine: Engine, settings: Settings) -> None:
    setup = make_study(demo_engine)
    set_targets(demo_engine, setup.study.id, '{"agreement": 0.49}')
    admin = as_user(demo_engine, settings, "study-admin", Role.admin)
    page = BeautifulSoup(admin.get(f"/studies/{setup.study.id}").text, "html.parser")
    assert page.select_one("#precise-enough") is None
    answer_all(demo_engine, setup, {name: ["yes"] * 8 for name in ("reader-0", "reader-1")})
    page = BeautifulSoup(admin.get(f"/studies/{setup.study.id}").text, "html.parser")
    agreement = page.select_one('#watch-table tr[data-endpoint="agreement"]')
    assert "met after" in agreement.select_one(".status").text
    # every read is in: the page says so and suggests locking, not "interim"
    assert page.select_one("#interim").text.strip().startswith(
        "Every planned read is in. 16 of 16 planned reads")
    assert page.select_one("#interim")["data-state"] == "all-read"
    assert page.select_one("#suggest-lock a")["href"] == "#lock-form"
    assert page.select_one("#lock-form") is not None
    assert page.select_one("#precise-enough").text.startswith("Every target was met")
    # The narrowing drawn: each endpoint's line ends at the table's n and half-width, and
    # the agreement's target is drawn as its level.
    drawn = [t.get_text() for t in page.select("#watch-plot svg text")]
    for row in page.select("#watch-table tbody tr"):
        cases = row.select_one(".interval span").text.split("n = ")[1].split()[0]
        width = row.select_one(".half-width").text.strip()
        label = row.select_one("td").text.strip()
        assert f"{label} (n={cases}: ± {width})" in drawn, (label, drawn)
    assert " target ± 0.49" in drawn
    assert admin.post(f"/studies/{setup.study.id}/lock", follow_redirects=False).status_code == 303
    page = BeautifulSoup(admin.get(f"/studies/{setup.study.id}").text, "html.parser")
    interim = page.select_one("#interim")
    assert interim.text.strip().startswith("Final, as the study was locked: 16 of 16")
    assert "may stop" not in interim.text and page.select_one("#suggest-lock") is None
    # Every reader of a locked study showed "State: reading".
    states = {td.text.strip() for td in page.select("#reader-checks-table .reader-state")}
    assert states == {"study locked"}


def test_ties_left_out_of_the_live_figures_are_counted_and_linked_to_adjudication(
        demo_engine: Engine, settings: Settings) -> None:
    setup = make_study(demo_engine)
    admin = as_user(demo_engine, settings, "study-admin", Role.admin)
    answer_all(demo_engine, setup, {"reader-0": ["yes"] * 6 + ["no"] * 2,
                                    "reader-1": ["yes"] * 8})
    page = BeautifulSoup(admin.get(f"/studies/{setup.study.id}").text, "html.parser")
    ties = page.select_one("#watch-ties")
    assert ties.text.startswith("2 cases in these images were left tied by the readers")
    assert ties.select_one("a")["href"] == f"/adjudicate/{setup.study.id}"
    agreement = page.select_one('#watch-table tr[data-endpoint="agreement"] .interval').text
    assert "n = 6 cases" in agreement


def test_the_study_page_counts_the_reads_left_while_it_runs(demo_engine: Engine,
                                                            settings: Settings) -> None:
    setup = make_study(demo_engine)
    admin = as_user(demo_engine, settings, "study-admin", Role.admin)
    answer_all(demo_engine, setup, {"reader-0": ["yes"] * 8, "reader-1": ["yes"] * 8},
               skip={"reader-0": {7}, "reader-1": set(range(8))})
    page = BeautifulSoup(admin.get(f"/studies/{setup.study.id}").text, "html.parser")
    assert page.select_one("#reads-left").text == "9"
    assert page.select_one("#interim")["data-state"] == "interim"


def test_the_report_states_the_rule_and_when_and_why_the_study_stopped(
        demo_engine: Engine, settings: Settings) -> None:
    setup = make_study(demo_engine)
    set_targets(demo_engine, setup.study.id, '{"agreement": 0.49}')
    admin = as_user(demo_engine, settings, "study-admin", Role.admin)
    answer_all(demo_engine, setup, {"reader-0": ["yes"] * 8, "reader-1": ["yes"] * 8},
               skip={"reader-0": {7}, "reader-1": set(range(8))})
    page = BeautifulSoup(admin.get(f"/studies/{setup.study.id}/agreement").text, "html.parser")
    assert page.select_one("#interim").text.startswith(
        "Interim: 7 of 16 planned reads; the study is still open.")
    report = BeautifulSoup(admin.get(f"/studies/{setup.study.id}/report.html").text, "html.parser")
    assert "agreement of the judge with the readers ± 0.49" in report.select_one("#stopping-rule").text
    assert report.select_one("#interim").text.startswith("Interim: 7 of 16")
    assert [li["data-endpoint"] for li in report.select("#endpoints li")] == [
        "agreement", "kappa", "too_strict", "too_lenient", "human_ceiling"]
    assert admin.post(f"/studies/{setup.study.id}/lock", follow_redirects=False).status_code == 303
    report = BeautifulSoup(admin.get(f"/studies/{setup.study.id}/report.html").text, "html.parser")
    outcome = report.select_one("#stopping-outcome").text
    assert outcome.startswith("Locked on ")
    assert "after 7 of 16 planned reads, before every target was met" in outcome


def test_every_results_page_says_interim_while_the_study_is_open(demo_engine: Engine,
                                                                 settings: Settings) -> None:
    from tests.studies.conftest import make_real_or_edited

    setup = make_study(demo_engine)
    turing = make_real_or_edited(demo_engine)
    admin = as_user(demo_engine, settings, "study-admin", Role.admin)
    queue = BeautifulSoup(admin.get(f"/studies/{setup.study.id}/disagreements").text, "html.parser")
    assert queue.select_one("#interim").text.startswith("Interim: 0 of 16 planned reads")
    roe_admin = as_user(demo_engine, settings, "roe-admin", Role.admin)
    page = BeautifulSoup(roe_admin.get(f"/studies/{turing.study.id}/real-or-edited").text, "html.parser")
    assert page.select_one("#interim").text.startswith("Interim: 0 of ")
    assert admin.post(f"/studies/{setup.study.id}/lock", follow_redirects=False).status_code == 303
    queue = BeautifulSoup(admin.get(f"/studies/{setup.study.id}/disagreements").text, "html.parser")
    assert queue.select_one("#interim") is None


def test_a_target_not_reached_with_every_read_in_projects_nothing(demo_engine: Engine,
                                                                 settings: Settings) -> None:
    """It said "(projected ± 0.294 once all are read)" when all were read."""
    setup = make_study(demo_engine)
    set_targets(demo_engine, setup.study.id, '{"agreement": 0.01}')
    answer_all(demo_engine, setup, {name: ["yes"] * 8 for name in ("reader-0", "reader-1")})
    admin = as_user(demo_engine, settings, "study-admin", Role.admin)
    page = BeautifulSoup(admin.get(f"/studies/{setup.study.id}").text, "html.parser")
    status = page.select_one('#watch-table tr[data-endpoint="agreement"] .status').text
    assert "once all are read" not in status and "projected" not in status, status
    assert "not reached" in status
    assert page.select_one("#interim")["data-state"] == "all-read"
