"""The gemini backend: the real google-genai client against a local fake Gemini server."""

import base64
import json
import re
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy.engine import Engine
from sqlmodel import Session, select

from app.images.files import ImageKind, resolve_image
from app.jobs import store
from app.models import Attempt, JudgeVerdict, Run
from pipeline import loop
from pipeline.gemini import GeminiBackend
from pipeline.vocabulary import Outcome
from tests import aio
from tests.fake_gemini import (
    FakeGemini,
    Reply,
    cooperative,
    edited,
    error_reply,
    first_image,
    image_reply,
    quota_error,
    text_reply,
)
from tests.pipeline.test_loop import a_task
from tests.signing import signing_marker

KEY = "fake-key-never-stored-7f3a"
QUICK = loop.Options(rounds=3, policy=loop.RetryPolicy(attempts=3, base_seconds=0.0))


def b64(data: bytes) -> str:
    return base64.b64encode(data).decode()


def regenerate(engine: Engine, tmp_path: Path, fake: FakeGemini, *, timeout: float = 5.0,
               options: loop.Options = QUICK) -> tuple[int, Outcome | None]:
    root = tmp_path / "pipeline"
    root_id = store.output_root(engine, root)
    with fake.serve() as url:
        backend = GeminiBackend(KEY, base_url=url, timeout_seconds=timeout)
        rounds = store.RunRounds(engine, root_id, root.resolve())
        return aio.run(loop.regenerate(rounds, backend, a_task(engine), options))


def attempts(engine: Engine, run_id: int) -> list[tuple[Attempt, JudgeVerdict | None]]:
    with Session(engine) as session:
        return list(session.exec(select(Attempt, JudgeVerdict).outerjoin(
            JudgeVerdict, JudgeVerdict.attempt_id == Attempt.id).where(Attempt.run_id == run_id)
            .order_by(Attempt.round)).all())


def test_a_full_round_is_stored_with_models_tokens_and_thinking(demo_engine: Engine,
                                                                tmp_path: Path) -> None:
    fake = FakeGemini()
    run_id, outcome = regenerate(demo_engine, tmp_path, fake)
    assert outcome is Outcome.success
    [(attempt, verdict)] = attempts(demo_engine, run_id)
    calls = json.loads(attempt.calls or "{}")
    assert calls["edit"]["model"] == "gemini-2.5-flash-image" and calls["judge"]["input_tokens"] == 1200
    # Thinking is billed as output: 80 answer tokens came with 1,500 of thinking.
    assert calls["judge"]["output_tokens"] == 80 and calls["judge"]["thinking_tokens"] == 1500
    assert calls["instruction"]["model_version"] == "gemini-2.5-pro"
    assert verdict is not None and verdict.model == "gemini-2.5-pro" and verdict.qualified
    assert attempt.instruction_thinking == "I considered the anatomy." and attempt.image_present
    judge_call = fake.calls[-1][2]
    assert judge_call["generationConfig"]["responseMimeType"] == "application/json"
    assert len([p for p in judge_call["contents"][0]["parts"] if "inlineData" in p]) == 2
    assert fake.keys == {KEY}
    dump = "\n".join(demo_engine.raw_connection().iterdump())  # type: ignore[attr-defined]
    assert KEY not in dump  # the key reaches the server, never the database


def test_429_with_retry_after_then_success(demo_engine: Engine, tmp_path: Path) -> None:
    def respond(model: str, body: dict[str, Any], n: int) -> Reply:
        if "image" in model and n == 1:
            return error_reply(429, "Resource exhausted", "RESOURCE_EXHAUSTED", **{"Retry-After": "0.3"})
        return cooperative(model, body, n)

    fake = FakeGemini(respond)
    _, outcome = regenerate(demo_engine, tmp_path, fake)
    edits = [t for model, t, _ in fake.calls if "image" in model]
    assert outcome is Outcome.success and len(edits) == 2 and edits[1] - edits[0] >= 0.29


def test_500_is_retried(demo_engine: Engine, tmp_path: Path) -> None:
    def respond(model: str, body: dict[str, Any], n: int) -> Reply:
        if body.get("generationConfig", {}).get("responseMimeType") and n <= 3:
            return error_reply(500, "Internal error", "INTERNAL")  # the judge is model call 2+
        return cooperative(model, body, n)

    _, outcome = regenerate(demo_engine, tmp_path, FakeGemini(respond))
    assert outcome is Outcome.success


