"""Refusals worded for people, whatever pydantic called them."""

from app.web.forms import words


def test_words_for_refusals() -> None:
    assert words({"type": "missing", "msg": "Field required"}) == "this is required"
    assert words({"type": "less_than_equal", "ctx": {"le": 20}, "msg": "x"}) == "at most 20"
    assert words({"type": "int_parsing", "msg": "Input should be a valid integer"}) == "enter a whole number"
    enum = {"type": "enum", "ctx": {"expected": "'a' or 'b'"}, "msg": "x"}
    assert words(enum) == "choose one of 'a' or 'b'"
    assert words({"type": "value_error", "msg": "Value error, unknown tag(s) x"}) == "unknown tag(s) x"
