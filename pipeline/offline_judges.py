"""Offline candidate judges with known faults: deterministic, local, no model.

Each reads the same difference-image scores as the offline judge of record
(pipeline/offline.py ``rate``, a pass at 0.5) and then errs its own way, on each of the four
questions apart, on edits chosen by a hash of the edit, so the same candidate always errs on
the same ones. Per question the faults are small; per verdict (an edit passes only when all
four questions pass) they compound, and the verdict is what the leaderboard scores:

- none: the record's own rule;
- lenient: turns three in five of its failed answers into passes. An edit the fair rule fails
  on one question passes 60 % of the time (on two, 36 %); it never fails a fair pass;
- strict: turns three in ten of its passed answers into fails, so it fails 76 % of the edits
  the fair rule passes (1 - 0.7^4) and never passes a fair fail;
- order_biased: fair when the edited image comes first; with the original first it takes the
  original for the edit, sees nothing added, and fails half of its passed answers: 94 % of
  fair passes fail;
- noisy: flips one answer in five, chosen afresh for each repeat, so its repeats disagree:
  59 % of fair passes fail, and 10 % of edits failing one question pass.

``verdict_error_rates`` gives these figures from the faults themselves, and a test measures
them. So the observatory's whole loop can be run and tested without a key, and a leaderboard
that does not put the lenient judge among the too-lenient, or miss the order-biased one, is
wrong.
"""

import time
import zlib
from typing import Any

from pipeline import offline
from pipeline.backend import Call, TaskInfo, Verdict
from pipeline.judge_spec import OFFLINE_BIASES, JudgeSpec, render
from pipeline.vocabulary import DIMENSIONS, WEIGHTS

PASS_AT = 0.5
# (the answer it changes, the share of edits it changes it on)
FAULTS = {"lenient": (False, 0.6), "strict": (True, 0.3), "noisy": (None, 0.2)}
ORDER_BIASED_REVERSED = (True, 0.5)


def fault(spec: JudgeSpec) -> tuple[bool | None, float] | None:
    """Which answers the candidate changes (None: either) and on what share of edits."""
    if spec.bias == "order_biased":
        return ORDER_BIASED_REVERSED if spec.original_first else None
    return FAULTS.get(spec.bias or "")


def verdict_error_rates(spec: JudgeSpec) -> tuple[float, float]:
    """(the share of fair passes it fails, the share of edits failing one question it passes):
    its per-answer fault compounded over the four questions."""
    changes = fault(spec)
    if changes is None:
        return 0.0, 0.0
    which, share = changes
    questions = len(DIMENSIONS)
    fails_a_pass = 1 - (1 - share) ** questions if which in (None, True) else 0.0
    if which is None:  # the failed answer flips and none of the other three does
        passes_a_fail = share * (1 - share) ** (questions - 1)
    else:
        passes_a_fail = share if which is False else 0.0
    return fails_a_pass, passes_a_fail


def _chosen(task: TaskInfo, instruction: str, dimension: str, repeat: int | None,
            share: float) -> bool:
    draw = zlib.crc32(f"{task.key}/{instruction}/{dimension}/{repeat}".encode())
    return (draw % 1000) / 1000 < share


def verdict_fields(spec: JudgeSpec, task: TaskInfo, scores: dict[str, float],
                   instruction: str, repeat: int) -> dict[str, Any]:
    """The candidate's answer from the offline scores (0..1 per dimension)."""
    if spec.bias not in (None, *OFFLINE_BIASES):
        raise ValueError(f"no offline judge {spec.bias!r}; they are {', '.join(OFFLINE_BIASES)}")
    passed = {d: scores[d] >= PASS_AT for d in DIMENSIONS}
    changes = fault(spec)
    if changes is not None:
        which, share = changes
        # The noisy judge draws afresh for each repeat; the others err on the same edits.
        draw = repeat if spec.bias == "noisy" else None
        passed = {d: (not p) if (which is None or p == which)
                  and _chosen(task, instruction, d, draw, share) else p
                  for d, p in passed.items()}
    failed = [d for d in DIMENSIONS if not passed[d]]
    weighted = float(sum(weight * scores[d] for d, weight in WEIGHTS.items()))
    reason = ("Acceptable by this judge's rule." if not failed else
              " ".join(offline.REASONS[d] for d in failed))
    return {**passed, "has_disease": passed["compliance"] == (task.direction == "add"),
            "qualified": not failed, "weighted_score": round(weighted, 3), "reason": reason}


def judge(spec: JudgeSpec, task: TaskInfo, original: bytes, edited: bytes, instruction: str,
          repeat: int = 0) -> Verdict:
    """One verdict of an offline candidate; ``repeat`` counts its runs on the same edit."""
    start = time.perf_counter()
    prompt = render(spec, task.modality, task.disease, task.direction, instruction)
    scores = offline.rate(task, original, edited)["scores"]
    fields = verdict_fields(spec, task, scores, instruction, repeat)
    call = Call(f"{offline.MODEL}/{spec.bias or 'fair'}", (time.perf_counter() - start) * 1000,
                model_version=offline.MODEL)
    return Verdict(fields, None, f"Offline candidate ({spec.bias or 'fair'}): {scores}", prompt,
                   call, extra={"scores": scores})
