"""Refusals worded for people, whatever pydantic called them."""

from app.web.forms import words


def test_words_for_refusals() -> None:
    assert words({"type": "missing", "msg": "Field required"}) == "this is required"
    assert words({"type": "less_than_equal", "ctx": {"le": 20}, "msg": "x"}) == "at most 20"
    assert words({"type": "int_parsing", "msg": "Input should be a valid integer"}) == "enter a whole number"
    enum = {"type": "enum", "ctx": {"expected": "'a' or 'b'"}, "msg": "x"}
    assert words(enum) == "choose one of 'a' or 'b'"
    assert words({"type": "value_error", "msg": "Value error, unknown tag(s) x"}) == "unknown tag(s) x"


def test_a_strict_bound_is_worded_as_strict() -> None:
    # "at least 0.0" was shown for a target of 0 refused by gt=0: it invited the same 0 again.
    assert words({"type": "greater_than", "ctx": {"gt": 0.0}, "msg": "x"}) == "greater than 0"
    assert words({"type": "greater_than_equal", "ctx": {"ge": 1}, "msg": "x"}) == "at least 1"
    assert words({"type": "less_than", "ctx": {"lt": 5}, "msg": "x"}) == "less than 5"
