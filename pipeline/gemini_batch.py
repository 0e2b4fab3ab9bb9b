"""The Gemini Batch API through google-genai: a step's calls submitted as inline batches,
found again by display name after a restart, and answered request by request.

The requests are the ones interactive calls send (GeminiBackend builds both), and each
answer is read by the same code, so a batch round is stored exactly as an interactive one.
The API takes inline batches up to 20 MB; a step's calls over that are split into parts.
"""

import base64
import hashlib
import logging
from dataclasses import dataclass
from typing import Any

from google.genai import errors, types

from pipeline.backend import BackendError
from pipeline.gemini import NETWORK_ERRORS, TIMEOUTS, GeminiBackend, Request, answered
from pipeline.redaction import redact

logger = logging.getLogger(__name__)
# Below the API's 20 MB for an inline batch request, with room for the JSON around the parts.
INLINE_BYTES = 18 * 1024 * 1024
SUCCEEDED = "JOB_STATE_SUCCEEDED"
ENDED = frozenset({SUCCEEDED, "JOB_STATE_FAILED", "JOB_STATE_CANCELLED", "JOB_STATE_EXPIRED"})


@dataclass(frozen=True)
class Answer:
    """One request's outcome in an ended batch: the response, or the error in its place."""

    response: Any | None
    error: str | None


def request_bytes(request: Request) -> int:
    """About what the request weighs inline: images go as base64."""
    size = 0
    for item in request.contents:
        data = getattr(getattr(item, "inline_data", None), "data", None)
        size += len(base64.b64encode(data)) if data else len(str(item).encode())
    return size + 2_000


def fingerprint(request: Request) -> str:
    """What the request carries, as one hash: the step, each image's bytes and each text. A
    batch answer belongs to these inputs and to no others."""
    digest = hashlib.sha256(request.step.encode())
    for item in request.contents:
        data = getattr(getattr(item, "inline_data", None), "data", None)
        text = item if isinstance(item, str) else getattr(item, "text", None)
        if data:
            digest.update(b"\x00image\x00" + hashlib.sha256(bytes(data)).digest())
        else:
            digest.update(b"\x00text\x00" + str(text if text is not None else item).encode())
    return digest.hexdigest()


def parts(requests: list[Request], limit: int = INLINE_BYTES) -> list[list[int]]:
    """The requests' indexes, split into batches under the inline size limit."""
    chunks: list[list[int]] = [[]]
    size = 0
    for index, request in enumerate(requests):
        weight = request_bytes(request)
        if chunks[-1] and size + weight > limit:
            chunks.append([])
            size = 0
        chunks[-1].append(index)
        size += weight
    return chunks


def model_of(backend: GeminiBackend, step: str, requests: list[Request]) -> str:
    """The model a batch of one step is sent to: a candidate judge's own, else the step's.
    A batch has one model, and every request of a step's batch names the same one."""
    return (requests[0].model if requests else None) or backend.models[step]


def state_name(state: Any) -> str:
    return str(getattr(state, "value", state) or "JOB_STATE_UNSPECIFIED")


class Batches:
    """Batch calls of one GeminiBackend: its client, its models, its key handling."""

    def __init__(self, backend: GeminiBackend) -> None:
        self.backend = backend
        self._client = backend._client

    async def submit(self, step: str, requests: list[Request], keys: list[str],
                     display_name: str) -> tuple[str, str]:
        """Submit the calls as one batch; its name ("batches/…") and state."""
        src = [types.InlinedRequest(contents=r.contents, config=r.config, metadata={"key": k})
               for r, k in zip(requests, keys, strict=True)]
        job = await self._call(self._client.aio.batches.create(
            model=model_of(self.backend, step, requests), src=src,
            config=types.CreateBatchJobConfig(display_name=display_name)))
        if not job.name:
            raise BackendError("the Batch API accepted the batch but gave it no name")
        return job.name, state_name(job.state)

    async def find(self, display_name: str) -> tuple[str, str] | None:
        """A batch submitted under this display name, if the API has one (a worker stopped
        between submitting a batch and recording its name)."""
        pager = await self._call(self._client.aio.batches.list(
            config=types.ListBatchJobsConfig(page_size=100)))
        async for job in pager:
            if job.display_name == display_name and job.name:
                return job.name, state_name(job.state)
        return None

    async def poll(self, name: str) -> tuple[str, dict[str, Answer] | None]:
        """The batch's state, and once it succeeded, each request's answer by key."""
        job = await self._call(self._client.aio.batches.get(name=name))
        state = state_name(job.state)
        if state != SUCCEEDED:
            return state, None
        answers: dict[str, Answer] = {}
        for item in getattr(job.dest, "inlined_responses", None) or []:
            key = (item.metadata or {}).get("key")
            if key is None:
                continue
            error = item.error
            message = (f"{error.code or ''} {error.message or ''}".strip() or "error"
                       if error is not None else None)
            answers[key] = Answer(item.response if error is None else None, message)
        return state, answers

    async def cancel(self, name: str) -> None:
        await self._call(self._client.aio.batches.cancel(name=name))

    def read(self, step: str, request: Request, answer: Answer) -> Any:
        """The answer as the interactive call would return it (BackendError if unusable)."""
        if answer.error is not None or answer.response is None:
            raise BackendError(f"the batch answered this request with an error: "
                               f"{answer.error or 'no response'}")
        call = answered(request.model or self.backend.models[step], answer.response, 0.0)
        if step == "instruction":
            return self.backend.instruction_result(request, answer.response, call)
        if step == "edit":
            return self.backend.edit_result(answer.response, call)
        return self.backend.judge_result(request, answer.response, call)

    async def _call(self, awaitable: Any) -> Any:
        try:
            return await awaitable
        except errors.APIError as error:
            raise self.backend.failure(error) from None
        except (*TIMEOUTS, *NETWORK_ERRORS) as error:
            raise BackendError(redact(f"Batch API unreachable: {error}",
                                      (self.backend._key,))) from None
