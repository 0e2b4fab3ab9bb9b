"""A finished study reports the clustering it observed, and the planner offers it."""

from bs4 import BeautifulSoup
from sqlalchemy.engine import Engine
from sqlmodel import Session

from app.models import Role
from app.settings import Settings
from app.studies.models import Study
from app.studies.versions import lock_study
from tests.quality.conftest import read_study, validation_study
from tests.web.routes.test_accounts import client_for


def test_the_planner_offers_the_clustering_of_finished_studies(demo_engine: Engine,
                                                               settings: Settings) -> None:
    study = validation_study(demo_engine)
    read_study(demo_engine, study)
    admin = client_for(demo_engine, settings, "chief", Role.admin)
    form = BeautifulSoup(admin.get("/studies/new").text, "html.parser")
    assert form.select_one("#observed-clustering") is None  # still open: nothing finished
    with Session(demo_engine) as session:
        found = session.get(Study, study.id)
        assert found is not None
        lock_study(session, found)
    report = BeautifulSoup(admin.get(f"/studies/{study.id}/report.html").text, "html.parser")
    assert report.select_one("#observed-clustering").text.startswith("Observed clustering: design effect")
    form = BeautifulSoup(admin.get("/studies/new").text, "html.parser")
    offered = form.select_one('#observed-clustering [data-study="quality"]')
    assert offered is not None and "design effect" in offered.text
    data = admin.get(f"/studies/{study.id}/agreement.json").json()
    clustering = data["achieved"]["clustering"]
    assert clustering["images"] >= 10 and clustering["design_effect"] > 0
    if clustering["icc"] is not None:
        option = form.select_one("#observed-icc option")
        assert option.text == "quality" and float(option["value"]) == round(max(clustering["icc"], 0), 3)
        assert form.select_one('input[name="plan_icc"]')["list"] == "observed-icc"
