"""`medbanana judges`: add a candidate from a template file, score it after its estimate, and
read the leaderboard as a table and as JSON; bad input names the file or the value."""

import json
from pathlib import Path

from sqlalchemy.engine import Engine
from typer.testing import CliRunner

from app.cli import cli
from pipeline.judge_spec import default_template
from tests.cli.test_stats import env_for
from tests.reference_study import Reference


def _in_thread(call):  # type: ignore[no-untyped-def]
    import threading

    found = {}
    worker = threading.Thread(target=lambda: found.update(result=call()))
    worker.start()
    worker.join()
    return found["result"]


def test_add_score_and_read_the_leaderboard(demo_engine: Engine, reference: Reference,
                                            tmp_path: Path) -> None:
    runner, env = CliRunner(), env_for(demo_engine, tmp_path)
    template = tmp_path / "judge.j2"
    template.write_text(default_template())
    added = runner.invoke(cli, ["judges", "add", "strict one", "--template", str(template),
                                "--bias", "strict"], env=env)
    assert added.exit_code == 0, added.output
    assert added.output.startswith("candidate ") and "strict one" in added.output
    listed = runner.invoke(cli, ["judges", "list"], env=env)
    assert "strict one" in listed.output and "offline/offline-heuristic-1, strict" in listed.output
    candidate_id = added.output.split()[1].rstrip(":")
    study = str(reference.study_id)
    # In a thread of its own: the command runs its own event loop, and a browser test earlier
    # in this worker leaves Playwright's running in the main thread.
    scored = _in_thread(lambda: runner.invoke(
        cli, ["judges", "score", candidate_id, "--study", study, "--yes"], env=env))
    assert scored.exit_code == 0, scored.output
    # 16 edits (of 15 tasks), and again with the original first
    assert "Estimate for 15 tasks: about 32 calls" in scored.output
    assert "32 of 32 answers stored; 0 without a usable answer" in scored.output
    again = runner.invoke(cli, ["judges", "score", candidate_id, "--study", study, "--yes"], env=env)
    assert "nothing left to ask" in again.output
    table = runner.invoke(cli, ["judges", "leaderboard", "--study", study], env=env)
    assert table.exit_code == 0, table.output
    lines = table.output.splitlines()
    assert lines[0].startswith("overall: judges by agreement")
    assert any(line.startswith("judge of record") for line in lines), table.output
    assert any(line.startswith("strict one") for line in lines), table.output
    assert any(line.startswith("ranks, where paired intervals support them:") for line in lines), table.output
    out = tmp_path / "board.json"
    written = runner.invoke(cli, ["judges", "leaderboard", "--study", study, "--json", "-o", str(out)],
                            env=env)
    assert written.exit_code == 0 and written.output == ""
    data = json.loads(out.read_text())
    assert set(data) == {"compliance", "structure", "realism", "fidelity", "overall"}
    strict = next(r for r in data["overall"]["rows"] if r["name"] == "strict one")
    assert strict["order_bias"]["flipped"]["value"] == 0.0 and strict["vs_record"] is not None
    assert set(data["overall"]["letters"]) == {r["name"] for r in data["overall"]["rows"]}
    assert isinstance(data["overall"]["separated"], list) and data["overall"]["ranks"]
    assert "chance_level" in strict["order_bias"] and strict["panel"] is False


def test_bad_input_names_the_file_or_the_value(demo_engine: Engine, reference: Reference,
                                               tmp_path: Path) -> None:
    runner, env = CliRunner(), env_for(demo_engine, tmp_path)
    bad = tmp_path / "bad.j2"
    bad.write_text("Judge {{ instruction }} {% if %}")
    refused = runner.invoke(cli, ["judges", "add", "x", "--template", str(bad)], env=env)
    assert refused.exit_code == 1 and f"{bad}: the prompt template does not render" in refused.output
    good = tmp_path / "good.j2"
    good.write_text(default_template())
    keyless = runner.invoke(cli, ["judges", "add", "pro", "--template", str(good), "--backend",
                                  "gemini", "--model", "gemini-2.5-pro"], env=env)
    assert keyless.exit_code == 0
    pro_id = keyless.output.split()[1].rstrip(":")
    no_key = runner.invoke(cli, ["judges", "score", pro_id, "--study", str(reference.study_id),
                                 "--yes"], env={**env, "GOOGLE_API_KEY": "", "GEMINI_API_KEY": ""})
    assert no_key.exit_code == 1
    assert "Estimate for 15 tasks: about 32 calls" in no_key.output and "has no key" in no_key.output
    # Gemini: four tasks at a time, as a scoring job runs, and its Batch API line
    assert "4 tasks at a time" in no_key.output and "Batch API:" in no_key.output
    for args, words in ((["judges", "leaderboard", "--study", "nope"], "'nope'"),
                        (["judges", "score", "999", "--study", str(reference.study_id)],
                         "no candidate judge 999"),
                        (["judges", "leaderboard", "--study", str(reference.study_id), "--question", "x"],
                         "no question 'x'")):
        result = runner.invoke(cli, args, env=env)
        assert result.exit_code == 1 and words in result.output, (args, result.output)


