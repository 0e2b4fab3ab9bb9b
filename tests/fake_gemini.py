"""A local fake of Gemini's generateContent REST endpoint, for the real google-genai client.

Each request is answered by ``respond(model, body, n)`` (n counts that model's calls from
1): a Reply with status, JSON body or raw text, headers and a delay. The default answers
like a cooperative Gemini: an instruction, an edited image (the request's image, brightened
in a corner), and a qualified verdict.
"""

import base64
import contextlib
import io
import json
import re
import socket
import threading
import time
from collections import defaultdict
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from PIL import Image

PATH = re.compile(r"^/v1(?:beta|alpha)?/models/([^/:]+):generateContent$")
BATCH_CREATE = re.compile(r"^/v1(?:beta|alpha)?/models/([^/:]+):batchGenerateContent$")
BATCH_GET = re.compile(r"^/v1(?:beta|alpha)?/batches/([^/:]+)$")
BATCH_LIST = re.compile(r"^/v1(?:beta|alpha)?/batches$")
BATCH_CANCEL = re.compile(r"^/v1(?:beta|alpha)?/batches/([^/:]+):cancel$")
BATCH_TYPE = "type.googleapis.com/google.ai.generativelanguage.v1main.GenerateContentBatch"


RESET = 0  # a Reply with this status drops the connection without answering


@dataclass
class Reply:
    status: int = 200
    body: Any = None  # JSON-able, or a str sent as it is
    headers: dict[str, str] = field(default_factory=dict)
    delay: float = 0.0


def text_reply(text: str, thought: str = "I considered the anatomy.") -> Reply:
    return Reply(body={"candidates": [{"content": {"role": "model", "parts": [
        {"text": thought, "thought": True}, {"text": text}]}, "finishReason": "STOP"}],
        # As Gemini 2.5 bills them: the thinking is counted apart from the answer.
        "usageMetadata": {"promptTokenCount": 1200, "candidatesTokenCount": 80,
                          "thoughtsTokenCount": 1500, "totalTokenCount": 2780},
        "modelVersion": "gemini-2.5-pro", "responseId": "fake-response"})


def image_reply(jpeg: bytes) -> Reply:
    return Reply(body={"candidates": [{"content": {"role": "model", "parts": [
        {"inlineData": {"mimeType": "image/jpeg", "data": base64.b64encode(jpeg).decode()}}]},
        "finishReason": "STOP"}], "usageMetadata": {"promptTokenCount": 1300,
                                                    "candidatesTokenCount": 1290}})


VERDICT = {"compliance": True, "structure": True, "realism": True, "fidelity": True,
           "has_disease": True, "weighted_score": 0.93, "qualified": True,
           "reason": "Convincing finding with natural margins; the rest is unchanged."}


def first_image(body: dict[str, Any]) -> bytes:
    for part in body["contents"][0]["parts"]:
        data = part.get("inlineData") or part.get("inline_data")
        if data:
            text = data["data"]
            # The client sends URL-safe base64; accept both alphabets.
            return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4)) if (
                "-" in text or "_" in text) else base64.b64decode(text)
    raise ValueError("no image in the request")


