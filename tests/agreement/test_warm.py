"""The start-up warm-up of the figures: a real report on a made-up study, never an error."""

import logging

import pytest

from app.agreement import warm
from app.agreement.report import study_report


def test_the_made_up_study_exercises_every_part_of_a_report() -> None:
    report = study_report(warm.made_up_study()).as_dict()
    overall = report["questions"]["overall"]
    assert report["n_cases"] == warm.CASES and report["intervals"]["clusters"] == warm.CASES // 3
    assert overall["judge_vs_reference"]["agreement"]["low"] is not None
    assert overall["among_readers"]["fleiss_kappa"]["value"] is not None
    assert report["intra_reader"]["a"]["overall"]["n"] > 0
    assert len(overall["by_disease"]) == 5


def test_warming_up_logs_and_never_raises(monkeypatch: pytest.MonkeyPatch,
                                          caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.INFO, logger="app.agreement.warm"):
        warm.warm_figures()
    assert "agreement figures warmed up" in caplog.messages

    def broken(*args: object, **kwargs: object) -> None:
        raise RuntimeError("no figures today")
    monkeypatch.setattr(warm, "study_report", broken)
    caplog.clear()
    with caplog.at_level(logging.INFO, logger="app.agreement.warm"):
        warm.warm_figures()
    assert [r.levelname for r in caplog.records] == ["ERROR"]
    assert "could not be warmed up" in caplog.records[0].getMessage()
