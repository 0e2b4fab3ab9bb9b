"""The edit-level adaptive sampler: a known probability for every edit, a floor that bounds
every weight, more draws where the readers' answer is least predictable, and batches that
replay exactly."""

import numpy as np
import pytest

from app.designs.adaptive.edits import (
    MIN_EACH,
    MIN_FIT,
    EditFeatures,
    Evidence,
    draw_edits,
    edit_probabilities,
    predicted_overturn,
    steered_probabilities,
)
from app.designs.adaptive.prior import UNIFORM_SHARE, Pool, PoolEdit, PoolImage


def pool(images: int = 120, edits: int = 3) -> Pool:
    """Images of chest X-ray and fundus, each edit a disease of its own modality; scores far
    from the judge's threshold except on every fifth edit."""
    found = []
    for i in range(images):
        stratum = "chest_xray" if i % 2 else "fundus"
        found.append(PoolImage(i, stratum, tuple(
            PoolEdit(i * 10 + k, i * 10 + k, f"{stratum}-{k}", 1 + k, k == edits - 1,
                     0.7 if (i * edits + k) % 5 == 0 else 0.95) for k in range(edits))))
    return Pool(found)


def test_probabilities_sum_to_one_and_bound_every_weight() -> None:
    features = EditFeatures.of(pool())
    q = edit_probabilities(features, np.zeros(0, np.int64), np.zeros(0))
    n = len(q)
    assert q.sum() == pytest.approx(1.0)
    assert q.min() >= UNIFORM_SHARE / n - 1e-15
    assert ((1 / n) / q).max() <= 1 / UNIFORM_SHARE + 1e-9  # no weight past 1 / f


def test_before_enough_reads_a_score_near_the_threshold_draws_more() -> None:
    features = EditFeatures.of(pool())
    where = np.arange(MIN_FIT - 1)
    d = predicted_overturn(features, where, (where % 2).astype(float))
    np.testing.assert_array_equal(d, features.prior)  # too few reads to fit
    q = edit_probabilities(features, np.zeros(0, np.int64), np.zeros(0))
    assert q[0] > q[1]  # edit 0 sits at the threshold, edit 1 far from it


def test_the_edits_whose_answers_the_reads_show_least_predictable_draw_more() -> None:
    """Readers overturn the judge on half of one disease's edits and on none of another's:
    after the fit, the first disease's edits get the larger share."""
    found = pool(200)
    features = EditFeatures.of(found)
    disease = np.array([e.disease for p in found.images for e in p.edits])
    risky = np.nonzero(disease == "chest_xray-0")[0]
    safe = np.nonzero(disease == "fundus-1")[0]
    where = np.concatenate([risky[:40], safe[:40]])
    flipped = np.concatenate([np.arange(40) % 2, np.zeros(40)]).astype(float)
    d = predicted_overturn(features, where, flipped)
    assert d[risky].mean() > 0.3 > 0.1 > d[safe].mean()
    q = edit_probabilities(features, where, flipped)
    assert q[risky].mean() > 1.3 * q[safe].mean()  # half of q is the uniform floor


def test_a_batch_replays_from_its_probabilities_seed_and_number() -> None:
    q = edit_probabilities(EditFeatures.of(pool()), np.zeros(0, np.int64), np.zeros(0))
    assert draw_edits(q, 20, seed=7, batch=3) == draw_edits(q, 20, seed=7, batch=3)
    assert draw_edits(q, 20, seed=7, batch=3) != draw_edits(q, 20, seed=7, batch=4)


def test_weighted_draws_are_unbiased_for_the_pools_share() -> None:
    """The Hansen-Hurwitz ratio of the draws at the adaptive q, averaged over many batches,
    is the pool's share: the targeting moves where the draws go, not what they estimate."""
    found = pool(150)
    features = EditFeatures.of(found)
    rng = np.random.default_rng(3)
    agree = (rng.random(len(found.edit_image)) > features.prior).astype(float)
    where = np.arange(60)
    q = edit_probabilities(features, where, 1 - agree[where])
    weight = (1 / len(q)) / q
    estimates = []
    for batch in range(400):
        chosen = np.array(draw_edits(q, 50, seed=11, batch=batch))
        estimates.append((agree[chosen] * weight[chosen]).sum() / weight[chosen].sum())
    assert np.mean(estimates) == pytest.approx(agree.mean(), abs=0.01)


