"""Entries of the generation scripts' JSON files (format doc, section 3)."""

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
    opt_str,
    raw_json,
    round_number,
    unknown_fields,
)
from app.models import Direction, Modality
from pipeline.redaction import redact_optional
from pipeline.vocabulary import Outcome

ENTRY_FIELDS = frozenset(
    {"image", "disease", "status", "rounds", "final_prompt", "final_image_path"}
)
ROUND_FIELDS = frozenset({"round", "generate_prompt", "edit_result", "verification"})
VERIFICATION_FIELDS = frozenset(
    {"qualified", "has_disease", "structure_reasonable", "looks_realistic", "reason",
     "thinking_summary", "error"}
)
API_FAILURE_STEPS = frozenset({"generate_prompt", "update_prompt", "edit_image", "verify_image"})
STATUSES = {"success": Outcome.success, "failed": Outcome.failed}


class FolderContext:
    """What the folder name tells: the data set, its modality and the direction."""

    def __init__(self, dataset: str, direction: Direction) -> None:
        self.dataset = dataset
        self.direction = direction
        self.modality: Modality = layout.infer_modality(dataset)

    @property
    def label(self) -> str:
        return f"{self.dataset}-{layout.DISK_DIRECTION[self.direction]}"


def image_and_disease(entry: dict[str, Any]) -> tuple[str, str]:
    image, disease = entry.get("image"), entry.get("disease")
    if not layout.is_safe_name(image):
        raise RowError(f"image {image!r:.80} is not a plain file name")
    if not layout.is_safe_name(disease):
        raise RowError(f"disease {disease!r:.80} is not a plain folder name")
    assert isinstance(image, str) and isinstance(disease, str)
    return image, disease


def parse_conversation(key: str, entry: Any, ctx: FolderContext) -> TaskRecord:
    """One value of all_conversations.json. Raises RowError when it cannot be imported."""
    if not isinstance(entry, dict):
        raise RowError(f"entry should be an object, not {type(entry).__name__}")
    image, disease = image_and_disease(entry)
    status = entry.get("status")
    if status not in STATUSES:
        raise RowError(f"status {status!r:.40} is neither 'success' nor 'failed'")
    rounds = entry.get("rounds")
    if not isinstance(rounds, list) or not rounds:
        raise RowError("rounds should be a non-empty list")
    stem = layout.stem_of(image)
    warnings = unknown_fields(entry, ENTRY_FIELDS, key)
    if key != f"{stem}-{disease}":
        warnings.append(("key_mismatch", f"key does not match image {image!r} and disease"))
    attempts = check_rounds_unique(
        [_parse_round(r, ctx, stem, disease, warnings, key) for r in rounds]
    )
    outcome = STATUSES[status]
    _place_images(attempts, outcome, ctx, stem, disease)
    return TaskRecord(
        key=key, dataset=ctx.dataset, modality=ctx.modality, direction=ctx.direction,
        disease=disease, image=image, outcome=outcome,
        fingerprint=fingerprint("conversation", ctx.label, entry), attempts=attempts,
        final_instruction=opt_str(entry, "final_prompt", key), warnings=warnings,
    )


def _parse_round(
    obj: Any, ctx: FolderContext, stem: str, disease: str,
    warnings: list[tuple[str, str]], key: str,
) -> AttemptRecord:
    if not isinstance(obj, dict):
        raise RowError(f"a round should be an object, not {type(obj).__name__}")
    where = f"{key} round {obj.get('round')!r:.20}"
    number = round_number(obj.get("round"), "round")
    warnings.extend(unknown_fields(obj, ROUND_FIELDS, where))
    prompt = opt_dict(obj, "generate_prompt", where)
    edit = opt_dict(obj, "edit_result", where)
    edit_ok = opt_bool(edit, "success", f"{where}.edit_result")
    edit_error = redact_optional(opt_str(edit, "error", f"{where}.edit_result"))
    if edit_ok is False and not edit_error:
        edit_error = "edit failed (no error text recorded)"
    verification = obj.get("verification")
    verdict = None
    if verification is not None:
        verdict = _parse_verification(verification, ctx.direction, where, warnings)
    return AttemptRecord(
        round=number,
        instruction=opt_str(prompt, "prompt", f"{where}.generate_prompt"),
        instruction_thinking=opt_str(prompt, "thinking_summary", f"{where}.generate_prompt"),
        image_candidates=[] if edit_ok is False else [""],
        edit_error=edit_error, verdict=verdict,
    )


def _parse_verification(
    obj: Any, direction: Direction, where: str, warnings: list[tuple[str, str]]
) -> VerdictRecord:
    if not isinstance(obj, dict):
        raise RowError(f"{where}.verification should be an object")
    where = f"{where}.verification"
    warnings.extend(unknown_fields(obj, VERIFICATION_FIELDS, where))
    has_disease = opt_bool(obj, "has_disease", where)
    return VerdictRecord(
        compliance=compliance_of(direction, has_disease),
        structure=opt_bool(obj, "structure_reasonable", where),
        realism=opt_bool(obj, "looks_realistic", where),
        qualified=opt_bool(obj, "qualified", where),
        has_disease=has_disease,
        reason=opt_str(obj, "reason", where),
        thinking_summary=opt_str(obj, "thinking_summary", where),
        error=redact_optional(opt_str(obj, "error", where)),
        raw_json=raw_json(obj),
    )


def _place_images(
    attempts: list[AttemptRecord], outcome: Outcome, ctx: FolderContext, stem: str, disease: str
) -> None:
    """The accepted image is the last round of a success; every other round is failed-k."""
    last = len(attempts) - 1
    for i, attempt in enumerate(attempts):
        if not attempt.image_candidates:
            continue  # the edit itself failed, so no file was written
        if outcome is Outcome.success and i == last:
            path = layout.accepted_relpath(ctx.dataset, ctx.direction, stem, disease)
        else:
            path = layout.failed_relpath(ctx.dataset, ctx.direction, stem, disease, attempt.round)
        # Saved under .jpeg by the scripts; an export of a PNG edit keeps .png.
        stem_path = path.rsplit(".", 1)[0]
        attempt.image_candidates = [path] + [stem_path + s for s in layout.OTHER_IMAGE_SUFFIXES]


def parse_api_failure(entry: Any, ctx: FolderContext) -> TaskRecord:
    """One element of api_failures.json: a run that died on an API error, rounds lost."""
    if not isinstance(entry, dict):
        raise RowError(f"entry should be an object, not {type(entry).__name__}")
    image, disease = image_and_disease(entry)
    step = entry.get("step")
    if step not in API_FAILURE_STEPS:
        raise RowError(f"step {step!r:.40} is not one of {sorted(API_FAILURE_STEPS)}")
    failure_round = entry.get("round")
    if failure_round is not None:
        failure_round = round_number(failure_round, "api failure")
    key = entry.get("task")
    if not isinstance(key, str):
        key = f"{layout.stem_of(image)}-{disease}"
    return TaskRecord(
        key=key, dataset=ctx.dataset, modality=ctx.modality, direction=ctx.direction,
        disease=disease, image=image, outcome=Outcome.api_failed,
        fingerprint=fingerprint("api_failure", ctx.label, entry),
        failure_step=step, failure_round=failure_round,
        failure_error=redact_optional(opt_str(entry, "error", key)),
    )