def test_timeouts_run_out_into_api_failed(demo_engine: Engine, tmp_path: Path) -> None:
    def respond(model: str, body: dict[str, Any], n: int) -> Reply:
        return Reply(delay=1.5, body={}) if "image" in model else cooperative(model, body, n)

    run_id, outcome = regenerate(demo_engine, tmp_path, FakeGemini(respond), timeout=0.5,
                                 options=loop.Options(rounds=2, policy=loop.RetryPolicy(2, 0.0)))
    with Session(demo_engine) as session:
        run = session.get(Run, run_id)
    assert outcome is Outcome.api_failed and run is not None
    assert run.failure_step == "edit_image" and "timeout" in (run.failure_error or "")


def test_invalid_judge_json_is_recorded_and_the_loop_goes_on(demo_engine: Engine, tmp_path: Path) -> None:
    def respond(model: str, body: dict[str, Any], n: int) -> Reply:
        # The instruction and the judge share one model, so its calls 2-4 are the judge's.
        if body.get("generationConfig", {}).get("responseMimeType") and n <= 4:
            return text_reply('{"compliance": true, "reason": "cut off')
        return cooperative(model, body, n)

    run_id, outcome = regenerate(demo_engine, tmp_path, FakeGemini(respond))
    rounds = attempts(demo_engine, run_id)
    assert outcome is Outcome.success and len(rounds) == 2
    first_verdict = rounds[0][1]
    assert first_verdict is not None and (first_verdict.error or "").startswith("JSON parse error")
    assert '"cut off' in (first_verdict.raw_json or "")


def test_an_edit_with_no_image_is_recorded(demo_engine: Engine, tmp_path: Path) -> None:
    def respond(model: str, body: dict[str, Any], n: int) -> Reply:
        if "image" in model:
            return text_reply("I cannot edit medical images.")
        return cooperative(model, body, n)

    run_id, outcome = regenerate(demo_engine, tmp_path, FakeGemini(respond),
                                 options=loop.Options(rounds=1, policy=loop.RetryPolicy(2, 0.0)))
    [(attempt, verdict)] = attempts(demo_engine, run_id)
    # No round was judged: not a run the judge rejected.
    assert outcome is Outcome.unjudged and verdict is None
    assert (attempt.edit_error or "").startswith("No image in response: I cannot edit")


def test_a_rejected_key_is_not_retried(demo_engine: Engine, tmp_path: Path) -> None:
    fake = FakeGemini(lambda *_: error_reply(400, "API key not valid", "INVALID_ARGUMENT"))
    run_id, outcome = regenerate(demo_engine, tmp_path, fake)
    with Session(demo_engine) as session:
        run = session.get(Run, run_id)
    assert outcome is Outcome.api_failed and len(fake.calls) == 1
    assert run is not None and run.failure_step == "generate_prompt"
    assert "API key not valid" in (run.failure_error or "")
    assert KEY not in (run.failure_error or "")


@pytest.mark.parametrize("name", ["GOOGLE_API_KEY", "GEMINI_API_KEY"])
def test_the_key_comes_from_the_environment(monkeypatch: pytest.MonkeyPatch, name: str) -> None:
    from app.jobs.options import JobOptions
    from app.jobs.registry import UnknownBackend, available, make_backend

    for variable in ("GOOGLE_API_KEY", "GEMINI_API_KEY"):
        monkeypatch.delenv(variable, raising=False)
    assert available() == ["offline"]
    with pytest.raises(UnknownBackend):
        make_backend(JobOptions(backend="gemini"))
    monkeypatch.setenv(name, KEY)
    assert available() == ["offline", "gemini"]
    assert make_backend(JobOptions(backend="gemini")).name == "gemini"


def test_an_error_echoing_the_key_is_stored_without_it(demo_engine: Engine, tmp_path: Path) -> None:
    other = "AIzaSyA1b2C3d4E5f6G7h8I9j0KlMnOpQrStUvW"
    echo = f"API key not valid: {KEY}; also tried ?key={other}"
    fake = FakeGemini(lambda *_: error_reply(400, echo, "INVALID_ARGUMENT"))
    run_id, outcome = regenerate(demo_engine, tmp_path, fake)
    assert outcome is Outcome.api_failed
    with Session(demo_engine) as session:
        run = session.get(Run, run_id)
    assert run is not None and "API key not valid" in (run.failure_error or "")
    dump = "\n".join(demo_engine.raw_connection().iterdump())  # type: ignore[attr-defined]
    assert KEY not in dump and other not in dump


