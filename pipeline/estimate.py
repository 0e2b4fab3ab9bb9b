"""What a job will ask of Gemini before it starts: calls, tokens, wall time under the
configured quota, and cost at list prices, interactive and through the Batch API.

Token counts per call are typical Gemini 2.5 figures for one 1024-pixel image (an image is
billed by 768-pixel tiles of 258 tokens; an edited image is 1,290 output tokens; thinking is
billed as output), replaced by the means of the calls this database has recorded once there
are enough of them. Rounds per task come from the selected tasks' own latest runs when they
have any, else from the paper (2.4 judged rounds per task).
"""

import math
from collections import defaultdict
from dataclasses import dataclass

PAPER_ROUNDS = 2.4
# Which of the backend's models each step calls.
STEP_MODELS = {"generate_prompt": "instruction", "update_prompt": "instruction",
               "edit_image": "edit", "verify_image": "judge"}
ROLES = ("instruction", "edit", "judge")
# Recorded calls needed before their means replace the typical figures.
MIN_OBSERVED = 20
OBSERVED_CALLS = 2_000

# USD per million tokens (input, output with thinking), Gemini Developer API, paid tier,
# prompts under 200k tokens, as listed in November 2025. The Batch API costs half.
PRICES_AS_OF = "November 2025"
PRICES = {
    "gemini-2.5-pro": (1.25, 10.00),
    "gemini-2.5-flash": (0.30, 2.50),
    "gemini-2.5-flash-lite": (0.10, 0.40),
    "gemini-2.5-flash-image": (0.30, 30.00),
    "gemini-2.5-flash-image-preview": (0.30, 30.00),
    # Deterministic local stand-ins: no service is called.
    "offline (local)": (0.0, 0.0),
}
BATCH_FACTOR = 0.5
# The Batch API's stated turnaround: most batches finish well before, none is promised sooner.
BATCH_TARGET_HOURS = 24
# A request inline, with its images as base64 (a 1024-pixel JPEG is about 150 KB): the judge
# sends two. The Batch API takes inline batches up to 20 MB; ours stop at 18 MB.
INLINE_REQUEST_BYTES = {"instruction": 210_000, "edit": 210_000, "judge": 420_000}
INLINE_BATCH_BYTES = 18 * 1024 * 1024


@dataclass(frozen=True)
class Usage:
    """One call: tokens in, tokens out (answer and thinking), seconds to answer."""

    input: int
    output: int
    seconds: float

    @property
    def tokens(self) -> int:
        return self.input + self.output


TYPICAL = {"instruction": Usage(1_600, 1_700, 20.0), "edit": Usage(1_400, 1_290, 12.0),
           "judge": Usage(2_600, 1_800, 25.0)}
STEP_TOKENS = {step: TYPICAL[role].tokens for step, role in STEP_MODELS.items()}


@dataclass(frozen=True)
class Limits:
    """The quota a job runs under, per model, and how many tasks run at once."""

    per_minute: int | None = None
    per_day: int | None = None
    tokens_per_minute: int | None = None
    concurrency: int = 8


@dataclass(frozen=True)
class ModelLoad:
    model: str
    calls: float
    input_tokens: float
    output_tokens: float
    price: tuple[float, float] | None

    @property
    def cost(self) -> float | None:
        if self.price is None:
            return None
        return (self.input_tokens * self.price[0] + self.output_tokens * self.price[1]) / 1e6


@dataclass(frozen=True)
class Estimate:
    tasks: int
    rounds_per_task: float
    basis: str  # how many calls per task, and why
    usage_source: str
    models: list[ModelLoad]
    minutes: float  # wall time, interactive
    bound_by: str  # what sets that wall time
    batches: int  # batches a batch-mode job submits, at most
    waves: int  # of those, how many must run one after another
    most_calls: int  # were every task to use every round
    # Why this job cannot go through the Batch API, when it cannot (a promoted judge is
    # asked one call at a time); the estimate then shows no batch price.
    batch_refused: str | None = None

    @property
    def calls(self) -> float:
        return sum(m.calls for m in self.models)

    @property
    def tokens(self) -> float:
        return sum(m.input_tokens + m.output_tokens for m in self.models)

    @property
    def cost(self) -> float | None:
        costs = [m.cost for m in self.models]
        return None if any(c is None for c in costs) else sum(c or 0.0 for c in costs)

    @property
    def batch_cost(self) -> float | None:
        cost = self.cost
        return None if cost is None else cost * BATCH_FACTOR

    @property
    def unpriced(self) -> list[str]:
        return [m.model for m in self.models if m.price is None]

    @property
    def local(self) -> bool:
        """Every call goes to a backend on this machine: no service, no cost, no batches."""
        return bool(self.models) and all(m.model.endswith(LOCAL) for m in self.models)


# How a local backend's model is named in an estimate ("offline (local)").
LOCAL = "(local)"


