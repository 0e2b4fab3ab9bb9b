"""Watching a running study: which images count and when, the anytime-valid figures, targets,
and the projection of reads still needed."""

from dataclasses import replace
from datetime import UTC, datetime, timedelta

import numpy as np
import pytest

from app.agreement.monitoring import (
    MIN_IMAGES_TO_PROJECT,
    PATH_POINTS,
    Draw,
    _first_times,
    _path,
    watch,
)
from app.agreement.reads import Case, Read, StudyReads
from app.confidence_sequence import mean_sequence, ratio_sequence
from app.image_order import image_rank
from pipeline.vocabulary import DIMENSIONS

START = datetime(2026, 1, 1, tzinfo=UTC)


def case(item: int, image: int, judge: bool | None, readers: tuple[str, ...] = ("a", "b")) -> Case:
    return Case(item_id=item, uid=f"u{item}", task_id=item, task_key=f"t{item}", source_image_id=image,
                modality="chest_xray", disease="nodule", direction="add", round=1,
                judge={} if judge is None else {"overall": judge}, assigned=readers)


def read(item: int, reader: str, accept: bool, minute: int) -> Read:
    answers = {q: "yes" if accept else "no" for q in DIMENSIONS}
    return Read(item_id=item, reader=reader,
                answers=answers | {"overall": "accept" if accept else "reject"},
                repeat=False, time_on_case_ms=1000, version=1,
                answered_at=START + timedelta(minutes=int(minute)))


def study(judges: list[bool], references: list[bool], *, unread: set[int] = frozenset(),
          order: list[int] | None = None) -> StudyReads:
    """One case per image; both readers give the reference; image i is completed at minute
    order[i] (default i)."""
    cases = [case(i, i, j) for i, j in enumerate(judges)]
    minutes = order or list(range(len(judges)))
    reads = [read(i, name, ref, minutes[i]) for i, ref in enumerate(references)
             for name in ("a", "b") if not (i in unread and name == "b")]
    return StudyReads(cases=cases, reads=reads, readers=["a", "b"])


def test_an_image_counts_once_every_read_assigned_on_it_is_in():
    data = study([True, True, False], [True, False, False], unread={1})
    # a secret that puts image 1 last in the fixed order: nothing waits behind it
    secret = next(s for s in map(str, range(100))
                  if max(range(3), key=lambda i: image_rank(s, i)) == 1)
    result = watch(data, "overall", {}, secret=secret)
    agreement = result.endpoints[0]
    assert (agreement.cases, agreement.images) == (2, 2)  # image 1 waits for reader b
    assert agreement.estimate == 1.0 and result.images_waiting == 0


def test_the_interval_is_the_confidence_sequence_of_the_images_in_the_studys_fixed_order():
    rng = np.random.default_rng(5)
    judges = [bool(j) for j in rng.random(80) < 0.8]
    references = [j if rng.random() < 0.85 else not j for j in judges]
    order = list(rng.permutation(80))
    result = watch(study(judges, references, order=order), "overall", {}, secret="s3cret")
    hits = np.array([j == r for j, r in zip(judges, references, strict=True)], dtype=float)
    fixed = sorted(range(80), key=lambda image: image_rank("s3cret", image))
    sequence = mean_sequence(hits[fixed], planned=80)
    agreement = result.endpoints[0]
    assert (agreement.low, agreement.high) == (sequence.low[-1], sequence.high[-1])
    assert agreement.estimate == hits.mean() and agreement.cases == 80
    assert result.agreement["overall"] is agreement
    assert result.agreement["compliance"].cases == 0  # the judge answered only "overall"
    strict = next(e for e in result.endpoints if e.endpoint == "too_strict")
    assert strict.estimate == np.mean([r and not j for j, r in zip(judges, references, strict=True)])
    # The path the page draws: after each image, the cases so far and the half-width.
    assert agreement.path == tuple((k + 1, float(w)) for k, w in enumerate(sequence.half_width))
    assert "path" not in agreement.as_dict()  # drawn, not reported