def test_the_preservation_metrics_inform_the_prediction() -> None:
    """Readers overturn the judge on the edits that changed most of the image: after the fit,
    an unread edit that changed much is predicted likelier to be overturned than one that
    changed little, though they share every other feature."""
    rng = np.random.default_rng(8)
    changed = rng.uniform(0, 0.6, 400)
    found = Pool([PoolImage(i, "chest_xray" if i % 2 else "fundus", (
        PoolEdit(i, i, "nodule", 1, True, 0.95, float(changed[i]), 0.9),)) for i in range(400)])
    features = EditFeatures.of(found)
    where = np.arange(200)
    flipped = (changed[where] > 0.3).astype(float)
    d = predicted_overturn(features, where, flipped)
    unread_much = np.nonzero(changed[200:] > 0.5)[0] + 200
    unread_little = np.nonzero(changed[200:] < 0.1)[0] + 200
    assert d[unread_much].mean() > 0.5 > 0.2 > d[unread_little].mean()


def test_an_unmeasured_edit_is_not_taken_for_a_typical_one() -> None:
    from app.designs.adaptive.edits import measured_column

    column, known = measured_column([0.2, None, 0.4])
    np.testing.assert_allclose(column, [0.2, 0.3, 0.4])
    np.testing.assert_array_equal(known, [1.0, 0.0, 1.0])


def _evidence(p: Pool, flipped_of, count: int, seed: int = 3) -> Evidence:
    """``count`` read edits drawn uniformly, each overturned by ``flipped_of(position)``."""
    rng = np.random.default_rng(seed)
    where = np.unique(rng.integers(0, len(p.edit_image), count))
    flipped = np.array([float(flipped_of(int(e), rng)) for e in where])
    return Evidence(where, flipped, np.ones(len(where)))


def test_the_draws_stay_uniform_until_the_evidence_rule_allows_them_to_move() -> None:
    """Overturns that the score predicts perfectly: the model may not steer before MIN_EACH
    read edits of each outcome, and steers once it has them."""
    p = pool(400)
    features = EditFeatures.of(p)
    near = p.score_weight > 1.5  # the edits whose score lies at the threshold

    def overturned(e: int, rng: np.random.Generator) -> bool:
        return bool(rng.random() < (0.7 if near[e] else 0.02))

    scarce = _evidence(p, overturned, 60)
    assert int(scarce.flipped.sum()) < MIN_EACH  # the rule's floor is what is tested
    steer = steered_probabilities(features, scarce, target=0.05)
    assert steer.share == 0 and np.allclose(steer.q, 1 / len(steer.q))
    assert f"fewer than {MIN_EACH}" in steer.reason
    plenty = _evidence(p, overturned, 700)
    steer = steered_probabilities(features, plenty, target=0.05)
    assert steer.share > 0 and steer.q[near].mean() > steer.q[~near].mean()
    assert steer.q.sum() == pytest.approx(1.0) and "targeting" in steer.reason
    # Every weight within the bound its share sets.
    assert ((1 / len(steer.q)) / steer.q).max() <= 1 / (1 - steer.share) + 1e-9


def test_overturns_the_features_do_not_predict_leave_the_draws_uniform() -> None:
    """Plenty of evidence, but overturns at random: nothing to gain, so no weight moves."""
    p = pool(400)
    steer = steered_probabilities(EditFeatures.of(p),
                                  _evidence(p, lambda e, rng: rng.random() < 0.2, 900), target=0.05)
    assert steer.share == 0 and np.allclose(steer.q, 1 / len(steer.q))
