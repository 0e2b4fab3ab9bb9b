"""Every export's cells: formulas neutralised, numbers untouched."""

import csv
import io

import pytest

from app.csv_cells import CsvRows, iter_dict_csv, neutralise


@pytest.mark.parametrize("text", ["=1+1", "+cmd|' /C calc'!A0", "-2+3", "@SUM(A1)", "\t=1",
                                  "\r=1", '=HYPERLINK("http://x","y")', "-", "+", "="])
def test_formula_starts_get_an_apostrophe(text: str) -> None:
    assert neutralise(text) == "'" + text


@pytest.mark.parametrize("value", [-0.12, -3, 0, 1.5e-9, None, True, "-0.12", "+3", "-4e-05",
                                   "plain text", "", "a=b", "'=already"])
def test_numbers_and_ordinary_text_are_left_alone(value: object) -> None:
    assert neutralise(value) == value


def test_rows_and_dict_rows_go_through_the_same_cells() -> None:
    rows = CsvRows()
    rows.writerow(["=x", -1.0, "ok"])
    assert next(csv.reader(io.StringIO(rows.take()))) == ["'=x", "-1.0", "ok"]
    assert rows.take() == ""
    text = "".join(iter_dict_csv([{"a": "@x", "b": 2}, {"b": "-y", "c": "z"}]))
    assert list(csv.reader(io.StringIO(text))) == [["a", "b", "c"], ["'@x", "2", ""],
                                                   ["", "'-y", "z"]]
