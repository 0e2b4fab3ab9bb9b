"""/cases: facets, filters, search, keyset pages, and the htmx partial."""

from urllib.parse import quote

from bs4 import BeautifulSoup
from fastapi.testclient import TestClient
from sqlalchemy import text

from tests import demo_counts as demo
from tests.accounts import token_client


def soup(client: TestClient, url: str, **headers: str) -> BeautifulSoup:
    response = client.get(url, headers=headers)
    assert response.status_code == 200, response.text
    return BeautifulSoup(response.text, "html.parser")


def facet_counts(page: BeautifulSoup, facet: str) -> dict[str, int]:
    links = page.select(f'.facet[data-facet="{facet}"] a.facet-value')
    return {a["data-value"]: int(a.select_one(".count").text) for a in links}


def test_list_shows_total_and_facets(client: TestClient) -> None:
    page = soup(client, "/cases")
    assert page.select_one("#total").text == str(demo.TASKS)
    assert facet_counts(page, "modality") == demo.MODALITIES
    assert facet_counts(page, "outcome") == demo.OUTCOMES
    assert len(page.select("tr.case-row")) == 10  # page_size in the test settings
    assert page.select_one("#synthetic-banner") is not None


def test_filter_by_modality_keeps_other_choices_visible(client: TestClient) -> None:
    page = soup(client, "/cases?modality=fundus")
    assert page.select_one("#total").text == "12"
    # Its own facet ignores its own choice.
    assert facet_counts(page, "modality")["chest_xray"] == demo.MODALITIES["chest_xray"]
    assert sum(facet_counts(page, "direction").values()) == 12
    selected = page.select('.facet[data-facet="modality"] a.selected')
    assert [a["data-value"] for a in selected] == ["fundus"]
    for link in page.select("a.case-link"):
        assert link["href"].endswith("?modality=fundus")


def test_values_within_a_facet_are_alternatives(client: TestClient) -> None:
    page = soup(client, "/cases?modality=fundus&modality=brain_mri&outcome=failed")
    expected = client.get("/api/cases?modality=fundus&modality=brain_mri&outcome=failed").json()
    assert page.select_one("#total").text == str(expected["total"])
    assert {i["modality"] for i in expected["items"]} <= {"fundus", "brain_mri"}
    assert {i["outcome"] for i in expected["items"]} == {"failed"}


def test_failed_dimension_and_rounds_filters(client: TestClient) -> None:
    data = client.get("/api/cases?failed_dimension=structure&limit=100").json()
    assert data["total"] > 0
    assert all("structure" in item["failed_dimensions"] for item in data["items"])
    rounds = client.get("/api/cases?rounds=5&outcome=success").json()
    assert rounds["total"] > 0 and all(i["rounds"] == 5 for i in rounds["items"])


def test_text_search_over_instructions_and_reasons(client: TestClient) -> None:
    data = client.get("/api/cases?q=pneumothorax&limit=100").json()
    assert data["total"] > 0
    assert {i["disease"] for i in data["items"]} == {"Pneumothorax"}
    reason_only = client.get("/api/cases?q=stamped&limit=100").json()  # only in judge reasons
    assert reason_only["total"] > 0
    prefix = client.get("/api/cases?q=pneumoth").json()
    assert prefix["total"] == data["total"]


def test_search_text_with_quotes_and_operators_is_harmless(client: TestClient) -> None:
    for q in ['"', "'", "AND OR NOT", "a*b", "((", "-", "édème"]:
        assert client.get("/cases", params={"q": q}).status_code == 200


def test_htmx_request_gets_the_partial_only(client: TestClient) -> None:
    response = client.get("/cases?direction=remove", headers={"HX-Request": "true"})
    assert response.status_code == 200
    page = BeautifulSoup(response.text, "html.parser")
    assert page.find("html") is None
    roots = [el for el in page.contents if getattr(el, "name", None)]
    assert [r.get("id") for r in roots] == ["case-browser"]
    assert page.select_one("#total").text == str(demo.DIRECTIONS["remove"])


def test_history_restore_gets_the_full_page(client: TestClient) -> None:
    page = soup(client, "/cases", **{"HX-Request": "true", "HX-History-Restore-Request": "true"})
    assert page.find("html") is not None


def test_keyset_pages_cover_every_case_once(client: TestClient) -> None:
    seen: list[int] = []
    url = "/cases"
    while url:
        page = soup(client, url)
        seen += [int(r["data-case-id"]) for r in page.select("tr.case-row")]
        nxt = page.select_one('.pager a[rel="next"]')
        url = nxt["href"] if nxt else ""
    assert len(seen) == demo.TASKS and len(set(seen)) == demo.TASKS and seen == sorted(seen)


def test_previous_page_link_goes_back(client: TestClient) -> None:
    first = soup(client, "/cases")
    second = soup(client, first.select_one('.pager a[rel="next"]')["href"])
    back = soup(client, second.select_one('.pager a[rel="prev"]')["href"])
    ids = lambda p: [r["data-case-id"] for r in p.select("tr.case-row")]  # noqa: E731
    assert ids(back) == ids(first)


