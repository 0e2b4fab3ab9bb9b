"""The tamper-evident log: every answer and decision recorded, one chain, and every kind of
tampering found and named."""

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest
from sqlalchemy import text
from sqlalchemy.engine import Engine
from sqlmodel import Session, col, select
from typer.testing import CliRunner

from app.audit import append, head_of, keep_log, verify
from app.cli.root import cli
from app.exports import write_pairs
from app.models import AuditRecord
from app.settings import Settings, get_settings
from app.studies.answers import AnswerIn, submit_answer, undo_last
from app.studies.models import Answer
from app.studies.versions import lock_study
from app.studies.worklist import get_assignment
from app.web.main import create_app
from tests.signing import signing_marker
from tests.studies.conftest import StudySetup, make_study

VALUES = dict(compliance="yes", structure="yes", realism="yes", fidelity="no", overall="accept",
              confidence=4)


def answered(engine: Engine, reads: int = 4) -> StudySetup:
    setup = make_study(engine)
    with Session(engine) as session:
        for n in range(1, reads + 1):
            assignment = get_assignment(session, setup.study, setup.readers[0], n)
            submit_answer(session, setup.study, assignment,
                          AnswerIn(**VALUES, submission_id=f"audit-{n:04d}"))
        undo_last(session, setup.study, setup.readers[0].id or 0)
    return setup


def test_every_answer_and_undo_is_a_record_and_the_chain_holds(engine_of: Engine) -> None:
    if engine_of.dialect.name == "postgresql":  # a server kept in local time, as many are
        with engine_of.begin() as connection:
            connection.execute(text("ALTER DATABASE " + str(engine_of.url.database)
                                    + " SET timezone = 'America/New_York'"))
        engine_of.dispose()
    setup = answered(engine_of)
    with Session(engine_of) as session:
        lock_study(session, setup.study, actor="chief")
        records = session.exec(select(AuditRecord).order_by(col(AuditRecord.id))).all()
        answers = session.exec(select(Answer)).all()
        verdict = verify(session)
        head = head_of(session)
    stored = [r for r in records if r.action == "answer stored"]
    assert len(stored) == len(answers) == 5  # four answers and the undo's retraction
    assert records[0].action == "log started" and records[-1].action == "study locked"
    assert json.loads(records[-1].body)["answers"] == 5
    assert verdict.holds and verdict.records == len(records) and verdict.rows_checked == 5
    assert verdict.head == head.digest == records[-1].digest


def _verify_cli(engine: Engine, monkeypatch: pytest.MonkeyPatch) -> tuple[int, str]:
    monkeypatch.setenv("MEDBANANA_DATABASE_URL", str(engine.url.render_as_string(hide_password=False)))
    get_settings.cache_clear()  # the answers above read the settings, as a server does
    result = CliRunner().invoke(cli, ["audit", "verify"])
    return result.exit_code, result.output


def test_the_cli_names_the_count_and_the_head(demo_engine: Engine,
                                              monkeypatch: pytest.MonkeyPatch) -> None:
    answered(demo_engine)
    code, output = _verify_cli(demo_engine, monkeypatch)
    with Session(demo_engine) as session:
        head = head_of(session)
    assert code == 0 and f"{head.records:,} records, head {head.digest}" in output


TAMPERING = {
    "a record's words": ("UPDATE audit_record SET subject = 'study 99' WHERE id = 3",
                         "record 3 .* was changed after it was written"),
    "a record removed": ("DELETE FROM audit_record WHERE id = 3",
                         "record 4 .* does not follow the record before it"),
    "an answer changed": ("UPDATE answer SET overall = 'reject' WHERE id = "
                          "(SELECT MIN(id) FROM answer)",
                          r"record \d+: answer \d+ no longer matches the digest recorded for it"),
    "an answer removed": ("DELETE FROM answer WHERE id = (SELECT MAX(id) FROM answer)",
                          r"record \d+: answer \d+ is gone"),
}


