"""A local fake of Gemini's generateContent REST endpoint, for the real google-genai client.

Each request is answered by ``respond(model, body, n)`` (n counts that model's calls from
1): a Reply with status, JSON body or raw text, headers and a delay. The default answers
like a cooperative Gemini: an instruction, an edited image (the request's image, brightened
in a corner), and a qualified verdict.
"""

import base64
import io
import json
import re
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


class FakeGemini:
    def __init__(self, respond: Callable[[str, dict[str, Any], int], Reply] = cooperative) -> None:
        self.respond = respond
        self.calls: list[tuple[str, float, dict[str, Any]]] = []
        self.counts: dict[str, int] = defaultdict(int)
        self.lock = threading.Lock()
        self.keys: set[str] = set()

    @contextmanager
    def serve(self) -> Iterator[str]:
        fake = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *_: Any) -> None:  # quiet in test output
                return

            def do_POST(self) -> None:
                match = PATH.match(self.path.split("?")[0])
                body = json.loads(self.rfile.read(int(self.headers.get("content-length", 0))) or b"{}")
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
                 respond: Callable[[str, dict[str, Any], int], Reply] = cooperative) -> None:
        self.allowed, self.window, self.respond = allowed, window, respond
        self.lock = threading.Lock()
        self.served: dict[str, list[float]] = defaultdict(list)
        self.refused = 0

    def __call__(self, model: str, body: dict[str, Any], n: int) -> Reply:
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
