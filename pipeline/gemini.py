"""The gemini backend, through google-genai's async client.

Models default to the paper's: instructions and the judge on gemini-2.5-pro with thinking
summaries kept, edits on gemini-2.5-flash-image. The key comes from GOOGLE_API_KEY or
GEMINI_API_KEY and is handed to the client only: it is never stored, shown or logged. The
client's own retries are off; the loop retries with back-off and honours Retry-After.
"""

import asyncio
import io
import json
import re
import time
from dataclasses import dataclass
from typing import Any

import httpx
import httpx2
from google import genai
from google.genai import errors, types
from PIL import Image
from pydantic import BaseModel, ValidationError

from pipeline import judge_spec, prompts
from pipeline.backend import BackendError, Call, Edit, Instruction, TaskInfo, Verdict
from pipeline.judge_spec import JudgeSpec
from pipeline.prompts import Prompt
from pipeline.redaction import redact

NAME = "gemini"
DEFAULT_MODELS = {"instruction": "gemini-2.5-pro", "edit": "gemini-2.5-flash-image",
                  "judge": "gemini-2.5-pro"}
RETRYABLE = {408, 429, 500, 502, 503, 504}
# The client is pinned to httpx2 (its fork of httpx; GeminiBackend below); httpx's own
# errors are caught too, for the client's own fallbacks.
TIMEOUTS: tuple[type[BaseException], ...] = (httpx.TimeoutException, httpx2.TimeoutException,
                                             TimeoutError)
NETWORK_ERRORS: tuple[type[BaseException], ...] = (httpx.HTTPError, httpx2.HTTPError)
# The REST version the request and response shapes were written against; a new default in
# the client must not change them under a running study.
API_VERSION = "v1beta"


class JudgeAnswer(BaseModel):
    """The judge's response schema: structured output, never scraped from prose."""

    compliance: bool
    structure: bool
    realism: bool
    fidelity: bool
    has_disease: bool
    weighted_score: float
    qualified: bool
    reason: str


