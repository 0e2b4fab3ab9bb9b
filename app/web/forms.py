"""Forms that never lose work: a posted form read into its pydantic model, keeping what was
typed, with each refusal worded for a person and tied to its field, so the page shows the form
again with the message beside the field. Every HTML form goes through here; a domain error
that names its field (`Invalid.field`) joins the same messages."""

from collections.abc import Mapping
from dataclasses import dataclass
from types import UnionType
from typing import Any, Generic, TypeVar, Union, get_args, get_origin

from fastapi import Request
from pydantic import BaseModel, ValidationError
from starlette.datastructures import FormData

from app.errors import Invalid

M = TypeVar("M", bound=BaseModel)


@dataclass(frozen=True)
class Posted(Generic[M]):
    fields: dict[str, Any]  # the model's fields as posted, to show again
    value: M | None  # None when a field was refused
    errors: dict[str, str]  # field name -> message

    def refused(self, error: Invalid) -> "Posted[M]":
        """The same form refused by the domain: the message goes beside its field, or
        above the form (under "form") when it names none."""
        return Posted(self.fields, None, {**self.errors, error.field or "form": str(error)})


def words(error: Mapping[str, Any]) -> str:
    """A pydantic refusal as a person reads it ("this is required", not "Field required")."""
    kind, context = error.get("type", ""), error.get("ctx") or {}
    if kind == "missing":
        return "this is required"
    if kind in ("int_parsing", "int_from_float"):
        return "enter a whole number"
    if kind == "float_parsing":
        return "enter a number"
    if kind == "bool_parsing":
        return "tick the box or leave it empty"
    if kind == "enum" or kind == "literal_error":
        return f"choose one of {context.get('expected', 'the listed values')}"
    # A strict bound is worded as one: "at least 0" would invite the 0 just refused.
    if kind == "greater_than_equal":
        return f"at least {context.get('ge')}"
    if kind == "greater_than":
        bound = context.get("gt")
        return f"greater than {bound:g}" if isinstance(bound, float) else f"greater than {bound}"
    if kind == "less_than_equal":
        return f"at most {context.get('le')}"
    if kind == "less_than":
        return f"less than {context.get('lt')}"
    if kind == "string_too_long":
        return f"at most {context.get('max_length')} characters"
    if kind == "string_too_short":
        return f"at least {context.get('min_length')} characters"
    if kind == "too_long":
        return f"at most {context.get('max_length')} values"
    if kind == "string_pattern_mismatch":
        return "not in the expected form"
    message = str(error.get("msg", "not accepted"))
    # A validator's own ValueError is already worded for people; pydantic prefixes it.
    return message.removeprefix("Value error, ")


def read_form(form: FormData, model: type[M]) -> Posted[M]:
    """The model's fields from the form: every value of a list field, and an optional field
    left blank takes its default (scripts need not send an empty comment)."""
    fields: dict[str, Any] = {}
    for name, info in model.model_fields.items():
        if _is_list(info.annotation):
            fields[name] = form.getlist(name)
        elif name in form and (form[name] != "" or info.is_required()):
            fields[name] = form[name]
    try:
        return Posted(fields, model.model_validate(fields), {})
    except ValidationError as error:
        messages: dict[str, str] = {}
        for e in error.errors():
            if e["loc"]:
                messages.setdefault(str(e["loc"][0]), words(e))
        return Posted(fields, None, messages)


def _is_list(annotation: Any) -> bool:
    """list[...] or list[...] | None: a field the form repeats, one value per box."""
    if get_origin(annotation) is list:
        return True
    return get_origin(annotation) in (Union, UnionType) and any(
        get_origin(a) is list for a in get_args(annotation))


async def posted_form(request: Request) -> FormData:
    """The body, read before a sync route runs: no pooled connection waits on a slow client."""
    return await request.form()
