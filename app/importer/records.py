"""Normalised records: what one task entry of either format means, free of file shapes."""

from dataclasses import dataclass, field
from hashlib import blake2b
from typing import Any

import orjson

from app.importer.errors import RowError
from app.models import TEXT_STORED_APART, Direction, Modality
from pipeline.vocabulary import Outcome


@dataclass(slots=True)
class VerdictRecord:
    compliance: bool | None = None
    structure: bool | None = None
    realism: bool | None = None
    fidelity: bool | None = None
    qualified: bool | None = None
    has_disease: bool | None = None
    weighted_score: float | None = None
    reason: str | None = None
    thinking_summary: str | None = None
    error: str | None = None
    raw_json: str | None = None


@dataclass(slots=True)
class AttemptRecord:
    round: int
    instruction: str | None
    instruction_thinking: str | None
    # Candidate paths relative to the run root, most likely first; the first that exists wins.
    image_candidates: list[str]
    edit_error: str | None
    verdict: VerdictRecord | None


@dataclass(slots=True)
class TaskRecord:
    key: str
    dataset: str
    modality: Modality
    direction: Direction
    disease: str
    image: str
    outcome: Outcome
    fingerprint: str
    attempts: list[AttemptRecord] = field(default_factory=list)
    final_instruction: str | None = None
    failure_step: str | None = None
    failure_round: int | None = None
    failure_error: str | None = None
    # False when another record of the same task is the one progress.json calls current.
    is_current: bool = True
    # Other file names the source image may have (the paper's schema gives no extension).
    image_alternatives: list[str] = field(default_factory=list)
    warnings: list[tuple[str, str]] = field(default_factory=list)

    def settle(self) -> None:
        """A run the files call failed in which no round has a verdict the judge gave (every
        edit came back empty, or no verdict could be read) was never judged: it is kept
        apart from runs the judge rejected."""
        if self.outcome is Outcome.failed and not any(
                a.verdict is not None and a.verdict.error is None and a.verdict.qualified is not None
                for a in self.attempts):
            self.outcome = Outcome.unjudged

    @property
    def success_round(self) -> int | None:
        if self.outcome is Outcome.success and self.attempts:
            return self.attempts[-1].round
        return None


def fingerprint(kind: str, context: str, entry: Any) -> str:
    """A stable hash of a source record, so the same record is never imported twice."""
    digest = blake2b(digest_size=16)
    digest.update(f"{kind}\x00{context}\x00".encode())
    digest.update(orjson.dumps(entry, option=orjson.OPT_SORT_KEYS))
    return digest.hexdigest()


def raw_json(value: dict[str, Any]) -> str:
    """The verdict object as received, less the long texts kept once in their own columns
    (see ``JudgeVerdict.raw``): storing them twice made imports a fifth slower."""
    return orjson.dumps({k: v for k, v in value.items() if k not in TEXT_STORED_APART}).decode()


def opt_str(obj: dict[str, Any], name: str, where: str) -> str | None:
    value = obj.get(name)
    if value is None or isinstance(value, str):
        return value
    raise RowError(f"{where}.{name} should be text, not {type(value).__name__}")


def opt_bool(obj: dict[str, Any], name: str, where: str) -> bool | None:
    value = obj.get(name)
    if value is None or isinstance(value, bool):
        return value
    raise RowError(f"{where}.{name} should be true or false, not {value!r:.40}")


def opt_float(obj: dict[str, Any], name: str, where: str) -> float | None:
    value = obj.get(name)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise RowError(f"{where}.{name} should be a number, not {value!r:.40}")
    return float(value)


def opt_dict(obj: dict[str, Any], name: str, where: str) -> dict[str, Any]:
    value = obj.get(name)
    if value is None:
        return {}
    if isinstance(value, dict):
        return value
    raise RowError(f"{where}.{name} should be an object, not {type(value).__name__}")


def round_number(value: Any, where: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= 1000:
        raise RowError(f"{where}.round should be a positive whole number, not {value!r:.40}")
    return value


def unknown_fields(obj: dict[str, Any], known: frozenset[str], where: str) -> list[tuple[str, str]]:
    if known.issuperset(obj):  # nearly always, and a set's check in C
        return []
    return [("unknown_field", f"{where}: unknown field {name!r}") for name in obj if name not in known]


def compliance_of(direction: Direction, has_disease: bool | None) -> bool | None:
    """For a removal the edit complied when the disease is gone."""
    if has_disease is None:
        return None
    return has_disease if direction is Direction.add else not has_disease


def check_rounds_unique(attempts: list[AttemptRecord]) -> list[AttemptRecord]:
    attempts.sort(key=lambda a: a.round)
    numbers = [a.round for a in attempts]
    if len(set(numbers)) != len(numbers):
        raise RowError(f"round numbers repeat: {numbers}")
    return attempts