def test_a_used_up_quota_is_waited_for_as_long_as_the_body_asks(demo_engine: Engine,
                                                                tmp_path: Path) -> None:
    """A server allowing 2 calls per 1.5 s window: with one attempt per step the run would
    fail if quota errors counted as attempts; it succeeds, never calls inside a closed
    window, and waits at least the RetryInfo delay each time."""
    import threading
    import time

    window, allowed = 1.5, 2
    lock, served, refusals = threading.Lock(), [], []

    def respond(model: str, body: dict[str, Any], n: int) -> Reply:
        now = time.monotonic()
        with lock:
            recent = [t for t in served if now - t < window]
            if len(recent) >= allowed:
                refusals.append(now)
                return quota_error(f"{window - (now - recent[0]):.3f}s")
            served.append(now)
        return cooperative(model, body, n)

    options = loop.Options(rounds=3, policy=loop.RetryPolicy(attempts=1, base_seconds=0.0))
    _, outcome = regenerate(demo_engine, tmp_path, FakeGemini(respond), options=options)
    assert outcome is Outcome.success
    assert refusals, "the test's quota never bit"
    assert all(sum(1 for u in served if 0 <= u - t < window) <= allowed for t in served)


@pytest.mark.parametrize("body, headers, expected", [
    ({"error": {"code": 429, "status": "RESOURCE_EXHAUSTED", "message": "x", "details": [
        {"@type": "type.googleapis.com/google.rpc.RetryInfo", "retryDelay": "16.5s"}]}}, {}, 16.5),
    ({"error": {"code": 429, "status": "RESOURCE_EXHAUSTED", "message": "x", "details": [
        {"@type": "type.googleapis.com/google.rpc.RetryInfo",
         "retryDelay": {"seconds": 3, "nanos": 500000000}}]}}, {}, 3.5),
    ({"error": {"code": 429, "message": "Please retry in 250ms."}}, {}, 0.25),
    ({"error": {"code": 503, "message": "overloaded"}}, {"retry-after": "7"}, 7.0),
    ({"error": {"code": 503, "message": "overloaded"}}, {}, None),
])
def test_the_retry_delay_is_read_from_body_header_or_message(
        body: dict[str, Any], headers: dict[str, str], expected: float | None) -> None:
    import httpx
    from google.genai import errors

    from pipeline.gemini import _retry_after

    response = httpx.Response(body["error"]["code"], json=body, headers=headers)
    assert _retry_after(errors.APIError(body["error"]["code"], body, response)) == expected


def test_a_safety_block_ends_the_run_as_blocked_after_one_call(demo_engine: Engine,
                                                               tmp_path: Path) -> None:
    def respond(model: str, body: dict[str, Any], n: int) -> Reply:
        if "image" in model:
            return Reply(body={"candidates": [{"finishReason": "IMAGE_SAFETY"}],
                               "usageMetadata": {"promptTokenCount": 1300}})
        return cooperative(model, body, n)

    fake = FakeGemini(respond)
    run_id, outcome = regenerate(demo_engine, tmp_path, fake)
    with Session(demo_engine) as session:
        run = session.get(Run, run_id)
    assert outcome is Outcome.blocked and run is not None and run.outcome == "blocked"
    assert run.failure_step == "edit_image" and "IMAGE_SAFETY" in (run.failure_error or "")
    assert len([m for m, _, _ in fake.calls if "image" in m]) == 1  # never asked again


def test_a_blocked_prompt_is_a_block_too(demo_engine: Engine, tmp_path: Path) -> None:
    fake = FakeGemini(lambda *_: Reply(body={"promptFeedback": {"blockReason": "PROHIBITED_CONTENT"},
                                             "usageMetadata": {"promptTokenCount": 10}}))
    _, outcome = regenerate(demo_engine, tmp_path, fake)
    assert outcome is Outcome.blocked and len(fake.calls) == 1


def test_an_instruction_cut_off_at_the_token_limit_is_never_stored(demo_engine: Engine,
                                                                   tmp_path: Path) -> None:
    def respond(model: str, body: dict[str, Any], n: int) -> Reply:
        if "image" not in model and not body.get("generationConfig", {}).get("responseMimeType"):
            reply = text_reply("Add a small right pleural eff")
            reply.body["candidates"][0]["finishReason"] = "MAX_TOKENS"
            return reply
        return cooperative(model, body, n)

    run_id, outcome = regenerate(demo_engine, tmp_path, FakeGemini(respond))
    with Session(demo_engine) as session:
        run = session.get(Run, run_id)
        stored = session.exec(select(Attempt).where(Attempt.run_id == run_id)).all()
    assert outcome is Outcome.api_failed and stored == []
    assert run is not None and "MAX_TOKENS" in (run.failure_error or "")


