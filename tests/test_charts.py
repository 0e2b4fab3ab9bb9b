"""The charts say what they can: a row with no case is left out, an inestimable one says so."""

from bs4 import BeautifulSoup

from app.charts import Point, interval_chart


def texts(svg: str) -> str:
    return " ".join(BeautifulSoup(svg, "html.parser").stripped_strings)


def test_rows_without_cases_are_left_out_and_no_row_reads_undefined() -> None:
    svg = interval_chart([Point("compliance", "judge", 0.8, 0.7, 0.9, 40),
                          Point("structure", "judge", None, None, None, 0),
                          Point("realism", "judge", None, None, None, 3)], "Agreement", "share")
    drawn = texts(svg)
    assert "undefined" not in drawn and "structure" not in drawn
    assert "cannot be estimated here (n=3)" in drawn and "n=40" in drawn


def test_a_chart_with_nothing_read_says_so() -> None:
    svg = interval_chart([Point("overall", "judge", None, None, None, 0)], "Agreement", "share")
    assert "nothing to draw yet" in texts(svg)