class GeminiBackend:
    name = NAME
    label = "gemini (model verdicts)"

    def __init__(self, key: str, models: dict[str, str] | None = None, *,
                 base_url: str | None = None, timeout_seconds: float = 300.0) -> None:
        self.models = {**DEFAULT_MODELS, **(models or {})}
        options = types.HttpOptions(
            api_version=API_VERSION,
            base_url=base_url or None,
            timeout=int(timeout_seconds * 1000),
            retry_options=types.HttpRetryOptions(attempts=1),
            # The HTTP client pinned: with aiohttp installed, google-genai would switch to it,
            # whose errors and timeouts differ from the ones handled here.
            async_client_args={"transport": httpx2.AsyncHTTPTransport()})
        self._client = genai.Client(api_key=key, http_options=options)
        self._key = key
        self.timeout_seconds = timeout_seconds

    async def _generate(self, request: "Request") -> tuple[Any, Call]:
        model = request.model or self.models[request.step]
        start = time.perf_counter()
        try:
            response = await self._client.aio.models.generate_content(
                model=model, contents=request.contents, config=request.config)
        except errors.APIError as error:
            raise self.failure(error) from None
        except TIMEOUTS as error:
            raise BackendError(redact(f"timeout after {time.perf_counter() - start:.0f} s: {error}",
                                      (self._key,))) from None
        except NETWORK_ERRORS as error:
            raise BackendError(redact(f"network error: {error}", (self._key,))) from None
        return response, answered(model, response, (time.perf_counter() - start) * 1000)

    def failure(self, error: errors.APIError) -> BackendError:
        """The API's error as the loop handles it: quota, retryable or final."""
        # Upstream errors (and proxies in front of Gemini) can echo the key.
        message = f"{error.code} {error.status or ''}: {error.message or ''}".strip()
        return BackendError(redact(message, (self._key,)), retry_after=_retry_after(error),
                            retryable=error.code in RETRYABLE,
                            quota=error.code == 429 or error.status == "RESOURCE_EXHAUSTED")

    # Each call is a request built here and an answer read here, so that the Batch API
    # (pipeline/gemini_batch.py) sends and reads exactly what an interactive call does.

    def instruction_request(self, task: TaskInfo, original: bytes, history: list[dict[str, Any]],
                            feedback: list[dict[str, Any]]) -> "Request":
        prompt = (prompts.first_instruction(task.modality, task.disease, task.direction, feedback)
                  if not history else
                  prompts.refinement(task.modality, task.disease, task.direction, history, feedback))
        return Request("instruction", [_image(original), prompt.text], _thinking_config(), prompt)

    @staticmethod
    def instruction_result(request: "Request", response: Any, call: Call) -> Instruction:
        assert request.prompt is not None
        text, thinking = _texts(response)
        if not text:
            raise BackendError("the instruction model answered with no text")
        return Instruction(text, thinking, request.prompt, call)

    def edit_request(self, original: bytes, instruction: str) -> "Request":
        config = types.GenerateContentConfig(response_modalities=["IMAGE", "TEXT"])
        return Request("edit", [_image(original), instruction], config, None)

    @staticmethod
    def edit_result(response: Any, call: Call) -> Edit:
        """The answer's final image. A thought part may carry an interim image (image models
        think in pictures too); bytes that do not decode as an image are no image at all, so
        the call is retried as one that sent none."""
        images = [bytes(data) for part in _parts(response)
                  if not getattr(part, "thought", False)
                  and (data := getattr(getattr(part, "inline_data", None), "data", None))]
        if images and _decodes(images[-1]):
            return Edit(images[-1], None, call)
        text, _ = _texts(response)
        why = "No image in response" + (" (its image part does not decode)" if images else "")
        return Edit(None, f"{why}{': ' + text[:200] if text else ''}", call)

    def judge_request(self, task: TaskInfo, original: bytes, edited: bytes,
                      instruction: str) -> "Request":
        prompt = prompts.judge(task.modality, task.disease, task.direction, instruction)
        config = _thinking_config()
        config.response_mime_type = "application/json"
        config.response_schema = JudgeAnswer
        return Request("judge", [_image(edited), _image(original), prompt.text], config, prompt)

    @staticmethod
    def judge_result(request: "Request", response: Any, call: Call) -> Verdict:
        assert request.prompt is not None
        text, thinking = _texts(response)
        try:
            answer = JudgeAnswer.model_validate(json.loads(text))
        except (json.JSONDecodeError, ValidationError) as error:
            return Verdict(None, f"JSON parse error: {str(error)[:300]}", thinking,
                           request.prompt, call, raw=text[:20_000])
        return Verdict(answer.model_dump(), None, thinking, request.prompt, call, raw=text)

    def candidate_request(self, spec: JudgeSpec, task: TaskInfo, original: bytes, edited: bytes,
                          instruction: str) -> "Request":
        """A candidate judge's call: its model, its prompt, its thinking budget and
        temperature, and the images in its order (the original first in an order-bias run)."""
        prompt = judge_spec.render(spec, task.modality, task.disease, task.direction, instruction)
        thinking = types.ThinkingConfig(include_thoughts=True)
        if spec.thinking_budget is not None:
            thinking.thinking_budget = spec.thinking_budget
        config = types.GenerateContentConfig(
            thinking_config=thinking, temperature=spec.temperature,
            response_mime_type="application/json", response_schema=JudgeAnswer)
        images = ([_image(original), _image(edited)] if spec.original_first
                  else [_image(edited), _image(original)])
        return Request("judge", [*images, prompt.text], config, prompt, model=spec.model)

    async def candidate_judge(self, spec: JudgeSpec, task: TaskInfo, original: bytes,
                              edited: bytes, instruction: str) -> Verdict:
        # Rendered off the event loop: a render may wait for its process up to its time limit,
        # and the job's heartbeat and every other task must go on meanwhile.
        request = await asyncio.to_thread(self.candidate_request, spec, task, original, edited,
                                          instruction)
        return self.judge_result(request, *await self._generate(request))

    async def instruction(self, task: TaskInfo, original: bytes, history: list[dict[str, Any]],
                          feedback: list[dict[str, Any]]) -> Instruction:
        request = self.instruction_request(task, original, history, feedback)
        return self.instruction_result(request, *await self._generate(request))

    async def edit(self, task: TaskInfo, original: bytes, instruction: str) -> Edit:
        return self.edit_result(*await self._generate(self.edit_request(original, instruction)))

    async def judge(self, task: TaskInfo, original: bytes, edited: bytes,
                    instruction: str) -> Verdict:
        request = self.judge_request(task, original, edited, instruction)
        return self.judge_result(request, *await self._generate(request))


@dataclass(frozen=True)
class Request:
    """One call as it is sent: the step's model, the contents and the generation config."""

    step: str  # "instruction", "edit" or "judge": the key of the model in GeminiBackend.models
    contents: list[Any]
    config: types.GenerateContentConfig
    prompt: Prompt | None  # the versioned prompt, for the steps that have one
    model: str | None = None  # a candidate judge's own model, else the step's


def answered(model: str, response: Any, latency_ms: float) -> Call:
    """The call's record, once the answer is known to be usable (else BackendError)."""
    _refuse_unusable(response)
    usage = getattr(response, "usage_metadata", None)
    return Call(model, latency_ms, getattr(usage, "prompt_token_count", None),
                getattr(usage, "candidates_token_count", None),
                getattr(usage, "thoughts_token_count", None),
                getattr(response, "model_version", None))


# Finish reasons that mean the service refused the content: asking again gets the same.
BLOCKED_FINISH = frozenset({"SAFETY", "PROHIBITED_CONTENT", "BLOCKLIST", "SPII", "IMAGE_SAFETY",
                            "IMAGE_PROHIBITED_CONTENT"})