def test_a_long_path_is_thinned_to_its_limit_and_keeps_its_last_point():
    sizes = np.array([0, 0] + [2] * 999, dtype=float)
    widths = np.linspace(0.5, 0.1, len(sizes))
    path = _path(sizes, widths)
    assert len(path) == PATH_POINTS
    assert path[0] == (2, widths[2]) and path[-1] == (1998, widths[-1])
    assert [n for n, _ in path] == sorted(n for n, _ in path)


def test_a_unit_drawn_again_adds_no_case_to_the_path():
    assert list(_first_times(np.array([3, 1, 3, 0]), np.array([5.0, 2.0, 0.0, 4.0]))) == [4.0, 2.0, 0.0, 5.0]


def test_a_study_with_a_target_tunes_its_bets_to_the_cases_the_target_needs():
    """Tuned to the study's size, a study that may stop at its target reaches it later: the
    bets are tuned to the cases the target is expected to need instead (here 40 of 80,
    images of one case each), and the interval is that sequence's."""
    rng = np.random.default_rng(5)
    judges = [bool(j) for j in rng.random(80) < 0.8]
    references = [j if rng.random() < 0.85 else not j for j in judges]
    result = watch(study(judges, references), "overall", {"agreement": 0.2}, secret="s",
                   tuned_to=40)
    hits = np.array([j == r for j, r in zip(judges, references, strict=True)], dtype=float)
    fixed = sorted(range(80), key=lambda image: image_rank("s", image))
    tuned = mean_sequence(hits[fixed], planned=40)
    agreement = result.endpoints[0]
    assert (agreement.low, agreement.high) == (tuned.low[-1], tuned.high[-1])
    untuned = watch(study(judges, references), "overall", {"agreement": 0.2}, secret="s")
    assert untuned.endpoints[0].high - untuned.endpoints[0].low != agreement.high - agreement.low


def test_the_order_images_were_completed_in_changes_nothing():
    # Small images complete first; where the share depends on an image's size, a sequence
    # in completion order carried an early miss to the end (coverage 0.53).
    rng = np.random.default_rng(6)
    judges = [bool(j) for j in rng.random(120) < 0.8]
    references = [j if rng.random() < 0.8 else not j for j in judges]
    first = watch(study(judges, references, order=list(range(120))), "overall", {}, secret="k")
    other = watch(study(judges, references, order=list(rng.permutation(120))), "overall", {},
                  secret="k")
    assert [(e.low, e.high) for e in first.endpoints] == [(e.low, e.high) for e in other.endpoints]


def test_a_complete_image_waits_behind_an_earlier_one_of_the_fixed_order():
    judges = [True] * 6
    fixed = sorted(range(6), key=lambda image: image_rank("w", image))
    data = study(judges, judges, unread={fixed[2]})
    result = watch(data, "overall", {}, secret="w")
    assert result.images_complete == 5 and result.images_waiting == 3
    assert result.endpoints[0].images == result.images_entered == 2
    assert result.endpoints[0].cases == 2


def test_images_of_several_cases_are_one_unit_scaled_by_the_largest_image():
    cases = [case(0, 0, True), case(1, 0, False), case(2, 1, True)]
    reads = [read(i, n, True, i) for i in range(3) for n in ("a", "b")]
    agreement = watch(StudyReads(cases, reads, ["a", "b"]), "overall", {}).endpoints[0]
    sequence = ratio_sequence(np.array([1, 1]) / 2, np.array([2, 1]) / 2, planned=2)
    assert (agreement.low, agreement.high, agreement.images) == (sequence.low[-1], sequence.high[-1], 2)


