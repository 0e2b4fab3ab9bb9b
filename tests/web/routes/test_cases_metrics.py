"""/cases by preservation metrics: bounds filter (and count) cases, columns sort them, and
paging and the case page's next/previous follow that order."""

import statistics

import pytest
from bs4 import BeautifulSoup
from fastapi.testclient import TestClient
from sqlalchemy import select
from sqlalchemy.engine import Engine
from sqlmodel import Session, col

from app.images.metrics_store import compute_pending
from app.models import AttemptMetric, Role, Task
from app.settings import Settings
from tests.web.routes.test_cases_list import soup


@pytest.fixture
def measured(demo_engine: Engine) -> dict[int, AttemptMetric]:
    """Every demo task's final edit measured: task id -> metrics."""
    while compute_pending(demo_engine, limit=500):
        pass
    with Session(demo_engine) as session:
        rows = session.execute(select(col(Task.id), AttemptMetric).join(
            AttemptMetric, col(AttemptMetric.attempt_id) == Task.thumb_attempt_id)).all()
    return {task_id: metric for task_id, metric in rows if metric.error is None}


def percent(cell: str) -> float:
    return float(cell.replace("%", "").strip())


def test_a_changed_area_bound_filters_and_counts(client: TestClient, measured: dict) -> None:
    cut = statistics.median(m.changed_fraction * 100 for m in measured.values())
    expected = {t for t, m in measured.items() if m.changed_fraction * 100 >= cut}
    page = soup(client, f"/cases?changed_min={cut:g}")
    assert page.select_one("#total").text == str(len(expected))
    shown = {int(r["data-case-id"]) for r in page.select("tr.case-row")}
    assert shown and shown <= expected
    assert all(percent(c.text) >= round(cut, 1) - 0.05 for c in page.select("td.changed-area"))
    # The facet counts start from the bound too, and the bound survives a facet click.
    modality = {a["data-value"]: int(a.select_one(".count").text)
                for a in page.select('.facet[data-facet="modality"] a.facet-value')}
    assert sum(modality.values()) == len(expected)
    link = page.select_one('.facet[data-facet="modality"] a.facet-value')["href"]
    assert f"changed_min={cut:g}" in link
    assert page.select_one('#preservation input[name="changed_min"]')["value"] == f"{cut:g}"
    assert soup(client, link.replace(f"changed_min={cut:g}", "")).select_one("#total").text != "0"


def test_sorting_by_changed_area_pages_in_order(client: TestClient, measured: dict) -> None:
    first = soup(client, "/cases?sort=changed")
    assert first.select_one('a.sort.current[data-sort="changed"]') is not None
    ids = [int(r["data-case-id"]) for r in first.select("tr.case-row")]
    second = soup(client, first.select_one('a[rel="next"]')["href"])
    ids += [int(r["data-case-id"]) for r in second.select("tr.case-row")]
    assert len(ids) == len(set(ids)) == 20
    areas = [measured[t].changed_fraction for t in ids]
    assert areas == sorted(areas, reverse=True)
    back = soup(client, second.select_one('a[rel="prev"]')["href"])
    assert [int(r["data-case-id"]) for r in back.select("tr.case-row")] == ids[:10]
    # The case page's next and previous follow the same order.
    case = soup(client, f"/cases/{ids[4]}?sort=changed")
    assert case.select_one("#next-case")["href"] == f"/cases/{ids[5]}?sort=changed"
    assert case.select_one("#prev-case")["href"] == f"/cases/{ids[3]}?sort=changed"


def test_sorting_by_ssim_outside_puts_the_worst_kept_first(client: TestClient,
                                                           measured: dict) -> None:
    page = soup(client, "/cases?sort=ssim_outside&modality=chest_xray")
    not_measured = "\u2013"  # an en dash
    values = [float(c.text) for c in page.select("td.ssim-outside") if c.text != not_measured]
    assert values and values == sorted(values)


@pytest.mark.parametrize("query", ["changed_min=150", "changed_max=-1", "ssim_outside_max=abc",
                                   "regions_min=-2", "sort=size"])
def test_bad_bounds_are_dropped_on_the_page_and_refused_by_the_api(client: TestClient,
                                                                    query: str) -> None:
    # Issue 15: the page was a 422; now it renders without the bad bound and names it.
    response = client.get(f"/cases?{query}")
    assert response.status_code == 200
    page = BeautifulSoup(response.text, "html.parser")
    assert [c.text for c in page.select("#ignored-filters code")] == [query]
    assert client.get(f"/api/cases?{query}").status_code == 422


def test_a_study_from_a_bounded_filter_records_and_shows_the_bound(
        demo_engine: Engine, settings: Settings, measured: dict) -> None:
    """The study page once failed on a numeric bound in the recorded filter (a 500)."""
    from tests.studies.conftest import make_study
    from tests.web.routes.test_reading import as_user

    setup = make_study(demo_engine)
    admin = as_user(demo_engine, settings, "study-admin", Role.admin)
    query = "modality=chest_xray&changed_min=0.5&sort=changed"
    data = {"name": "bounded", "design": "accepted", "total": "3", "seed": "7",
            "readers": [str(r.id) for r in setup.readers], "blinded": "true"}
    created = admin.post(f"/studies?{query}", data=data, follow_redirects=False)
    assert created.status_code == 303, created.text
    page = admin.get(created.headers["location"])
    assert page.status_code == 200
    shown = BeautifulSoup(page.text, "html.parser").select_one("#study-filter").get_text(" ")
    assert "changed min: 0.5" in shown and "sort" not in shown


def test_the_api_carries_metrics_and_the_difference_map(client: TestClient, measured: dict) -> None:
    listed = client.get("/api/cases?sort=changed&limit=5").json()["items"]
    top = listed[0]["final_edit_metrics"]
    assert top["changed_fraction"] == measured[listed[0]["id"]].changed_fraction
    assert [i["final_edit_metrics"]["changed_fraction"] for i in listed] == sorted(
        (i["final_edit_metrics"]["changed_fraction"] for i in listed), reverse=True)
    case = client.get(f"/api/cases/{listed[0]['id']}").json()
    attempts = [a for run in case["runs"] for a in run["attempts"]] if "runs" in case else []
    assert attempts and all(a["metrics"] is not None for a in attempts if a["image_present"])
    first = next(a for a in attempts if a["image_present"])
    assert client.get(first["difference_map_url"]).headers["content-type"] == "image/png"