def estimate(tasks: int, *, kind: str, rounds: int, rejudge_times: float, models: dict[str, str],
             limits: Limits, rounds_per_task: float | None = None, rounds_source: str = "",
             usage: dict[str, Usage] | None = None, usage_source: str = "") -> Estimate:
    """The load of ``tasks`` tasks, given the rounds they are expected to take."""
    usage = usage or TYPICAL
    if kind == "rejudge":
        per_task = {"judge": float(rejudge_times)}
        expected, basis = float(rejudge_times), f"{rejudge_times:.3g} judge calls per task"
    else:
        expected = min(float(rounds), rounds_per_task if rounds_per_task is not None else PAPER_ROUNDS)
        basis = (f"{expected:.2f} rounds per task, from "
                 f"{rounds_source or 'the paper (2.4 judged rounds per task)'}")
        per_task = {role: expected for role in ROLES}
    load: dict[str, list[float]] = defaultdict(lambda: [0.0, 0.0, 0.0])
    task_seconds = 0.0
    for role, calls in per_task.items():
        model = models.get(role, role)
        entry = load[model]
        entry[0] += tasks * calls
        entry[1] += tasks * calls * usage[role].input
        entry[2] += tasks * calls * usage[role].output
        task_seconds += calls * usage[role].seconds
    loads = [ModelLoad(m, c, i, o, PRICES.get(m)) for m, (c, i, o) in sorted(load.items())]
    minutes, bound_by = _wall_minutes(tasks, task_seconds, loads, limits)
    # Inline batches hold up to 18 MB of requests (pipeline/gemini_batch.py), so one step of
    # a wave over many tasks goes in several batches side by side.
    steps = {"judge": 1} if kind == "rejudge" else {role: 1 for role in ROLES}
    waves = math.ceil(rejudge_times) if kind == "rejudge" else rounds
    batches = waves * sum(math.ceil(tasks * INLINE_REQUEST_BYTES[role] / INLINE_BATCH_BYTES)
                          for role in steps)
    most = math.ceil(tasks * (rejudge_times if kind == "rejudge" else rounds * len(ROLES)))
    return Estimate(tasks, expected, basis, usage_source or "typical Gemini 2.5 calls",
                    loads, minutes, bound_by, batches, waves * len(steps), most)


def _wall_minutes(tasks: int, task_seconds: float, loads: list[ModelLoad],
                  limits: Limits) -> tuple[float, str]:
    """The slowest of: tasks at the concurrency, and each model's calls under each limit."""
    bounds = [(tasks * task_seconds / 60 / max(1, limits.concurrency),
               f"{limits.concurrency} tasks at a time")]
    for load in loads:
        if limits.per_minute:
            bounds.append((load.calls / limits.per_minute,
                           f"{limits.per_minute} calls a minute to {load.model}"))
        if limits.tokens_per_minute:
            bounds.append(((load.input_tokens + load.output_tokens) / limits.tokens_per_minute,
                           f"{limits.tokens_per_minute:,} tokens a minute to {load.model}"))
        if limits.per_day:
            # Whole days of quota used up, then the rest at the per-minute pace.
            days = math.floor(load.calls / limits.per_day) if load.calls > limits.per_day else 0
            bounds.append((days * 1440.0, f"{limits.per_day:,} calls a day to {load.model}"))
    return max(bounds)


def duration(minutes: float) -> str:
    if minutes < 90:
        return f"{minutes:.0f} min"
    if minutes < 48 * 60:
        return f"{minutes / 60:.1f} h"
    return f"{minutes / 1440:.1f} days"


def tokens(count: float) -> str:
    return f"{count / 1e6:,.1f} M" if count >= 1e6 else f"{count / 1e3:,.0f} k"


def dollars(amount: float | None) -> str:
    return "no list price" if amount is None else f"${amount:,.2f}"


def describe(est: Estimate) -> list[str]:
    """The estimate as lines of text (the CLI prints them before it starts)."""
    if est.local:
        names = ", ".join(sorted({m.model for m in est.models}))
        return [f"Estimate for {est.tasks:,} tasks: about {est.calls:,.0f} calls to {names} on "
                f"this machine ({est.basis}): no Gemini call, no cost, and no Batch API; it "
                "runs at this machine's speed."]
    lines = [f"Estimate for {est.tasks:,} tasks: about {est.calls:,.0f} calls and "
             f"{tokens(est.tokens)} tokens "
             f"({est.basis}; tokens per call from {est.usage_source})."]
    for load in est.models:
        lines.append(f"  {load.model}: {load.calls:,.0f} calls, "
                     f"{tokens(load.input_tokens)} in, {tokens(load.output_tokens)} out, "
                     f"{dollars(load.cost)}")
    lines.append(f"Interactive: about {duration(est.minutes)} (set by {est.bound_by}), "
                 f"{dollars(est.cost)} at {PRICES_AS_OF} list prices.")
    if est.batch_refused:
        lines.append(f"Batch API: not for this job ({est.batch_refused}).")
    else:
        lines.append(f"Batch API: {dollars(est.batch_cost)}; about {est.batches:,} inline "
                     f"batches in up to {est.waves} steps one after another, each promised "
                     f"within {BATCH_TARGET_HOURS} h.")
    return lines