def test_a_tie_is_left_out_and_an_unjudged_case_too():
    cases = [case(0, 0, True), case(1, 1, None), case(2, 2, True)]
    reads = [read(0, "a", True, 0), read(0, "b", False, 0), read(1, "a", True, 1),
             read(1, "b", True, 1), read(2, "a", True, 2), read(2, "b", True, 2)]
    agreement = watch(StudyReads(cases, reads, ["a", "b"]), "overall", {}).endpoints[0]
    assert agreement.cases == 1 and agreement.images == 1


def test_a_met_target_says_when_and_the_study_may_stop():
    judges = [True] * 300
    result = watch(study(judges, judges), "overall", {"agreement": 0.05})
    agreement = result.endpoints[0]
    assert agreement.met and agreement.half_width is not None and agreement.half_width <= 0.05
    assert agreement.met_after_images is not None and agreement.met_after_images < 300
    fixed = sorted(range(300), key=lambda image: image_rank("", image))
    # entered once it and every image before it in the fixed order were complete
    assert agreement.met_at == START + timedelta(minutes=max(fixed[:agreement.met_after_images]))
    assert result.precise_enough


def test_an_unmet_target_is_projected_only_after_enough_images():
    rng = np.random.default_rng(9)
    judges = list(rng.random(400) < 0.8)
    references = [j if rng.random() < 0.8 else not j for j in judges]
    few = watch(study(judges, references, unread=set(range(MIN_IMAGES_TO_PROJECT - 1, 400))),
                "overall", {"agreement": 0.08})
    assert few.endpoints[0].images_needed is None and few.endpoints[0].final_half_width is None
    # the first 60 images of the study's fixed order are read (readers go through it by blocks)
    later = set(sorted(range(400), key=lambda image: image_rank("", image))[60:])
    some = watch(study(judges, references, unread=later), "overall", {"agreement": 0.08})
    agreement = some.endpoints[0]
    assert not agreement.met and not some.precise_enough
    assert agreement.images_needed is not None and 0 < agreement.images_needed <= 340
    assert agreement.reads_needed == agreement.images_needed * 2  # two readers per image
    out_of_reach = watch(study(judges, references, unread=later), "overall",
                         {"agreement": 0.01}).endpoints[0]
    assert out_of_reach.images_needed is None
    assert out_of_reach.final_half_width is not None and out_of_reach.final_half_width > 0.01


def test_reads_done_and_planned_count_first_reads():
    result = watch(study([True] * 4, [True] * 4, unread={2, 3}), "overall", {})
    assert (result.reads_done, result.reads_planned) == (6, 8)
    assert (result.images_complete, result.images_total) == (2, 4)
    assert not result.precise_enough  # no target: nothing to be precise enough for


def test_the_outcome_says_when_and_why_the_study_stopped():
    from app.agreement.stopping import stopping_outcome, stopping_rule

    done = watch(study([True] * 300, [True] * 300), "overall", {"agreement": 0.05})
    when = datetime(2026, 3, 4, tzinfo=UTC)
    assert "agreement of the judge with the readers ± 0.05; overall" in stopping_rule(done)
    # the study ran to its planned reads: that is why it stopped, whenever the target was met
    met = done.endpoints[0]
    assert met.met_after_images is not None and met.met_after_images < 300
    assert met.met_after_reads is not None and met.met_after_reads < 600
    assert stopping_outcome(done, locked=True, locked_at=when) == (
        "Stopped on 2026-03-04 when every planned read was done (600 of 600 planned reads); "
        "every target had been met before: agreement of the judge with the readers after "
        f"{met.met_after_images} fully read images, {met.met_after_reads} reads in.")
    assert stopping_outcome(done, locked=False, locked_at=None) == (
        "Every planned read is in (600 of 600 planned reads); the study is still open: lock it "
        "to fix its figures.")
    last = set(sorted(range(300), key=lambda image: image_rank("", image))[250:])
    early = watch(study([True] * 300, [True] * 300, unread=last), "overall",
                  {"agreement": 0.05})
    assert stopping_outcome(early, locked=True, locked_at=when).startswith(
        "Stopped on 2026-03-04 after 550 of 600 planned reads because every target was met: "
        "agreement of the judge with the readers after ")
    short = watch(study([True, False] * 20, [True] * 40), "overall", {"agreement": 0.05})
    assert stopping_outcome(short, locked=True, locked_at=when) == (
        "Stopped on 2026-03-04 when every planned read was done (80 of 80 planned reads); "
        "not met: agreement of the judge with the readers.")
    untargeted = watch(study([True] * 4, [True] * 4, unread={3}), "overall", {})
    assert stopping_rule(untargeted).startswith("No stopping rule was set")
    assert stopping_outcome(untargeted, locked=True, locked_at=None) == (
        "Locked by the study's administrator after 7 of 8 planned reads, before every planned "
        "read was done.")