@pytest.mark.parametrize("case", list(TAMPERING))
def test_tampering_is_found_and_the_first_bad_record_named(
        demo_engine: Engine, monkeypatch: pytest.MonkeyPatch, case: str) -> None:
    answered(demo_engine)
    statement, named = TAMPERING[case]
    with demo_engine.begin() as connection:
        connection.execute(text(statement))
    code, output = _verify_cli(demo_engine, monkeypatch)
    assert code == 1
    assert output.startswith("audit log does not hold: ")
    assert re.search(named, output), output


def test_an_answer_slipped_in_without_a_record_is_named(demo_engine: Engine) -> None:
    answered(demo_engine)
    with Session(demo_engine) as session:
        last = session.exec(select(Answer).order_by(col(Answer.id).desc())).first()
        assert last is not None
        session.add(Answer(**{**last.model_dump(exclude={"id"}), "version": last.version + 1,
                              "submission_id": "forged-0001"}))
        session.commit()
        verdict = verify(session)
    assert verdict.problem is not None and "has no record in the log" in verdict.problem


def test_an_exports_manifest_holds_the_head_it_was_made_at(demo_engine: Engine, tmp_path: Path) -> None:
    answered(demo_engine)
    with Session(demo_engine) as session:
        before = head_of(session)
    write_pairs(demo_engine, tmp_path / "pairs", signing_marker())
    manifest = json.loads((tmp_path / "pairs" / "manifest.json").read_text())
    assert manifest["audit_log"]["head_sha256"] == before.digest
    with Session(demo_engine) as session:
        last = session.exec(select(AuditRecord).order_by(col(AuditRecord.id).desc())).first()
        assert verify(session).holds
    assert last is not None and last.action == "export" and last.prev == before.digest


APPEND = r'''
import sys
from sqlmodel import Session
from app.audit import append
from app.db import make_engine
engine = make_engine(sys.argv[1])
for n in range(int(sys.argv[3])):
    with Session(engine) as session:
        append(session, "test", actor=sys.argv[2], body={"n": n})
        session.commit()
'''


@pytest.mark.postgres
def test_several_processes_append_to_one_chain_on_postgres(pg_engine: Engine) -> None:
    url = pg_engine.url.render_as_string(hide_password=False)
    workers = [subprocess.Popen([sys.executable, "-c", APPEND, url, f"process-{i}", "25"])
               for i in range(4)]
    assert all(worker.wait(timeout=120) == 0 for worker in workers)
    with Session(pg_engine) as session:
        verdict = verify(session)
        digests = session.exec(select(AuditRecord.prev)).all()
    assert verdict.holds, verdict.problem
    assert verdict.records == 101  # the log's start and 4 x 25
    assert len(set(digests)) == len(digests)  # no record has two successors: no fork


def test_two_sessions_on_sqlite_append_in_turn(engine: Engine) -> None:
    with Session(engine) as first, Session(engine) as second:
        append(first, "a", actor="one")
        first.commit()
        append(second, "b", actor="two")
        second.commit()
        assert verify(first).holds and head_of(first).records == 3


def replace_settings(settings: Settings, **changes: object) -> Settings:
    return settings.model_copy(update=changes)


def test_a_server_started_without_the_log_writes_none_and_verify_names_what_it_missed(
        demo_engine: Engine, settings: Settings) -> None:
    setup = answered(demo_engine, reads=1)
    create_app(replace_settings(settings, audit_log=False), demo_engine)
    try:
        with Session(demo_engine) as session:
            assignment = get_assignment(session, setup.study, setup.readers[1], 1)
            submit_answer(session, setup.study, assignment,
                          AnswerIn(**VALUES, submission_id="unlogged-0001"))
            verdict = verify(session)
    finally:
        keep_log(True)
    assert verdict.problem is not None and "has no record in the log" in verdict.problem
