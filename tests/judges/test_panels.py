"""Panels: majority with ties as no answer, and stacking that never scores an edit with a model
fitted on its own label (cross-fitting by source image)."""

import random

from app.judges.panels import majority, share_passing, stacked


def test_majority_and_its_score() -> None:
    members = [[True, True, False, None], [True, False, False, None], [False, None, False, True]]
    assert majority(members) == [True, None, False, True]
    assert share_passing(members) == [2 / 3, 0.5, 0.0, 1.0]


def _world(n: int = 200) -> tuple[list[list[bool | None]], list[bool | None], list[int]]:
    rng = random.Random(4)
    truth: list[bool | None] = [rng.random() < 0.5 for _ in range(n)]
    good = [t if rng.random() < 0.9 else not t for t in truth]
    noise = [rng.random() < 0.5 for _ in range(n)]
    contrary = [not t if rng.random() < 0.8 else t for t in truth]
    return [good, noise, contrary], truth, [i // 2 for i in range(n)]


def test_stacking_learns_whom_to_trust() -> None:
    members, truth, clusters = _world()
    votes, scores = stacked(members, truth, clusters)
    right = sum(v == t for v, t in zip(votes, truth, strict=True)) / len(truth)
    alone = sum(v == t for v, t in zip(members[0], truth, strict=True)) / len(truth)
    assert right >= alone - 0.02 and right > 0.85  # it leans on the good member, flips the contrary
    assert all(s is not None and 0 < s < 1 for s in scores)


def test_an_edit_is_never_scored_by_a_model_that_saw_its_label() -> None:
    members, truth, clusters = _world()
    _, before = stacked(members, truth, clusters)
    flipped = list(truth)
    flipped[17] = not flipped[17]  # edit 17's own label, and its neighbour's image-mate 16
    _, after = stacked(members, flipped, clusters)
    assert after[17] == before[17] and after[16] == before[16]
    assert after != before  # the other folds' models did see it


def test_unsettled_edits_get_an_answer_and_one_image_gets_none() -> None:
    members, truth, clusters = _world()
    truth[3] = None
    votes, scores = stacked(members, truth, clusters)
    assert votes[3] is not None and scores[3] is not None
    assert stacked([[True, False]], [True, False], [1, 1]) == ([None, None], [None, None])


def test_an_edit_no_member_answered_is_left_unanswered_by_the_stacked_panel() -> None:
    # The stacked panel answered it from its intercept alone: n = 200 where every member had 199.
    members, truth, clusters = _world()
    for member in members:
        member[11] = None
    votes, scores = stacked(members, truth, clusters)
    assert votes[11] is None and scores[11] is None
    assert majority(members)[11] is None
    assert sum(v is not None for v in votes) == len(truth) - 1