def test_a_study_weighted_to_its_pool_takes_each_case_as_a_unit_at_its_strata_weight():
    """The default validation study: each case its own unit in the study's fixed order of
    cases, scaled by its stratum's weight over the largest, so the figure is the pool's share
    (two cases of one image are two units, not one scaled by the largest image)."""
    rng = np.random.default_rng(9)
    judges = [bool(j) for j in rng.random(60) < 0.7]
    references = [j if rng.random() < 0.8 else not j for j in judges]
    cases = [replace(case(i, i // 2, j), stratum="pass" if j else "fail")
             for i, j in enumerate(judges)]
    reads = [read(i, n, r, i) for i, r in enumerate(references) for n in ("a", "b")]
    weights = {"pass": 0.6, "fail": 1.5}
    result = watch(StudyReads(cases, reads, ["a", "b"]), "overall", {}, secret="s",
                   weights=weights)
    order = sorted(range(60), key=lambda item: image_rank("s", item))
    hits = np.array([judges[i] == references[i] for i in order], dtype=float)
    scale = np.array([weights["pass" if judges[i] else "fail"] for i in order]) / 1.5
    sequence = ratio_sequence(hits * scale, scale, planned=60)
    agreement = result.endpoints[0]
    assert (agreement.low, agreement.high) == (sequence.low[-1], sequence.high[-1])
    assert agreement.estimate == pytest.approx((hits * scale).sum() / scale.sum())
    assert (agreement.cases, agreement.images, result.unit) == (60, 30, "case")
    assert result.as_dict()["weighted_to_pool"] is True


def test_an_adaptive_studys_draws_enter_batch_by_batch_with_their_batches_bounds():
    """Two batches of edit draws, the second with weights up to 2 (its bound): the sequence is
    the weighted draws in draw order, each scaled by its batch's bound, and the bets are
    told the bounds (app/confidence_sequence.py)."""
    judges = [True, True, False, True, True, False, True, True]
    references = [True, False, False, True, True, True, True, True]
    cases = [case(i, i, j) for i, j in enumerate(judges)]
    reads = [read(i, n, r, i) for i, r in enumerate(references) for n in ("a", "b")]
    weights = [1.0] * 4 + [0.5, 2.0, 1.5, 0.5]
    draws = [Draw(i // 4, i % 4, i, w, 1.0 if i < 4 else 2.0) for i, w in enumerate(weights)]
    result = watch(StudyReads(cases, reads, ["a", "b"]), "overall", {}, draws=draws, budget=8,
                   by_item=True)
    hits = np.array([j == r for j, r in zip(judges, references, strict=True)], dtype=float)
    bounds = np.array([d.bound for d in draws])
    scale = np.array(weights) / bounds
    sequence = ratio_sequence(hits * scale, scale, planned=8, bounds=bounds)
    agreement = result.endpoints[0]
    assert (agreement.low, agreement.high) == (sequence.low[-1], sequence.high[-1])
    assert agreement.estimate == pytest.approx((hits * weights).sum() / sum(weights))
