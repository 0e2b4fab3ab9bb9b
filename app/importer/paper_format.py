"""Entries in the schema the paper describes (format doc, section 4)."""

from typing import Any

from app.importer import layout
from app.importer.errors import RowError
from app.importer.records import (
    AttemptRecord,
    TaskRecord,
    VerdictRecord,
    check_rounds_unique,
    compliance_of,
    fingerprint,
    opt_bool,
    opt_dict,
    opt_float,
    opt_str,
    raw_json,
    round_number,
    unknown_fields,
)
from app.models import Direction, Modality
from pipeline.vocabulary import Outcome

ENTRY_FIELDS = frozenset(
    {"image_id", "dataset", "modality", "disease", "task", "rounds", "outcome",
     "success_round", "output_path"}
)
ROUND_FIELDS = frozenset({"round", "instruction", "verdict"})
VERDICT_FIELDS = frozenset(
    {"has_disease", "structure_reasonable", "looks_realistic", "qualified", "reason",
     "fidelity", "weighted_score", "thinking_summary"}
)
OUTCOMES = {"success": Outcome.success, "failed": Outcome.failed}
# Fields whose presence marks a JSON object as a paper-schema entry.
SIGNATURE = ("image_id", "task", "rounds")


def looks_like_paper_entry(obj: Any) -> bool:
    return isinstance(obj, dict) and all(name in obj for name in SIGNATURE)


def parse_paper_entry(entry: Any, context: str) -> TaskRecord:
    if not isinstance(entry, dict):
        raise RowError(f"entry should be an object, not {type(entry).__name__}")
    image_id, disease, dataset = entry.get("image_id"), entry.get("disease"), entry.get("dataset")
    for name, value in (("image_id", image_id), ("disease", disease), ("dataset", dataset)):
        if not layout.is_safe_name(value):
            raise RowError(f"{name} {value!r:.80} is not a plain name")
    assert isinstance(image_id, str) and isinstance(disease, str) and isinstance(dataset, str)
    direction = _direction(entry.get("task"))
    modality = _modality(entry.get("modality"), dataset)
    raw_outcome = entry.get("outcome")
    outcome = OUTCOMES.get(raw_outcome) if isinstance(raw_outcome, str) else None
    if outcome is None:
        raise RowError(f"outcome {entry.get('outcome')!r:.40} is neither 'success' nor 'failed'")
    rounds = entry.get("rounds")
    if not isinstance(rounds, list) or not rounds:
        raise RowError("rounds should be a non-empty list")
    stem = layout.stem_of(image_id) if image_id.lower().endswith(layout.IMAGE_SUFFIXES) else image_id
    key = f"{stem}-{disease}"
    warnings = unknown_fields(entry, ENTRY_FIELDS, key)
    attempts = check_rounds_unique([_parse_round(r, direction, key, warnings) for r in rounds])
    last = len(attempts) - 1
    for i, attempt in enumerate(attempts):
        failed_k = None if (outcome is Outcome.success and i == last) else attempt.round
        attempt.image_candidates = layout.paper_image_candidates(
            dataset, direction, stem, disease, failed_k
        )
    success_round = entry.get("success_round")
    if outcome is Outcome.success and success_round not in (None, attempts[-1].round):
        warnings.append(("inconsistent", f"{key}: success_round {success_round!r:.20} "
                         f"is not the last round {attempts[-1].round}"))
    image, alternatives = _source_names(image_id)
    return TaskRecord(
        key=key, dataset=dataset, modality=modality, direction=direction, disease=disease,
        image=image, image_alternatives=alternatives, outcome=outcome,
        fingerprint=fingerprint("paper", context, entry), attempts=attempts,
        final_instruction=attempts[-1].instruction, warnings=warnings,
    )


def _direction(value: Any) -> Direction:
    if value in ("add", "edit"):
        return Direction.add
    if value == "remove":
        return Direction.remove
    raise RowError(f"task {value!r:.40} is neither 'add' nor 'remove'")


def _modality(value: Any, dataset: str) -> Modality:
    if value is None:
        return layout.infer_modality(dataset)
    try:
        return Modality(value)
    except ValueError:
        raise RowError(f"modality {value!r:.40} is not one of {[m.value for m in Modality]}") from None


def _source_names(image_id: str) -> tuple[str, list[str]]:
    if image_id.lower().endswith(layout.IMAGE_SUFFIXES):
        return image_id, []
    names = [image_id + suffix for suffix in layout.IMAGE_SUFFIXES]
    return names[0], names[1:]


def _parse_round(
    obj: Any, direction: Direction, key: str, warnings: list[tuple[str, str]]
) -> AttemptRecord:
    if not isinstance(obj, dict):
        raise RowError(f"a round should be an object, not {type(obj).__name__}")
    where = f"{key} round {obj.get('round')!r:.20}"
    number = round_number(obj.get("round"), "round")
    warnings.extend(unknown_fields(obj, ROUND_FIELDS, where))
    verdict_obj = opt_dict(obj, "verdict", where)
    verdict = None
    if verdict_obj:
        warnings.extend(unknown_fields(verdict_obj, VERDICT_FIELDS, f"{where}.verdict"))
        v = f"{where}.verdict"
        has_disease = opt_bool(verdict_obj, "has_disease", v)
        verdict = VerdictRecord(
            compliance=compliance_of(direction, has_disease),
            structure=opt_bool(verdict_obj, "structure_reasonable", v),
            realism=opt_bool(verdict_obj, "looks_realistic", v),
            fidelity=opt_bool(verdict_obj, "fidelity", v),
            qualified=opt_bool(verdict_obj, "qualified", v),
            has_disease=has_disease,
            weighted_score=opt_float(verdict_obj, "weighted_score", v),
            reason=opt_str(verdict_obj, "reason", v),
            thinking_summary=opt_str(verdict_obj, "thinking_summary", v),
            raw_json=raw_json(verdict_obj),
        )
    return AttemptRecord(
        round=number, instruction=opt_str(obj, "instruction", where),
        instruction_thinking=None, image_candidates=[], edit_error=None, verdict=verdict,
    )
