"""Templates compiled at start: every one of them, and a failure logged, not raised."""

import logging

import pytest
from jinja2 import TemplateSyntaxError

from app.web import templating


def test_every_template_is_compiled_in_advance() -> None:
    templating.templates.env.cache.clear()  # type: ignore[union-attr]
    templating.compile_templates()
    names = templating.templates.env.list_templates(extensions=["html"])
    kept = {key[1] for key in templating.templates.env.cache}  # type: ignore[union-attr]
    assert len(names) > 40 and set(names) <= kept


def test_a_template_that_does_not_compile_is_logged_and_the_server_goes_on(
        monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture) -> None:
    def broken(name: str) -> None:
        raise TemplateSyntaxError("unexpected end of template", 1, name)
    monkeypatch.setattr(templating.templates.env, "get_template", broken)
    with caplog.at_level(logging.ERROR, logger="app.web.templating"):
        templating.compile_templates()
    assert "could not be compiled in advance" in caplog.text
