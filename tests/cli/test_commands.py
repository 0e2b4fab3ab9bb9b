"""The medbanana command line: import summary, clear errors, demo data."""

import json
import re
from pathlib import Path

import pytest
from typer.testing import CliRunner

from app.cli import cli
from app.models import Direction
from tests import demo_counts as demo
from tests import factories


@pytest.fixture
def runner(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> CliRunner:
    monkeypatch.setenv("MEDBANANA_VAR_DIR", str(tmp_path / "var"))
    from app.settings import get_settings

    get_settings.cache_clear()
    yield CliRunner()
    get_settings.cache_clear()


def test_import_prints_a_summary_with_problems(runner: CliRunner, demo_dir: Path) -> None:
    result = runner.invoke(cli, ["import", str(demo_dir / "run"), "--source", str(demo_dir / "source")])
    assert result.exit_code == 0, result.output
    assert "tasks added" in result.output and str(demo.TASKS) in result.output
    assert "missing_original" in result.output and "Te-gl_0002-glioma" in result.output
    # Its progress named no unit ("importing: 0 of 718673").
    assert re.search(r"importing: [\d,]+ of [\d,]+ bytes of run files", result.output)


def test_invalid_json_exits_1_naming_the_file(runner: CliRunner, tmp_path: Path) -> None:
    factories.write_folder(tmp_path / "run", "Chest-XRay", Direction.add, '{"x-1-Y": [')
    result = runner.invoke(cli, ["import", str(tmp_path / "run")])
    assert result.exit_code == 1
    assert "Chest-XRay-edit/all_conversations.json" in result.output
    assert "not valid JSON" in result.output
    assert "Traceback" not in result.output


def test_missing_run_root_exits_1(runner: CliRunner, tmp_path: Path) -> None:
    result = runner.invoke(cli, ["import", str(tmp_path / "absent")])
    assert result.exit_code == 1 and "not a folder" in result.output


def test_demo_data_writes_the_scripts_layout(runner: CliRunner, tmp_path: Path) -> None:
    result = runner.invoke(cli, ["demo-data", str(tmp_path / "demo"), "--size", "64"])
    assert result.exit_code == 0, result.output
    progress = json.loads((tmp_path / "demo/run/Chest-XRay-edit/progress.json").read_text())
    assert set(progress.values()) == {"success", "failed", "api_failed"}
    # With no terminal (make's output in a log), the drawing still says how far it is.
    said = result.output + (result.stderr if result.stderr_bytes is not None else "")
    lines = [line for line in said.splitlines() if line.startswith("drawing phantoms: ")]
    assert len(lines) >= 5 and lines[-1].endswith("(100 %)"), said


def test_users_add_token_and_demo_accounts(runner: CliRunner) -> None:
    added = runner.invoke(cli, ["users", "add", "dr-a", "--role", "reader"], input="long enough pw\n")
    assert added.exit_code == 0, added.output
    again = runner.invoke(cli, ["users", "add", "dr-a", "--role", "reader"], input="long enough pw\n")
    assert again.exit_code == 1 and "already exists" in again.output
    short = runner.invoke(cli, ["users", "add", "dr-b", "--role", "reader"], input="short\n")
    assert short.exit_code == 1 and "at least 8" in short.output
    bad_role = runner.invoke(cli, ["users", "add", "dr-c", "--role", "boss"], input="long enough pw\n")
    assert bad_role.exit_code == 2
    token = runner.invoke(cli, ["users", "token", "dr-a"])
    assert token.exit_code == 0 and len(token.stdout.strip()) >= 40
    assert runner.invoke(cli, ["users", "token", "nobody"]).exit_code == 1
    demo = runner.invoke(cli, ["demo-users"])
    assert demo.exit_code == 0 and "demo-reader-2" in demo.output


def test_backup_is_a_consistent_copy(runner: CliRunner, demo_dir: Path, tmp_path: Path) -> None:
    import sqlite3

    assert runner.invoke(cli, ["import", str(demo_dir / "run")]).exit_code == 0
    target = tmp_path / "copy.db"
    result = runner.invoke(cli, ["backup", str(target)])
    assert result.exit_code == 0, result.output
    with sqlite3.connect(target) as copy:
        assert copy.execute("SELECT count(*) FROM task").fetchone() == (demo.TASKS,)
    again = runner.invoke(cli, ["backup", str(target)])
    assert again.exit_code == 1 and "exists already" in again.output


def test_serve_without_a_secret_key_stops_with_the_reason(runner: CliRunner) -> None:
    done = runner.invoke(cli, ["serve", "--port", "1"])
    assert done.exit_code == 2
    assert "MEDBANANA_SECRET_KEY is not set" in done.output and "Traceback" not in done.output


def test_an_unreachable_database_is_a_clear_error(runner: CliRunner, monkeypatch: pytest.MonkeyPatch) -> None:
    # Port 9 (discard) on loopback: nothing listens, so the connection is refused at once.
    monkeypatch.setenv("MEDBANANA_DATABASE_URL", "postgresql+psycopg://reader:hunter22@127.0.0.1:9/study")
    done = runner.invoke(cli, ["migrate"])
    assert done.exit_code == 1
    assert "cannot reach the database postgresql+psycopg://reader:***@127.0.0.1:9/study" in done.output
    assert "hunter22" not in done.output and "Traceback" not in done.output


def test_tokens_are_named_listed_revoked_and_accounts_deactivated(runner: CliRunner) -> None:
    assert runner.invoke(cli, ["users", "add", "bot", "--role", "admin"],
                         input="long enough pw\n").exit_code == 0
    made = runner.invoke(cli, ["users", "token", "bot", "--name", "nightly export",
                               "--expires-days", "7"])
    assert made.exit_code == 0
    assert runner.invoke(cli, ["users", "token", "bot", "--expires-days", "0"]).exit_code == 1
    listed = runner.invoke(cli, ["users", "tokens", "bot"])
    assert "nightly" in listed.output and made.stdout.strip() not in listed.output
    assert runner.invoke(cli, ["users", "revoke", "1"]).exit_code == 0
    twice = runner.invoke(cli, ["users", "revoke", "1"])
    assert twice.exit_code == 1 and "already revoked" in twice.output
    assert runner.invoke(cli, ["users", "passwd", "bot"], input="another long pw\n").exit_code == 0
    assert runner.invoke(cli, ["users", "deactivate", "bot"]).exit_code == 0
    refused = runner.invoke(cli, ["users", "token", "bot"])
    assert refused.exit_code == 1 and "deactivated" in refused.output
    assert runner.invoke(cli, ["users", "activate", "bot"]).exit_code == 0
    assert "yes" in runner.invoke(cli, ["users", "list"]).output


def test_restore_brings_back_the_backup(runner: CliRunner, tmp_path: Path) -> None:
    import sqlite3

    assert runner.invoke(cli, ["users", "add", "kept-admin", "--role", "admin"],
                         input="a-long-password-1\n").exit_code == 0
    target = tmp_path / "before.db"
    assert runner.invoke(cli, ["backup", str(target)]).exit_code == 0
    assert runner.invoke(cli, ["users", "add", "added-later", "--role", "reader"],
                         input="a-long-password-2\n").exit_code == 0
    refused = runner.invoke(cli, ["restore", str(target)])
    assert refused.exit_code == 2 and "--yes" in refused.output
    done = runner.invoke(cli, ["restore", str(target), "--yes"])
    assert done.exit_code == 0, done.output
    listed = runner.invoke(cli, ["users", "list"]).output
    assert "kept-admin" in listed and "added-later" not in listed
    not_db = tmp_path / "notes.txt"
    not_db.write_text("hello")
    bad = runner.invoke(cli, ["restore", str(not_db), "--yes"])
    assert bad.exit_code == 1 and "notes.txt: not a SQLite database" in bad.output
    other = tmp_path / "other.db"
    sqlite3.connect(other).execute("CREATE TABLE x (y)").connection.commit()
    foreign = runner.invoke(cli, ["restore", str(other), "--yes"])
    assert foreign.exit_code == 1 and "not a MedBanana Review database" in foreign.output
    assert "kept-admin" in runner.invoke(cli, ["users", "list"]).output  # untouched
    missing = runner.invoke(cli, ["restore", str(tmp_path / "nope.db"), "--yes"])
    assert missing.exit_code == 1 and "no such file" in missing.output


def test_serve_keeps_a_readers_connection_while_they_look_at_a_case(
        runner: CliRunner, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # At uvicorn's 5 s most next cases opened a new connection (a radiologist looks 10-30 s).
    import uvicorn

    monkeypatch.setenv("MEDBANANA_SECRET_KEY", "q7Lk2vX9pR4mZ8tN1bW6yH3cJ5dF0gS-uE_aQ")
    monkeypatch.setenv("MEDBANANA_DATABASE_URL", f"sqlite:///{tmp_path / 'serve.db'}")
    asked: dict[str, object] = {}
    monkeypatch.setattr(uvicorn, "run", lambda *args, **kwargs: asked.update(kwargs))
    done = runner.invoke(cli, ["serve", "--port", "8123"])
    assert done.exit_code == 0, done.output
    assert asked["port"] == 8123 and isinstance(asked["timeout_keep_alive"], int)
    assert asked["timeout_keep_alive"] >= 30
