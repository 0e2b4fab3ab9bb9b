"""The quality report /quality opens on, computed when the server starts."""

import logging

import pytest
from sqlalchemy.engine import Engine
from sqlmodel import Session

from app.quality import report as quality
from tests.quality.conftest import read_study, validation_study


def test_the_start_computes_the_report_the_page_opens_on(
        demo_engine: Engine, monkeypatch: pytest.MonkeyPatch,
        caplog: pytest.LogCaptureFixture) -> None:
    read_study(demo_engine, validation_study(demo_engine))
    quality.forget()
    with caplog.at_level(logging.INFO, logger="app.quality.report"):
        quality.warm(demo_engine)
    assert "computed in advance" in caplog.text

    def not_again(*args: object, **kwargs: object) -> None:
        raise AssertionError("the page computed the report again")
    monkeypatch.setattr(quality, "_compute", not_again)
    with Session(demo_engine) as session:
        assert quality.quality_report(session).populations


def test_a_start_that_cannot_compute_it_logs_and_goes_on(
        demo_engine: Engine, monkeypatch: pytest.MonkeyPatch,
        caplog: pytest.LogCaptureFixture) -> None:
    def broken(*args: object, **kwargs: object) -> None:
        raise RuntimeError("the database went away")
    monkeypatch.setattr(quality, "quality_report", broken)
    with caplog.at_level(logging.ERROR, logger="app.quality.report"):
        quality.warm(demo_engine)
    assert "could not be computed in advance" in caplog.text
