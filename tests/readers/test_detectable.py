"""What the form says the known-answer pause can see: how many known-answer cases each
reader gets, whether that can pause anyone, and the simulated detection (issue 53)."""

from bs4 import BeautifulSoup
from fastapi.testclient import TestClient

from app.readers.detectable import outlook
from app.readers.detectable_table import TABLE
from app.studies.known_answers import planned_known


def test_too_few_known_answer_cases_can_pause_nobody() -> None:
    # The demo's 10 % share of 24 cases: 3 known-answer cases a reader.
    known = planned_known(0.1, 24, 2, None, 0.0)
    assert known == 3
    found = outlook(known, 2)
    assert not found.can_pause and found.too_few and found.caught is None


def test_the_figures_come_from_the_cell_that_claims_no_more() -> None:
    found = outlook(45, 3)  # between the table's 40 and 50 cases: the 40 row
    assert found.can_pause and found.simulated_known == 40 and found.simulated_readers == 3
    assert (found.steady, found.caught) == TABLE[3][40]
    more_readers = outlook(45, 7)  # between 6 and 8 readers: the 8 column (a stricter bar)
    assert more_readers.simulated_readers == 8
    # Longer lists see more, for the same readers.
    assert outlook(300, 3).caught > outlook(20, 3).caught  # type: ignore[operator]


def test_the_form_says_how_many_known_answer_cases_and_what_they_can_see(client: TestClient) -> None:
    def line(query: str) -> BeautifulSoup:
        html = client.get(f"/studies/new/known-outlook?{query}").text
        return BeautifulSoup(html, "html.parser").select_one("#known-outlook-line")

    few = line("known_share=10&n:pass=12&n:fail=12&readers=1&readers=2")
    assert few["data-known"] == "3" and "Too few to pause anyone" in few.text
    many = line("known_share=20&total=400&readers=1&readers=2&readers=3")
    assert many["data-known"] == "100" and "%" in many.text and "n = " in many.text
    assert "Too few to pause" not in many.text
    waiting = line("known_share=10&total=100")
    assert "Tick readers" in waiting.text
    # Nonsense typed in is no error: the form's own check names the field.
    assert client.get("/studies/new/known-outlook?known_share=nan&total=x").status_code == 200


def test_a_number_too_long_or_too_large_is_no_error(client: TestClient) -> None:
    """Five thousand digits were past Python's int limit (a 500); a huge count would have
    had the test's bar simulated for millions of cases."""
    huge = client.get("/studies/new/known-outlook?known_share=50&n:pass=" + "9" * 5000
                      + "&readers=1&readers=2")
    assert huge.status_code == 200
    assert client.get("/studies/new/budget?design=adaptive&total=" + "9" * 12).status_code == 200
    capped = client.get("/studies/new/known-outlook?known_share=50&total=999999999&readers=1")
    line = BeautifulSoup(capped.text, "html.parser").select_one("#known-outlook-line")
    assert capped.status_code == 200 and line is not None and int(line["data-known"]) <= 20_000