def test_a_job_the_promoted_judge_cannot_run_is_refused_by_name(demo_engine: Engine,
                                                                tmp_path: Path) -> None:
    from sqlmodel import Session

    from app.judges.candidates import CandidatePlan, create_candidate
    from app.judges.promotion import promote

    with Session(demo_engine) as session:
        pro = create_candidate(session, CandidatePlan(name="pro", backend="gemini",
                                                      model="gemini-2.5-pro",
                                                      template=default_template()), None)
        promote(session, pro.id, None)
    runner, env = CliRunner(), env_for(demo_engine, tmp_path)
    result = runner.invoke(cli, ["pipeline", "run", "--backend", "offline", "--yes",
                                 "--modality", "fundus"], env=env)
    assert result.exit_code == 1, result.output
    assert "the promoted judge, 'pro', runs on the gemini backend" in result.output


def test_a_candidate_id_past_the_databases_range_is_named(demo_engine: Engine, tmp_path: Path) -> None:
    result = CliRunner().invoke(cli, ["judges", "score", str(10**30), "--study", "1"],
                                env=env_for(demo_engine, tmp_path))
    assert result.exit_code == 2 and "candidate" in result.output.lower() and "Traceback" not in result.output


def test_a_sentinel_set_scored_and_checked_for_drift(demo_engine: Engine, reference: Reference,
                                                     tmp_path: Path) -> None:
    from sqlmodel import Session, select

    from app.job_models import Job
    from app.judges.models import DriftSchedule
    from tests.reference_study import candidate, second_study

    other = second_study(demo_engine, reference)
    runner, env = CliRunner(), env_for(demo_engine, tmp_path)
    made = runner.invoke(cli, ["judges", "sentinel", "watch", "--study", str(reference.study_id),
                               "--study", "second look", "--per-study", "3", "--seed", "4"], env=env)
    assert made.exit_code == 0, made.output
    assert made.output.startswith("sentinel set ") and "6 edits from 2 studies" in made.output
    one = runner.invoke(cli, ["judges", "sentinel", "alone", "--study", str(other)], env=env)
    assert one.exit_code == 1 and "at least two" in one.output
    lenient = candidate(demo_engine, "lenient", "lenient")
    scored = _in_thread(lambda: runner.invoke(
        cli, ["judges", "score", str(lenient.id), "--sentinel", "watch", "--yes"], env=env))
    assert scored.exit_code == 0, scored.output
    assert "Estimate for 6 tasks: about 12 calls" in scored.output
    table = runner.invoke(cli, ["judges", "leaderboard", "--sentinel", "watch"], env=env)
    assert table.exit_code == 0 and any(line.startswith("lenient") for line in table.output.splitlines())
    batch = runner.invoke(cli, ["judges", "score", str(lenient.id), "--sentinel", "watch",
                                "--mode", "later"], env=env)
    assert batch.exit_code == 1 and "--mode is interactive or batch" in batch.output
    both = runner.invoke(cli, ["judges", "leaderboard", "--sentinel", "watch", "--study", "1"],
                         env=env)
    assert both.exit_code == 1 and "name one reference" in both.output
    missing = runner.invoke(cli, ["judges", "leaderboard", "--sentinel", "99999999999999999999"],
                            env=env)
    assert missing.exit_code == 1 and "no sentinel set" in missing.output
    scheduled = runner.invoke(cli, ["judges", "drift", "--sentinel", "watch", "--every", "24"],
                              env=env)
    assert scheduled.exit_code == 0 and "checked every 24 hours" in scheduled.output
    now = runner.invoke(cli, ["judges", "drift", "--sentinel", "watch"], env=env)
    assert now.exit_code == 0 and now.output.startswith("job ")
    stopped = runner.invoke(cli, ["judges", "drift", "--sentinel", "watch", "--stop"], env=env)
    assert stopped.exit_code == 0
    with Session(demo_engine) as session:
        assert session.exec(select(DriftSchedule)).all() == []
        # the scoring run here, and the drift check queued
        assert [j.kind for j in session.exec(select(Job)).all()] == ["score", "score"]


def test_scoring_in_the_terminal_keeps_to_the_quota_and_records_its_calls(
        demo_engine: Engine, reference: Reference, tmp_path: Path) -> None:
    """It made 24 calls in a minute under a limit of 6, and recorded none: every other job
    then went over the model's quota."""
    import threading
    import time

    from sqlmodel import Session, select

    from app.job_models import Job, RateCall
    from app.jobs import request_cancel
    from app.judges.candidates import CandidatePlan, create_candidate
    from tests.fake_gemini import VERDICT, FakeGemini, text_reply

    runner, env = CliRunner(), env_for(demo_engine, tmp_path)
    with Session(demo_engine) as session:
        flash = create_candidate(session, CandidatePlan(
            name="flash", backend="gemini", model="gemini-2.5-flash",
            template=default_template()), None)
    fake = FakeGemini(lambda *_: text_reply(json.dumps(VERDICT)))

    def cancel_when_waiting() -> None:
        while len(fake.calls) < 6:
            time.sleep(0.1)
        time.sleep(1.0)
        with Session(demo_engine) as session:
            job = session.exec(select(Job)).one()
        request_cancel(demo_engine, job.id or 0)

    with fake.serve() as url:
        threading.Thread(target=cancel_when_waiting, daemon=True).start()
        scored = _in_thread(lambda: runner.invoke(
            cli, ["judges", "score", str(flash.id), "--study", str(reference.study_id), "--yes"],
            env={**env, "GEMINI_API_KEY": "fake-key", "MEDBANANA_GEMINI_BASE_URL": url,
                 "MEDBANANA_GEMINI_REQUESTS_PER_MINUTE": "6"}))
    assert scored.exit_code == 0, scored.output
    assert "cancelled" in scored.output
    with Session(demo_engine) as session:
        recorded = len(session.exec(select(RateCall)).all())
    assert len(fake.calls) == 6 and recorded == 6
