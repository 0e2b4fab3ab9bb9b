"""What every backend does, and what each call returns: the pipeline's only contract with
gemini or the offline implementation. Results carry their accounting (model, latency,
tokens) and the prompt version, so every stored round says how it was made."""

from dataclasses import dataclass, field
from typing import Any, Protocol

from pipeline.prompts import Prompt


@dataclass(frozen=True)
class TaskInfo:
    key: str
    modality: str
    disease: str
    direction: str  # add | remove


@dataclass(frozen=True)
class Call:
    model: str
    latency_ms: float
    input_tokens: int | None = None
    output_tokens: int | None = None  # the answer's tokens, thinking not included
    # Billed as output too: the thinking behind the answer (often several times the answer).
    thinking_tokens: int | None = None
    # The model version the API says answered (a name like "gemini-2.5-pro" can move).
    model_version: str | None = None


@dataclass(frozen=True)
class Instruction:
    text: str
    thinking: str
    prompt: Prompt
    call: Call


@dataclass(frozen=True)
class Edit:
    image: bytes | None  # JPEG bytes, or None when the model answered without an image
    error: str | None
    call: Call


@dataclass(frozen=True)
class Verdict:
    # compliance, structure, realism, fidelity, has_disease, qualified (bools),
    # weighted_score (0..1), reason (text); None when the answer could not be read
    fields: dict[str, Any] | None
    error: str | None
    thinking: str
    prompt: Prompt
    call: Call
    raw: str = ""
    extra: dict[str, Any] = field(default_factory=dict)


class BackendError(Exception):
    """A call failed. Network errors, 429 and 5xx may be cured by a retry; a rejected
    request (a bad key, a 400) is not, and fails the step at once. ``quota``: the service
    said the quota is used up (429 RESOURCE_EXHAUSTED), so the call waits, as long as it
    takes, and never counts against the step's attempts."""

    def __init__(self, message: str, *, retry_after: float | None = None,
                 retryable: bool = True, quota: bool = False, blocked: bool = False) -> None:
        super().__init__(message)
        self.retry_after, self.retryable, self.quota = retry_after, retryable, quota
        # The API refused on safety or content grounds: asking again gets the same answer.
        self.blocked = blocked


class Backend(Protocol):
    name: str
    label: str  # shown beside every verdict it makes

    async def instruction(self, task: TaskInfo, original: bytes, history: list[dict[str, Any]],
                          feedback: list[dict[str, Any]]) -> Instruction: ...

    async def edit(self, task: TaskInfo, original: bytes, instruction: str) -> Edit: ...

    async def judge(self, task: TaskInfo, original: bytes, edited: bytes,
                    instruction: str) -> Verdict: ...


def tokens_used(result: Any) -> int | None:
    """What an answered call reports having used: input, answer and thinking tokens."""
    call = getattr(result, "call", None)
    if call is None or call.input_tokens is None:
        return None
    return int(call.input_tokens + (call.output_tokens or 0) + (call.thinking_tokens or 0))