def test_a_bad_bookmark_loses_only_its_bad_values_with_a_notice(client: TestClient) -> None:
    # Issue 15: a bad value in the address was a 422 page; now the page renders without it.
    response = client.get("/cases?modality=ct_scan&modality=FUNDUS&sort=bogus&changed_min=500"
                          "&direction=Remove&rounds=2")
    assert response.status_code == 200
    page = BeautifulSoup(response.text, "html.parser")
    notice = page.select_one("#ignored-filters")
    assert [c.text for c in notice.select("code")] == ["modality=ct_scan", "changed_min=500",
                                                       "sort=bogus"]
    expected = client.get("/api/cases?modality=fundus&direction=remove&rounds=2").json()
    assert page.select_one("#total").text.replace(",", "") == str(expected["total"])
    # The links of the page carry the filter as it was kept, so the bad values are gone.
    assert page.select_one('input[name="modality"][value="fundus"]') is not None
    assert page.select_one('input[name="modality"][value="ct_scan"]') is None


def test_the_api_still_refuses_a_bad_filter_value(client: TestClient) -> None:
    assert client.get("/api/cases?modality=ct_scan").status_code == 422
    assert client.get("/api/cases?sort=bogus").status_code == 422


def test_a_case_page_with_a_bad_filter_keeps_its_neighbours(client: TestClient) -> None:
    first = client.get("/api/cases?modality=fundus&limit=2").json()["items"]
    page = BeautifulSoup(client.get(f"/cases/{first[0]['id']}?modality=fundus&modality=CT&"
                                    "outcome=bogus").text, "html.parser")
    assert [c.text for c in page.select("#ignored-filters code")] == ["modality=CT",
                                                                      "outcome=bogus"]
    assert page.select_one("#next-case")["href"].endswith(f"/cases/{first[1]['id']}?modality=fundus")


def test_bad_page_cursor_is_a_422(client: TestClient) -> None:
    assert client.get("/cases?after=abc").status_code == 422
    assert client.get("/cases?after=-1").status_code == 422


def test_empty_result(client: TestClient) -> None:
    page = soup(client, "/cases?q=zzzzzzzz")
    assert page.select_one("#total").text == "0"
    assert page.select_one(".empty") is not None


def test_an_empty_database_says_how_to_import(engine, settings) -> None:  # type: ignore[no-untyped-def]
    from app.web.main import create_app

    client = token_client(create_app(settings, engine), engine)
    page = BeautifulSoup(client.get("/cases").text, "html.parser")
    assert page.select_one("#total").text == "0"
    assert "medbanana import" in page.select_one("#nothing-imported").text


def test_dimensions_failed_before_a_success_are_quiet_and_named_as_earlier(client: TestClient) -> None:
    page = soup(client, "/cases?outcome=success&failed_dimension=structure&limit=20")
    rows = page.select("tr.case-row")
    assert rows
    for row in rows:
        cell = row.select_one("td.failed-on")
        assert cell.select(".badge") and not cell.select(".badge.fail")
        assert "earlier rounds" in cell.get_text()
    failed = soup(client, "/cases?outcome=failed&limit=20").select("tr.case-row td.failed-on")
    assert failed and all(c.select(".badge.fail") for c in failed if c.select(".badge"))


def _paged_ids(client: TestClient, url: str, rel: str) -> list[int]:
    seen: list[int] = []
    while url:
        page = soup(client, url)
        seen += [int(r["data-case-id"]) for r in page.select("tr.case-row")]
        link = page.select_one(f'.pager a[rel="{rel}"]')
        url = link["href"] if link else ""
    return seen


def test_pages_and_neighbours_read_within_the_filters_id_span(client: TestClient,
                                                              demo_engine) -> None:  # type: ignore[no-untyped-def]
    # A page by id starts at the lowest id the facet counts give for the filter: every
    # selected task is still reached, forwards, backwards and from case to case.
    with demo_engine.connect() as conn:
        chosen = conn.execute(text(
            "SELECT modality FROM task GROUP BY modality ORDER BY min(id) DESC LIMIT 1")).scalar()
        wanted = [row[0] for row in conn.execute(text(
            "SELECT id FROM task WHERE modality = :m ORDER BY id"),
            {"m": chosen})]
    assert len(wanted) > 10  # more than a page (page_size is 10 in the tests)
    query = f"modality={quote(chosen)}"
    forwards = _paged_ids(client, f"/cases?{query}", "next")
    assert forwards == wanted
    last_page = soup(client, f"/cases?{query}&before={wanted[-1] + 1}")
    backwards = [int(r["data-case-id"]) for r in last_page.select("tr.case-row")]
    assert backwards == wanted[-10:]
    first = soup(client, f"/cases/{wanted[0]}?{query}")
    assert first.select_one("#prev-case") is None
    assert first.select_one("#next-case")["href"].split("?")[0].endswith(f"/cases/{wanted[1]}")
    last = soup(client, f"/cases/{wanted[-1]}?{query}")
    assert last.select_one("#next-case") is None
    assert last.select_one("#prev-case")["href"].split("?")[0].endswith(f"/cases/{wanted[-2]}")
    assert soup(client, "/cases?disease=Nothing").select("tr.case-row") == []
