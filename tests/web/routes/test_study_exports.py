"""Every design's study exports: each works for that design, or is refused with a 4xx naming
the design's own page before any byte is sent; and `medbanana stats` likewise."""

import csv
import io
import json
from pathlib import Path

import pytest
from sqlalchemy.engine import Engine
from sqlmodel import Session, select
from typer.testing import CliRunner

from app.models import Role
from app.settings import Settings
from app.studies.models import PairAnswer, StudyItem, StudyPair
from tests.designs.pairwise.test_export import read_study
from tests.web.routes.test_accounts import client_for


def _rows(text: str) -> list[dict[str, str]]:
    return list(csv.DictReader(io.StringIO(text)))


def test_a_pairwise_studys_answers_and_design_export_whole(demo_engine: Engine,
                                                           settings: Settings) -> None:
    study_id = read_study(demo_engine)
    admin = client_for(demo_engine, settings, "boss", Role.admin)
    answers = admin.get(f"/studies/{study_id}/answers.csv")
    assert answers.status_code == 200
    rows = _rows(answers.text)
    with Session(demo_engine) as session:
        stored = session.exec(select(PairAnswer)).all()
        pairs = {p.item_id: p for p in session.exec(select(StudyPair))}
        items = {i.uid: i for i in session.exec(select(StudyItem))}
    assert len(rows) == len(stored) == 8
    assert {r["choice"] for r in rows} <= {"first", "second", "equal", "neither"}
    assert {r["shown_left"] for r in rows} <= {"first", "second"}
    design = _rows(admin.get(f"/studies/{study_id}/design.csv").text)
    for row in design:  # both edits of each pair, so the sample can be rebuilt
        item = items[row["item"]]
        pair = pairs[item.id]
        assert int(row["first_attempt_id"]) == pair.first_attempt_id
        assert int(row["second_attempt_id"]) == item.attempt_id
        assert row["pair_kind"] == pair.kind


def test_reasons_and_comments_of_pairs_reach_the_answers_export(demo_engine: Engine,
                                                                settings: Settings) -> None:
    from app.designs.pairwise.answers import PairAnswerIn, submit
    from app.studies.models import Assignment, Study

    study_id = read_study(demo_engine)
    with Session(demo_engine) as session:
        study = session.get(Study, study_id)
        assignment = session.exec(select(Assignment).where(Assignment.study_id == study_id)
                                  .order_by(Assignment.id)).first()
        assert study is not None and assignment is not None
        submit(session, study, assignment, PairAnswerIn(
            call="a", confidence=2, tags=["unnatural_edge"], comment="halo at the edge",
            submission_id="reasoned-0001"))
    admin = client_for(demo_engine, settings, "boss", Role.admin)
    rows = _rows(admin.get(f"/studies/{study_id}/answers.csv").text)
    newest = [r for r in rows if r["comment"] == "halo at the edge"]
    assert len(newest) == 1 and "unnatural_edge" in newest[0]["tags"]


@pytest.mark.parametrize("path", ["answers-long.csv", "agreement.json", "report.html",
                                  "agreement/judge-vs-reference.csv"])
def test_what_a_pairwise_study_has_not_is_refused_naming_its_own_page(
        demo_engine: Engine, settings: Settings, path: str) -> None:
    study_id = read_study(demo_engine)
    admin = client_for(demo_engine, settings, "boss", Role.admin)
    refused = admin.get(f"/studies/{study_id}/{path}")
    assert refused.status_code == 409
    said = refused.text if "json" not in refused.headers["content-type"] else json.dumps(refused.json())
    assert f"/studies/{study_id}/pairwise" in said and "pairwise" in said
    assert "real-or-edited" not in said


def test_a_real_or_edited_studys_answers_export_and_refusals(demo_engine: Engine,
                                                             settings: Settings) -> None:
    from tests.studies.conftest import make_real_or_edited

    turing = make_real_or_edited(demo_engine)
    study_id = turing.study.id
    admin = client_for(demo_engine, settings, "boss", Role.admin)
    answers = admin.get(f"/studies/{study_id}/answers.csv")
    assert answers.status_code == 200
    header = next(csv.reader(io.StringIO(answers.text)))
    assert "edited" in header and "confidence" in header
    long = admin.get(f"/studies/{study_id}/answers-long.csv")
    assert long.status_code == 409 and f"/studies/{study_id}/real-or-edited" in long.text
    assert admin.get(f"/studies/{study_id}/design.csv").status_code == 200


def test_stats_refuses_a_pairwise_study_naming_its_page(demo_engine: Engine, tmp_path: Path,
                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    from concurrent.futures import ThreadPoolExecutor

    from app.cli import cli

    study_id = read_study(demo_engine)
    monkeypatch.setenv("MEDBANANA_DATABASE_URL", demo_engine.url.render_as_string(hide_password=False))
    monkeypatch.setenv("MEDBANANA_VAR_DIR", str(tmp_path / "var"))
    for fmt in ("json", "csv", "html"):
        with ThreadPoolExecutor(1) as pool:
            result = pool.submit(CliRunner().invoke, cli,
                                 ["stats", str(study_id), "--format", fmt]).result()
        assert result.exit_code == 1, result.output
        assert result.exception is None or isinstance(result.exception, SystemExit)
        assert f"/studies/{study_id}/pairwise" in result.output