def test_a_recitation_stop_is_retried_not_stored(demo_engine: Engine, tmp_path: Path) -> None:
    def respond(model: str, body: dict[str, Any], n: int) -> Reply:
        if "image" not in model and n == 1:
            reply = text_reply("Add a small")
            reply.body["candidates"][0]["finishReason"] = "RECITATION"
            return reply
        return cooperative(model, body, n)

    run_id, outcome = regenerate(demo_engine, tmp_path, FakeGemini(respond))
    [(attempt, _)] = attempts(demo_engine, run_id)
    assert outcome is Outcome.success and attempt.instruction != "Add a small"


def test_a_png_edit_stays_a_png_in_the_store_the_judge_request_and_the_export(
        demo_engine: Engine, tmp_path: Path) -> None:
    import base64
    import io

    from PIL import Image

    from app.exports import export_runs
    from app.images.files import ImageKind, resolve_image
    from tests.fake_gemini import edited

    def respond(model: str, body: dict[str, Any], n: int) -> Reply:
        if "image" in model:
            from tests.fake_gemini import first_image

            png = io.BytesIO()
            Image.open(io.BytesIO(edited(first_image(body)))).save(png, "PNG")
            return Reply(body={"candidates": [{"content": {"role": "model", "parts": [
                {"inlineData": {"mimeType": "image/png",
                                "data": base64.b64encode(png.getvalue()).decode()}}]},
                "finishReason": "STOP"}]})
        return cooperative(model, body, n)

    fake = FakeGemini(respond)
    run_id, outcome = regenerate(demo_engine, tmp_path, fake)
    assert outcome is Outcome.success
    [(attempt, _)] = attempts(demo_engine, run_id)
    assert re.fullmatch(r"runs/\d+/round-1-[0-9a-f]{12}\.png", attempt.image_relpath or "")
    with Session(demo_engine) as session:
        assert resolve_image(session, ImageKind.attempt, attempt.id or 0).read_bytes()[:4] == b"\x89PNG"
    judge_parts = fake.calls[-1][2]["contents"][0]["parts"]
    labels = [p["inlineData"].get("mimeType") or p["inlineData"].get("mime_type")
              for p in judge_parts if "inlineData" in p]
    assert labels == [
        "image/png", "image/jpeg"]  # the edit, then the original
    out = tmp_path / "exported"
    export_runs(demo_engine, out, signing_marker(), only_regenerated=True)
    assert [p.name for p in out.rglob("*-edit.png")] and not list(out.rglob("*-edit.jpeg"))


def test_a_failed_judge_keeps_the_finished_edit(demo_engine: Engine, tmp_path: Path) -> None:
    def respond(model: str, body: dict[str, Any], n: int) -> Reply:
        if body.get("generationConfig", {}).get("responseMimeType"):
            return error_reply(500, "Internal error", "INTERNAL")
        return cooperative(model, body, n)

    run_id, outcome = regenerate(demo_engine, tmp_path, FakeGemini(respond))
    [(attempt, verdict)] = attempts(demo_engine, run_id)
    with Session(demo_engine) as session:
        run = session.get(Run, run_id)
    assert outcome is Outcome.api_failed and run is not None and run.failure_step == "verify_image"
    assert run.failure_round == attempt.round == 1  # the stored round's judge failed
    assert attempt.image_present and verdict is None  # the edit is there, to be judged later


def test_the_refinement_is_told_what_an_unreadable_verdict_means(demo_engine: Engine,
                                                                 tmp_path: Path) -> None:
    def respond(model: str, body: dict[str, Any], n: int) -> Reply:
        if body.get("generationConfig", {}).get("responseMimeType") and n <= 3:
            return text_reply("{not json")
        return cooperative(model, body, n)

    fake = FakeGemini(respond)
    regenerate(demo_engine, tmp_path, fake, options=loop.Options(
        rounds=3, policy=loop.RetryPolicy(attempts=1, base_seconds=0.0)))
    writer_calls = [body for model, _, body in fake.calls if "image" not in model
                    and not body.get("generationConfig", {}).get("responseMimeType")]
    refinements = [json.dumps(body) for body in writer_calls[1:]]
    assert refinements and all("JSON parse error" not in r for r in refinements)
    assert any("could not be read" in r for r in refinements)


def test_reader_feedback_reaches_the_first_instruction(demo_engine: Engine, tmp_path: Path) -> None:
    """The edit readers want redone is often one the judge accepted in round 1, so there is
    no refinement to carry their comments: the first instruction must."""
    feedback = [{"reader_role": "radiologist", "overall": "reject", "tags": ["wrong_location"],
                 "comment": "the effusion sits above the diaphragm, not in the apex"}]
    fake = FakeGemini()
    root = tmp_path / "pipeline"
    root_id = store.output_root(demo_engine, root)
    with fake.serve() as url:
        backend = GeminiBackend(KEY, base_url=url, timeout_seconds=5)
        rounds = store.RunRounds(demo_engine, root_id, root.resolve())
        _, outcome = aio.run(loop.regenerate(rounds, backend, a_task(demo_engine), QUICK,
                                             feedback=feedback))
    first = next(body for model, _, body in fake.calls if "image" not in model)
    assert outcome is Outcome.success
    assert "the effusion sits above the diaphragm" in json.dumps(first)
    assert "wrong_location" in json.dumps(first)


