"""The JSON API speaks the same language as the pages."""

from fastapi.testclient import TestClient

from tests import demo_counts as demo


def test_list_has_total_and_items_with_ids(client: TestClient) -> None:
    data = client.get("/api/cases?limit=5").json()
    assert data["total"] == demo.TASKS and len(data["items"]) == 5
    assert all(isinstance(item["id"], int) for item in data["items"])
    following = client.get(data["next"]).json()
    assert following["items"][0]["id"] > data["items"][-1]["id"]


def test_case_detail_has_runs_attempts_verdicts_and_image_urls(client: TestClient) -> None:
    item = client.get("/api/cases?rounds=3&outcome=success&modality=chest_xray&limit=1").json()["items"][0]
    case = client.get(f"/api/cases/{item['id']}").json()
    [run] = case["runs"]
    assert run["outcome"] == "success" and run["success_round"] == 3
    assert [a["role"] for a in run["attempts"]] == ["failed", "failed", "accepted"]
    for attempt in run["attempts"]:
        assert attempt["image_url"].startswith("/images/attempt/")
        assert client.get(attempt["image_url"]).status_code == 200
    assert run["attempts"][-1]["verdicts"][0]["qualified"] is True
    assert case["source_image"]["url"].startswith("/images/source/")


def test_unknown_case_is_a_json_404(client: TestClient) -> None:
    response = client.get("/api/cases/424242")
    assert response.status_code == 404
    assert response.json() == {"detail": "no case with id 424242", "status": 404}


def test_bad_parameters_are_a_json_422(client: TestClient) -> None:
    response = client.get("/api/cases?direction=sideways")
    assert response.status_code == 422
    assert "direction" in response.json()["detail"]
    assert client.get("/api/cases?limit=0").status_code == 422


def test_both_routes_are_documented(client: TestClient) -> None:
    spec = client.get("/openapi.json").json()
    assert {"/api/cases", "/api/cases/{case_id}"} <= set(spec["paths"])
    names = {p["name"] for p in spec["paths"]["/api/cases"]["get"]["parameters"]}
    assert {"modality", "disease", "direction", "outcome", "rounds", "failed_dimension", "q",
            "limit"} <= names
    assert client.get("/docs").status_code == 200
