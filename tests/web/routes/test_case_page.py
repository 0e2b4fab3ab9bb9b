"""/cases/{id}: original, accepted edit, failed rounds in order, verdicts, neighbours."""

from bs4 import BeautifulSoup
from fastapi.testclient import TestClient


def case_id(client: TestClient, query: str) -> int:
    return int(client.get(f"/api/cases?{query}&limit=1").json()["items"][0]["id"])


def page(client: TestClient, url: str) -> BeautifulSoup:
    response = client.get(url)
    assert response.status_code == 200, response.text
    return BeautifulSoup(response.text, "html.parser")


def test_panes_are_original_accepted_then_failed_rounds(client: TestClient) -> None:
    html = page(client, f"/cases/{case_id(client, 'rounds=4&outcome=success')}")
    panes = html.select("#panes > figure.pane")
    assert [p["data-role"] for p in panes] == ["original", "accepted", "failed", "failed", "failed"]
    assert [p.get("data-round") for p in panes[1:]] == ["4", "1", "2", "3"]
    for pane in panes[2:]:
        assert pane.select_one('[data-dimension="qualified"]')["data-value"] in ("fail", "none")
        assert pane.select_one("blockquote.instruction").text.strip()
    accepted = panes[1]
    assert accepted.select_one('[data-dimension="qualified"]')["data-value"] == "pass"
    assert accepted.select_one('[data-dimension="fidelity"]')["data-value"] == "none"
    assert accepted.select_one("details summary").text == "Judge's thinking"


def test_failed_case_has_five_rounds_and_an_edit_error(client: TestClient) -> None:
    html = page(client, f"/cases/{case_id(client, 'outcome=failed')}")
    panes = html.select("#panes > figure.pane")
    assert [p["data-role"] for p in panes] == ["original"] + ["failed"] * 5
    assert "No image in response" in panes[2].select_one(".placeholder").text


def test_missing_original_shows_a_placeholder(client: TestClient) -> None:
    data = client.get("/api/cases?q=glioma&direction=remove&limit=100").json()
    item = next(i for i in data["items"] if i["task_key"] == "Te-gl_0002-glioma")
    html = page(client, item["url"])
    original = html.select_one('figure[data-role="original"]')
    assert original.select_one("img") is None
    assert "Image missing" in original.select_one(".placeholder").text


def test_api_failed_case_explains_the_failure(client: TestClient) -> None:
    html = page(client, f"/cases/{case_id(client, 'outcome=api_failed')}")
    notice = html.select_one("#api-failure")
    assert "edit_image" in notice.text and "503" in notice.text


def test_neighbours_follow_the_filter(client: TestClient) -> None:
    ids = [i["id"] for i in client.get("/api/cases?modality=fundus&limit=100").json()["items"]]
    html = page(client, f"/cases/{ids[1]}?modality=fundus")
    assert html.select_one("#next-case")["href"] == f"/cases/{ids[2]}?modality=fundus"
    assert html.select_one("#prev-case")["href"] == f"/cases/{ids[0]}?modality=fundus"
    first = page(client, f"/cases/{ids[0]}?modality=fundus")
    assert first.select_one("#prev-case") is None


def test_every_image_on_the_page_resolves(client: TestClient) -> None:
    html = page(client, f"/cases/{case_id(client, 'rounds=5&outcome=success')}")
    assert len(html.select("#panes img.layer-base")) == 6  # original, four failed rounds, accepted
    # Each pane also holds the image flicker and swipe show, and a difference map to fetch.
    sources = {img["src"] for img in html.select("#panes img")}
    sources |= {img["data-full"] for img in html.select("#panes img[data-full]")}
    for src in sources:
        response = client.get(src)
        assert response.status_code == 200 and response.headers["content-type"] == "image/jpeg"
    diffs = {v["data-diff"] for v in html.select("#panes .viewport[data-diff]")}
    assert len(diffs) == 5  # one per edit; the original's is the accepted edit's
    for src in diffs:
        assert client.get(src).headers["content-type"] == "image/png"


def test_unknown_case_is_404_and_bad_id_is_422(client: TestClient) -> None:
    response = client.get("/cases/999999")
    assert response.status_code == 404
    assert "999999" in BeautifulSoup(response.text, "html.parser").select_one(".error-box").text
    assert client.get("/cases/abc").status_code == 422
    assert client.get(f"/cases/{case_id(client, 'outcome=success')}?run=999999").status_code == 404