def test_a_dropped_connection_is_retried_even_with_aiohttp_installed(demo_engine: Engine,
                                                                     tmp_path: Path) -> None:
    """With aiohttp installed (a dev dependency, as on many machines), google-genai would
    switch to it; the client is pinned to httpx2, so a dropped connection is a network error
    that is retried, not a crash."""
    import importlib.util

    from tests.fake_gemini import RESET

    assert importlib.util.find_spec("aiohttp") is not None

    def drops_first(model: str, body: dict[str, Any], n: int) -> Reply:
        return Reply(RESET) if n == 1 else cooperative(model, body, n)

    run_id, outcome = regenerate(demo_engine, tmp_path, FakeGemini(drops_first))
    assert outcome is Outcome.success
    assert [a.round for a, _ in attempts(demo_engine, run_id)] == [1]


def test_the_final_image_is_kept_not_a_thought_image(demo_engine: Engine, tmp_path: Path) -> None:
    """An image model may think in pictures: a part marked ``"thought": true`` is an interim
    image, and the edit is the answer's final, non-thought image."""
    def respond(model: str, body: dict[str, Any], n: int) -> Reply:
        if "image" in model:
            final = edited(first_image(body))
            draft = edited(final)
            return Reply(body={"candidates": [{"content": {"role": "model", "parts": [
                {"inlineData": {"mimeType": "image/jpeg", "data": b64(draft)}, "thought": True},
                {"text": "Here is the edited radiograph."},
                {"inlineData": {"mimeType": "image/jpeg", "data": b64(final)}}]},
                "finishReason": "STOP"}]})
        return cooperative(model, body, n)

    fake = FakeGemini(respond)
    run_id, outcome = regenerate(demo_engine, tmp_path, fake)
    [(attempt, verdict)] = attempts(demo_engine, run_id)
    judged = first_image(next(b for m, _, b in fake.calls if "responseMimeType" in json.dumps(b)))
    with Session(demo_engine) as session:
        stored = resolve_image(session, ImageKind.attempt, attempt.id or 0).path.read_bytes()
    edit_request = next(b for m, _, b in fake.calls if "image" in m)
    assert outcome is Outcome.success and verdict is not None
    assert stored == judged == edited(first_image(edit_request))


def test_image_bytes_that_do_not_decode_are_no_image_and_retried(demo_engine: Engine,
                                                                 tmp_path: Path) -> None:
    """An ``image/jpeg`` part holding an HTML page is not stored or judged: the call counts
    as one with no image in it, and is retried as one."""
    page = b"<!DOCTYPE html><html><body>Service temporarily unavailable</body></html>"

    def respond(model: str, body: dict[str, Any], n: int) -> Reply:
        if "image" in model and n == 1:
            return image_reply(page)
        return cooperative(model, body, n)

    fake = FakeGemini(respond)
    run_id, outcome = regenerate(demo_engine, tmp_path, fake)
    [(attempt, verdict)] = attempts(demo_engine, run_id)
    with Session(demo_engine) as session:
        stored = resolve_image(session, ImageKind.attempt, attempt.id or 0).path.read_bytes()
    assert outcome is Outcome.success and verdict is not None
    assert fake.counts["gemini-2.5-flash-image"] == 2 and stored.startswith(b"\xff\xd8")


def test_an_answer_that_never_decodes_is_stored_as_no_image(demo_engine: Engine,
                                                            tmp_path: Path) -> None:
    def respond(model: str, body: dict[str, Any], n: int) -> Reply:
        if "image" in model:
            return image_reply(b"<html>not an image</html>")
        return cooperative(model, body, n)

    fake = FakeGemini(respond)
    run_id, _ = regenerate(demo_engine, tmp_path, fake,
                           options=loop.Options(rounds=1, policy=loop.RetryPolicy(2, 0.0)))
    [(attempt, verdict)] = attempts(demo_engine, run_id)
    assert not attempt.image_present and verdict is None
    assert "does not decode" in (attempt.edit_error or "")
    assert not any("responseMimeType" in json.dumps(b) for _, _, b in fake.calls)  # never judged
