"""The adaptive sampler: a known probability for every image, a floor, Neyman allocation, more
weight where the judge is least certain, and batches that replay exactly."""

import numpy as np
import pytest

from app.designs.adaptive.prior import (
    UNIFORM_SHARE,
    Observed,
    PoolEdit,
    PoolImage,
    State,
    check_pool,
    draw,
    probabilities,
)


def image(i: int, stratum: str, diseases: tuple[str, ...] = ("nodule",), score: float | None = None,
          round_: int = 1) -> PoolImage:
    return PoolImage(i, stratum, tuple(PoolEdit(i * 10 + k, i * 10 + k, d, round_, True, score)
                                       for k, d in enumerate(diseases)))


def pool(n: int = 60) -> list[PoolImage]:
    return [image(i, "chest_xray" if i % 2 else "fundus", ("nodule",) if i % 3 else ("edema",))
            for i in range(n)]


def test_probabilities_sum_to_one_and_never_fall_below_the_floor() -> None:
    found = probabilities(pool(), [])
    assert found.sum() == pytest.approx(1.0)
    assert found.min() >= UNIFORM_SHARE / 60 - 1e-12


def test_a_score_near_the_threshold_draws_more_before_any_read() -> None:
    images = [image(0, "a", score=0.7), image(1, "a", score=0.99), image(2, "b"), image(3, "b")]
    q = probabilities(images, [])
    assert q[0] > q[1]


def test_the_cells_where_readers_overturn_the_judge_draw_more() -> None:
    images = pool()
    edema = [p for p in images if p.edits[0].disease == "edema"][:10]
    nodule = [p for p in images if p.edits[0].disease == "nodule"][:10]
    observed = [Observed(p.image, (True,)) for p in edema[:5]] + [
        Observed(p.image, (False,)) for p in edema[5:]] + [Observed(p.image, (False,)) for p in nodule]
    q = probabilities(images, observed)
    at = {p.image: i for i, p in enumerate(images)}
    assert q[at[edema[0].image]] > q[at[nodule[0].image]]


def test_neyman_gives_more_to_the_stratum_whose_residuals_spread_more() -> None:
    images = pool(200)
    chest = [p for p in images if p.stratum == "chest_xray"]
    fundus = [p for p in images if p.stratum == "fundus"]
    # The same diseases in both strata, but chest X-ray agreement swings from image to image.
    observed = [Observed(p.image, (i % 2 == 0,)) for i, p in enumerate(chest[:20])] + [
        Observed(p.image, (False,)) for p in fundus[:20]]
    q = probabilities(images, observed)
    share = sum(q[i] for i, p in enumerate(images) if p.stratum == "chest_xray")
    assert share > 0.55


def test_a_batch_replays_exactly_from_its_state() -> None:
    images = pool()
    state = State(batch=3, size=12, seed=42, uniform_share=UNIFORM_SHARE,
                  observed=[{"image": 1, "overturned": [True]}, {"image": 2, "overturned": [None]}])
    first, q = draw(images, state)
    again, q_again = draw(images, State.of(state.as_dict()))
    assert first == again and np.array_equal(q, q_again) and len(first) == 12
    assert draw(images, State(4, 12, 42, UNIFORM_SHARE, state.observed))[0] != first


@pytest.mark.parametrize(("images", "words"), [
    ([image(i, "chest_xray") for i in range(40)], "at least 2 strata"),
    ([image(i, "ab"[i % 2]) for i in range(10)], "at least 20 source images"),
])
def test_a_pool_it_cannot_draw_from_is_named(images: list[PoolImage], words: str) -> None:
    assert words in (check_pool(images) or "")
