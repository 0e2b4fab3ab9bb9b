"""A task's latest run, summed up on the task row so that the listing and its filters read
one row per task. The importer and the pipeline's store both write it, by this one rule."""

from collections.abc import Iterable, Mapping

from pipeline.vocabulary import DIMENSION_BITS, Dimension, Outcome

# Each dimension's name and bit, once: iterating the enum cost more than the rest of an
# imported run's summary (220K verdicts at 88K tasks).
_BITS = tuple((dim.value, DIMENSION_BITS[dim]) for dim in Dimension)


def failed_mask(verdicts: Iterable[Mapping[str, bool | None]]) -> int:
    """The dimensions any verdict of the run failed, as ``Task.failed_mask`` bits."""
    mask = 0
    for verdict in verdicts:
        for name, bit in _BITS:
            if verdict.get(name) is False:
                mask |= bit
    return mask


def task_summary(run_id: int, outcome: Outcome, rounds: list[tuple[int, bool]],
                 verdicts: Iterable[Mapping[str, bool | None]]) -> dict[str, object]:
    """The task row's summary fields. ``rounds``: each round's attempt id and whether it has
    an edited image, in order. The thumbnail is the run's last edit with an image, and none
    when it has none: every field describes the latest run, never an earlier one."""
    with_image = [attempt_id for attempt_id, present in rounds if present]
    return {
        "latest_run_id": run_id, "outcome": outcome.value, "n_rounds": len(rounds),
        "failed_mask": failed_mask(verdicts),
        "accepted_attempt_id": rounds[-1][0] if outcome is Outcome.success and rounds else None,
        "thumb_attempt_id": with_image[-1] if with_image else None,
    }