# Finish reasons of an answer that stopped early for a reason another try may not meet.
EARLY_FINISH = frozenset({"RECITATION", "OTHER", "MALFORMED_FUNCTION_CALL", "LANGUAGE",
                          "IMAGE_RECITATION", "IMAGE_OTHER", "UNEXPECTED_TOOL_CALL", "NO_IMAGE"})


def _refuse_unusable(response: Any) -> None:
    """An answer is used only when it finished normally. A blocked prompt or answer is a
    block (never retried); output cut off at the token limit is an error, never stored as
    an instruction or verdict; one that stopped early otherwise is retried."""
    feedback = getattr(response, "prompt_feedback", None)
    block = _enum_name(getattr(feedback, "block_reason", None))
    if block and block != "BLOCKED_REASON_UNSPECIFIED":
        message = getattr(feedback, "block_reason_message", None) or ""
        raise BackendError(f"the request was blocked ({block}){': ' + message if message else ''}",
                           retryable=False, blocked=True)
    candidates = getattr(response, "candidates", None) or []
    finish = _enum_name(getattr(candidates[0], "finish_reason", None)) if candidates else ""
    if finish in BLOCKED_FINISH:
        raise BackendError(f"the answer was blocked ({finish})", retryable=False, blocked=True)
    if finish == "MAX_TOKENS":
        raise BackendError("the answer was cut off at the output token limit (MAX_TOKENS); "
                           "nothing of it was kept", retryable=False)
    if finish in EARLY_FINISH:
        raise BackendError(f"the answer stopped early ({finish}); nothing of it was kept")


def _enum_name(value: Any) -> str:
    if value is None:
        return ""
    return str(getattr(value, "value", value))


def _thinking_config() -> types.GenerateContentConfig:
    return types.GenerateContentConfig(thinking_config=types.ThinkingConfig(include_thoughts=True))


def _image(data: bytes) -> types.Part:
    """The image labelled with what its bytes are (an edit may come back as PNG)."""
    try:
        with Image.open(io.BytesIO(data)) as image:
            mime = image.get_format_mimetype() or "image/jpeg"
    except (OSError, Image.DecompressionBombError):
        mime = "image/jpeg"  # not an image Pillow reads: the API says what is wrong with it
    return types.Part.from_bytes(data=data, mime_type=mime)


def _decodes(data: bytes) -> bool:
    """Whether the bytes are an image Pillow reads to its last pixel."""
    try:
        with Image.open(io.BytesIO(data)) as image:
            image.load()
        return True
    except (OSError, ValueError, SyntaxError, Image.DecompressionBombError):
        return False


def _parts(response: Any) -> list[Any]:
    candidates = getattr(response, "candidates", None) or []
    content = getattr(candidates[0], "content", None) if candidates else None
    return list(getattr(content, "parts", None) or [])


def _texts(response: Any) -> tuple[str, str]:
    """The answer's text, and its thinking summary, kept apart."""
    answer: list[str] = []
    thoughts: list[str] = []
    for part in _parts(response):
        text = getattr(part, "text", None)
        if text:
            (thoughts if getattr(part, "thought", False) else answer).append(text)
    return "".join(answer).strip(), "\n".join(thoughts).strip()


RETRY_INFO = "type.googleapis.com/google.rpc.RetryInfo"
# "Please retry in 16.5s." / "retry in 1.2ms": the same delay, in the message's words.
_RETRY_IN = re.compile(r"retry in ([0-9]+(?:\.[0-9]+)?)\s*(ms|s)\b", re.IGNORECASE)


def _retry_after(error: errors.APIError) -> float | None:
    """The delay the service asks for: google.rpc.RetryInfo's retryDelay in the error body
    (where Gemini puts it), else a Retry-After header, else "retry in N s" in the message."""
    body = error.details if isinstance(error.details, dict) else {}
    status = body.get("error", body)  # {"error": {... "details": [...]}}, or the inner object
    details = status.get("details") if isinstance(status, dict) else None
    for detail in details if isinstance(details, list) else []:
        if isinstance(detail, dict) and detail.get("@type") == RETRY_INFO:
            delay = _duration(detail.get("retryDelay"))
            if delay is not None:
                return delay
    headers = getattr(getattr(error, "response", None), "headers", None)
    value = headers.get("retry-after") if headers is not None else None
    try:
        if value is not None:
            return max(0.0, float(value))
    except ValueError:
        pass
    found = _RETRY_IN.search(error.message or "")
    if found:
        number = float(found.group(1))
        return number / 1000 if found.group(2).lower() == "ms" else number
    return None


def _duration(value: object) -> float | None:
    """A protobuf Duration as JSON ("16.500s"), or its object form {"seconds", "nanos"}."""
    if isinstance(value, str) and value.endswith("s"):
        try:
            return max(0.0, float(value[:-1]))
        except ValueError:
            return None
    if isinstance(value, dict):
        try:
            return max(0.0, float(value.get("seconds", 0)) + float(value.get("nanos", 0)) / 1e9)
        except (TypeError, ValueError):
            return None
    return None
