"""A posted form read into its pydantic model, keeping what was typed for the page that shows
the form again with the model's messages."""

from dataclasses import dataclass
from typing import Any, Generic, TypeVar, get_origin

from fastapi import Request
from pydantic import BaseModel, ValidationError
from starlette.datastructures import FormData

M = TypeVar("M", bound=BaseModel)


@dataclass(frozen=True)
class Posted(Generic[M]):
    fields: dict[str, Any]  # the model's fields as posted, to show again
    value: M | None  # None when a field was refused
    errors: dict[str, str]  # field name -> message


def read_form(form: FormData, model: type[M]) -> Posted[M]:
    """The model's fields from the form: every value of a list field, and an optional field
    left blank takes its default (scripts need not send an empty comment)."""
    fields: dict[str, Any] = {}
    for name, info in model.model_fields.items():
        if get_origin(info.annotation) is list:
            fields[name] = form.getlist(name)
        elif name in form and (form[name] != "" or info.is_required()):
            fields[name] = form[name]
    try:
        return Posted(fields, model.model_validate(fields), {})
    except ValidationError as error:
        return Posted(fields, None, {str(e["loc"][0]): e["msg"] for e in error.errors() if e["loc"]})


async def posted_form(request: Request) -> FormData:
    """The body, read before a sync route runs: no pooled connection waits on a slow client."""
    return await request.form()