def edited(jpeg: bytes) -> bytes:
    with Image.open(io.BytesIO(jpeg)) as image:
        pixels = image.convert("RGB")
    corner = Image.new("RGB", (max(1, pixels.width // 8), max(1, pixels.height // 8)), (230, 230, 230))
    pixels.paste(corner, (pixels.width // 4, pixels.height // 4))
    out = io.BytesIO()
    pixels.save(out, "JPEG", quality=90)
    return out.getvalue()


def cooperative(model: str, body: dict[str, Any], n: int) -> Reply:
    if "image" in model:
        return image_reply(edited(first_image(body)))
    if body.get("generationConfig", {}).get("responseMimeType") == "application/json":
        return text_reply(json.dumps(VERDICT))
    return text_reply("Add a small right pleural effusion blunting the costophrenic angle.")


@dataclass
class Batch:
    """A batch as the Batch API keeps it: its requests, and its answers once it has run."""

    name: str
    model: str
    display_name: str
    requests: list[dict[str, Any]]
    state: str = "BATCH_STATE_PENDING"
    polls: int = 0
    responses: list[dict[str, Any]] | None = None

    def operation(self) -> dict[str, Any]:
        """The long-running Operation that create, get and list return."""
        now = time.strftime("%Y-%m-%dT%H:%M:%S.000000Z", time.gmtime())
        total = len(self.requests)
        done = self.state in ("BATCH_STATE_SUCCEEDED", "BATCH_STATE_FAILED",
                              "BATCH_STATE_CANCELLED", "BATCH_STATE_EXPIRED")
        ok = sum(1 for r in self.responses or [] if "response" in r)
        metadata: dict[str, Any] = {
            "@type": BATCH_TYPE, "model": f"models/{self.model}", "displayName": self.display_name,
            "createTime": now, "updateTime": now, "state": self.state, "name": self.name,
            "batchStats": {"requestCount": str(total),
                           "pendingRequestCount": str(0 if done else total),
                           "successfulRequestCount": str(ok),
                           "failedRequestCount": str(len(self.responses or []) - ok)}}
        operation: dict[str, Any] = {"name": self.name, "metadata": metadata}
        if self.responses is not None:
            output = {"inlinedResponses": {"inlinedResponses": self.responses}}
            metadata["output"] = output
            operation["response"] = {"@type": BATCH_TYPE + "Output", **output}
        if done:
            operation["done"] = True
        return operation


class FakeGemini:
    def __init__(self, respond: Callable[[str, dict[str, Any], int], Reply] = cooperative, *,
                 batch_polls: int = 1,
                 batch_end: Callable[[Batch], str] = lambda _: "BATCH_STATE_SUCCEEDED",
                 hold: Callable[[Batch], bool] = lambda _: False) -> None:
        """``batch_polls``: the gets a batch answers "running" before it ends; ``batch_end``:
        the state it then ends in (a succeeded batch is answered request by request by
        ``respond``, as generateContent would); ``hold``: a batch is kept running while it
        says so."""
        self.respond = respond
        self.calls: list[tuple[str, float, dict[str, Any]]] = []
        self.counts: dict[str, int] = defaultdict(int)
        self.lock = threading.Lock()
        self.keys: set[str] = set()
        self.batches: dict[str, Batch] = {}
        self.batch_polls, self.batch_end, self.hold = batch_polls, batch_end, hold
        self.batched = 0  # calls answered inside batches (the rest of ``calls`` were direct)

    def _create_batch(self, model: str, body: dict[str, Any]) -> Reply:
        batch = body.get("batch") or {}
        requests = (((batch.get("inputConfig") or {}).get("requests") or {}).get("requests"))
        if not isinstance(requests, list) or not requests:
            return error_reply(400, "batch.inputConfig must hold requests", "INVALID_ARGUMENT")
        with self.lock:
            name = f"batches/fake{len(self.batches) + 1:05d}"
            self.batches[name] = Batch(name, model, str(batch.get("displayName", "")), requests)
            return Reply(200, self.batches[name].operation())

    def _get_batch(self, name: str) -> Reply:
        with self.lock:
            batch = self.batches.get(name)
            if batch is None:
                return error_reply(404, f"Batch {name} not found", "NOT_FOUND")
            batch.polls += 1
            if batch.state == "BATCH_STATE_PENDING":
                batch.state = "BATCH_STATE_RUNNING"
            run_now = (batch.state == "BATCH_STATE_RUNNING" and batch.polls > self.batch_polls
                       and not self.hold(batch))
        if run_now:
            self._run_batch(batch)
        with self.lock:
            return Reply(200, batch.operation())

    def _run_batch(self, batch: Batch) -> None:
        end = self.batch_end(batch)
        responses = []
        if end == "BATCH_STATE_SUCCEEDED":
            for item in batch.requests:
                request = item.get("request") or {}
                with self.lock:
                    self.counts[batch.model] += 1
                    self.batched += 1
                    n = self.counts[batch.model]
                    self.calls.append((batch.model, time.monotonic(), request))
                reply = self.respond(batch.model, request, n)
                entry: dict[str, Any] = {"metadata": item.get("metadata") or {}}
                if reply.status == 200 and isinstance(reply.body, dict):
                    entry["response"] = reply.body
                else:
                    error = (reply.body or {}).get("error", {}) if isinstance(reply.body, dict) else {}
                    entry["error"] = {"code": error.get("code", reply.status),
                                      "message": error.get("message", "error")}
                responses.append(entry)
        with self.lock:
            batch.state = end
            batch.responses = responses if end == "BATCH_STATE_SUCCEEDED" else None

    @contextmanager
    def serve(self) -> Iterator[str]:
        fake = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *_: Any) -> None:  # quiet in test output
                return

            def do_GET(self) -> None:
                path = self.path.split("?")[0]
                found = BATCH_GET.match(path)
                if found is not None:
                    self._send(fake._get_batch(f"batches/{found.group(1)}"))
                elif BATCH_LIST.match(path):
                    with fake.lock:
                        listed = [b.operation() for b in fake.batches.values()]
                    for operation in listed:  # a listing carries no results
                        operation["metadata"].pop("output", None)
                        operation.pop("response", None)
                    self._send(Reply(200, {"operations": listed}))
                else:
                    self._send(Reply(404, {"error": {"code": 404, "message": "no such path",
                                                     "status": "NOT_FOUND"}}))

            def do_POST(self) -> None:
                path = self.path.split("?")[0]
                match = PATH.match(path)
                body = json.loads(self.rfile.read(int(self.headers.get("content-length", 0))) or b"{}")
                cancel = BATCH_CANCEL.match(path)
                if cancel is not None:
                    with fake.lock:
                        batch = fake.batches.get(f"batches/{cancel.group(1)}")
                        if batch is not None and batch.state in ("BATCH_STATE_PENDING",
                                                                 "BATCH_STATE_RUNNING"):
                            batch.state = "BATCH_STATE_CANCELLED"
                    self._send(Reply(200, {}) if batch is not None else error_reply(
                        404, "batch not found", "NOT_FOUND"))
                    return
                create = BATCH_CREATE.match(path)
                if create is not None:
                    self._send(fake._create_batch(create.group(1), body))
                    return
                if match is None:
                    self._send(Reply(404, {"error": {"code": 404, "message": "no such path",
                                                     "status": "NOT_FOUND"}}))
                    return
                model = match.group(1)
                with fake.lock:
                    fake.counts[model] += 1
                    n = fake.counts[model]
                    fake.calls.append((model, time.monotonic(), body))
                    fake.keys.add(self.headers.get("x-goog-api-key", ""))
                reply = fake.respond(model, body, n)
                if reply.delay:
                    time.sleep(reply.delay)
                self._send(reply)

            def _send(self, reply: Reply) -> None:
                if reply.status == RESET:  # the connection dropped with no answer at all
                    self.close_connection = True
                    with contextlib.suppress(OSError):
                        self.request.shutdown(socket.SHUT_RDWR)
                    return
                data = reply.body if isinstance(reply.body, str) else json.dumps(reply.body)
                payload = data.encode()
                try:
                    self.send_response(reply.status)
                    self.send_header("content-type", "application/json")
                    for name, value in reply.headers.items():
                        self.send_header(name, value)
                    self.send_header("content-length", str(len(payload)))
                    self.end_headers()
                    self.wfile.write(payload)
                except (BrokenPipeError, ConnectionResetError):
                    pass  # the client gave up (a timeout test)

        server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        server.daemon_threads = True
        thread = threading.Thread(target=server.serve_forever, daemon=True)
        thread.start()
        try:
            yield f"http://127.0.0.1:{server.server_address[1]}"
        finally:
            server.shutdown()
            server.server_close()


def error_reply(status: int, message: str, code_name: str, **headers: str) -> Reply:
    return Reply(status, {"error": {"code": status, "message": message, "status": code_name}},
                 headers=dict(headers))


def quota_error(delay: str) -> Reply:
    """A 429 as Gemini sends it: the delay in the body's google.rpc.RetryInfo, not a header."""
    return Reply(429, {"error": {
        "code": 429, "status": "RESOURCE_EXHAUSTED",
        "message": f"You exceeded your current quota, please check your plan and billing "
                   f"details. Please retry in {delay}.",
        "details": [
            {"@type": "type.googleapis.com/google.rpc.QuotaFailure", "violations": [
                {"quotaMetric": "generativelanguage.googleapis.com/generate_content_requests",
                 "quotaId": "GenerateRequestsPerMinutePerProjectPerModel"}]},
            {"@type": "type.googleapis.com/google.rpc.RetryInfo", "retryDelay": delay}]}})


class Quota:
    """Gemini's quota, per model: at most ``allowed`` calls in any ``window`` seconds; a call
    over it gets the real 429 with the seconds until the window has room."""

    def __init__(self, allowed: int, window: float = 60.0,
                 respond: Callable[[str, dict[str, Any], int], Reply] = cooperative, *,
                 arrival: Callable[[int], float] = lambda _: 0.0) -> None:
        """``arrival(n)``: seconds between the model's n-th request leaving the client and the
        service counting it (a large upload, a busy network), which vary from call to call."""
        self.allowed, self.window, self.respond = allowed, window, respond
        self.arrival = arrival
        self.lock = threading.Lock()
        self.served: dict[str, list[float]] = defaultdict(list)
        self.refused = 0

    def __call__(self, model: str, body: dict[str, Any], n: int) -> Reply:
        time.sleep(self.arrival(n))
        now = time.monotonic()
        with self.lock:
            recent = [t for t in self.served[model] if now - t < self.window]
            if len(recent) >= self.allowed:
                self.refused += 1
                return quota_error(f"{max(0.001, self.window - (now - recent[0])):.3f}s")
            self.served[model].append(now)
        return self.respond(model, body, n)

    def busiest(self) -> int:
        """The most calls served to one model in any window."""
        return max((sum(1 for u in times if 0 <= u - t < self.window) for times in self.served.values()
                    for t in times), default=0)


class Tagger:
    """Answers like ``cooperative``, but stamps every edited image with a tag of its own (a
    JPEG comment) and names, in each verdict's reason, the tag of the image it judged; the
    first verdict on each task rejects, so runs have several rounds. A stored round whose
    image's tag differs from its verdict's is an image the verdict never saw."""

    def __init__(self, latency: float = 0.0) -> None:
        self.latency = latency
        self.lock = threading.Lock()
        self.issued = 0
        self.judged: dict[str, int] = defaultdict(int)

    def __call__(self, model: str, body: dict[str, Any], n: int) -> Reply:
        time.sleep(self.latency)
        if "image" in model:
            with self.lock:
                self.issued += 1
                tag = f"tag-{self.issued:06d}"
            with Image.open(io.BytesIO(edited(first_image(body)))) as image:
                out = io.BytesIO()
                image.save(out, "JPEG", quality=90, comment=tag.encode())
            return image_reply(out.getvalue())
        if body.get("generationConfig", {}).get("responseMimeType") == "application/json":
            tag = image_tag(first_image(body))
            task = _original_key(body)
            with self.lock:
                self.judged[task] += 1
                seen = self.judged[task]
            return text_reply(json.dumps(VERDICT | {"qualified": seen > 1,
                                                    "reason": f"judged {tag}"}))
        return cooperative(model, body, n)


def is_judge_batch(batch: Batch) -> bool:
    request = batch.requests[0].get("request") or {}
    return (request.get("generationConfig") or {}).get("responseMimeType") == "application/json"


def image_tag(data: bytes) -> str:
    with Image.open(io.BytesIO(data)) as image:
        comment = image.info.get("comment", b"")
    return comment.decode() if isinstance(comment, bytes) else str(comment)


def _original_key(body: dict[str, Any]) -> str:
    """The judged task, told apart by its original image (the second image sent) and the
    prompt, which names the disease and the direction (tasks share originals)."""
    parts = body["contents"][0]["parts"]
    images = [p for p in parts if p.get("inlineData") or p.get("inline_data")]
    data = (images[1].get("inlineData") or images[1].get("inline_data"))["data"]
    return data[-64:] + "".join(p.get("text", "") for p in parts)
