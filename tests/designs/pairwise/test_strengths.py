"""Bradley-Terry strengths of paired comparisons: the plain model held to a published fit,
Davidson's model with ties held to its own likelihood equations and to simulated truth."""

import numpy as np
import pytest

from app.designs.pairwise.strengths import (
    EQUAL,
    FIRST,
    NEITHER,
    SECOND,
    PairRead,
    _davidson,
    fit,
    later_preferred,
    left_preferred,
    readers_alpha,
    refit_many,
    strength_figures,
)

# Agresti (2002), Categorical Data Analysis, 2nd ed., §10.6 (from Stigler 1994): citations
# among four statistics journals; row cited by column. Self-citations are left out.
JOURNALS = ("Biometrika", "Comm Statist", "JASA", "JRSS-B")
CITED_BY = np.array([[714, 730, 498, 221],
                     [33, 425, 68, 17],
                     [320, 813, 1072, 142],
                     [284, 276, 325, 188]], dtype=float)
# The published log-abilities, Biometrika 0 (Turner & Firth 2012, JSS 48(9), the citeModel
# fit; Agresti 2002 reports the same to two decimals).
PUBLISHED = (0.0, -2.9491, -0.4796, 0.2690)


def test_the_plain_model_matches_the_published_citations_fit() -> None:
    found = fit(4, CITED_BY)
    assert found.tie is None
    assert found.log_strength == pytest.approx(PUBLISHED, abs=5e-5)
    # The weighted path (a bootstrap resample's counts) is the same likelihood.
    weighted = _davidson(4, CITED_BY, np.zeros((4, 4)), with_ties=False)
    assert weighted.log_strength == pytest.approx(PUBLISHED, abs=5e-5)
    assert found.preferred(3, 0) == pytest.approx(1 / (1 + np.exp(-0.2690)), abs=1e-4)


def davidson_counts(log_strength: np.ndarray, nu: float, per_pair: int,
                    seed: int) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    items = len(log_strength)
    wins, ties = np.zeros((items, items)), np.zeros((items, items))
    pi = np.exp(log_strength)
    for i in range(items):
        for j in range(i + 1, items):
            both = nu * np.sqrt(pi[i] * pi[j])
            total = pi[i] + pi[j] + both
            won_i, won_j, tied = rng.multinomial(per_pair, [pi[i] / total, pi[j] / total, both / total])
            wins[i, j], wins[j, i], ties[i, j] = won_i, won_j, tied
    return wins, ties


def test_davidsons_fit_solves_his_likelihood_equations() -> None:
    wins, ties = davidson_counts(np.array([0.0, 0.4, -0.3, 0.9]), 0.6, 40, seed=3)
    found = fit(4, wins, ties)
    assert found.tie is not None
    pi, nu = np.exp(found.log_strength), found.tie
    shared = nu * np.sqrt(np.outer(pi, pi))
    total = pi[:, None] + pi[None, :] + shared
    n = wins + wins.T + ties + ties.T
    np.fill_diagonal(n, 0)
    # Davidson (1970), eq. (2.3): each item's wins and half its ties are what the model expects.
    expected = np.sum(n * (pi[:, None] + shared / 2) / total, axis=1)
    observed = wins.sum(axis=1) + (ties + ties.T).sum(axis=1) / 2
    assert observed == pytest.approx(expected, rel=1e-6)
    # ... and eq. (2.4): the ties are what it expects.
    assert ties.sum() == pytest.approx(np.sum(np.triu(n * shared / total, 1)), rel=1e-6)


def test_two_items_have_davidsons_closed_form() -> None:
    """With two items the model is saturated (two parameters, three outcomes): the fitted
    chances are the observed shares, so pi_1 / pi_0 = W_1 / W_0 and nu = T / sqrt(W_0 W_1)."""
    ties = np.array([[0.0, 18.0], [0.0, 0.0]])
    found = fit(2, np.array([[0.0, 12.0], [30.0, 0.0]]), ties)  # item 1 won 30, item 0 won 12
    assert found.log_strength == pytest.approx([0.0, np.log(30 / 12)], abs=1e-6)
    assert found.tie == pytest.approx(18 / np.sqrt(12 * 30), rel=1e-6)


def test_davidsons_fit_recovers_the_strengths_it_was_drawn_from() -> None:
    truth = np.array([0.0, 0.5, -0.4, 1.0, 0.2])
    wins, ties = davidson_counts(truth, 0.8, 4000, seed=11)
    found = fit(5, wins, ties)
    assert found.log_strength == pytest.approx(truth, abs=0.05)
    assert found.tie == pytest.approx(0.8, abs=0.03)


def test_with_ties_vanishing_davidson_becomes_bradley_terry() -> None:
    rare = np.zeros((4, 4))
    rare[0, 2] = 1e-6  # a trace of a tie, so Davidson's model is fitted
    found = fit(4, CITED_BY, rare)
    assert found.tie is not None and found.tie < 1e-3
    assert found.log_strength == pytest.approx(PUBLISHED, abs=1e-3)


def simulated_reads(truth: np.ndarray, images: int, seed: int) -> list[PairRead]:
    """Reads of consecutive items' pairs, three per source image, drawn from Davidson's
    model with nu = 0.5; one in twenty finds both unacceptable; sides drawn at random."""
    rng = np.random.default_rng(seed)
    reads = []
    for image in range(images):
        for _ in range(3):
            first = int(rng.integers(0, len(truth) - 1))
            a, b = np.exp(truth[first]), np.exp(truth[first + 1])
            both = 0.5 * np.sqrt(a * b)
            choice = str(rng.choice([FIRST, SECOND, EQUAL], p=np.array([a, b, both]) / (a + b + both)))
            if rng.random() < 0.05:
                choice = NEITHER
            reads.append(PairRead(first, first + 1, choice, bool(rng.random() < 0.5), image))
    return reads


def test_strengths_have_cluster_bootstrap_intervals_and_leave_out_both_unacceptable() -> None:
    truth = np.array([0.0, 0.6, 1.0, 1.2])
    reads = simulated_reads(truth, 150, seed=1)
    found = strength_figures(4, reads, resamples=300)
    neither = sum(r.choice == NEITHER for r in reads)
    assert found.neither == neither and found.n == len(reads) - neither
    assert found.log_strength[0].value == 0.0 and found.log_strength[0].low is None
    for figure, true in zip(found.log_strength[1:], truth[1:], strict=True):
        assert figure.low is not None and figure.high is not None
        assert figure.low < true < figure.high and figure.clusters == 150
    assert found.tie is not None and found.tie.low is not None and found.tie.low < 0.5 < (found.tie.high or 0)
    # The values are the fit of every read with a preference or a tie.
    kept = [r for r in reads if r.choice != NEITHER]
    wins, ties = np.zeros((4, 4)), np.zeros((4, 4))
    for r in kept:
        if r.choice == EQUAL:
            ties[r.first, r.second] += 1
        else:
            winner, loser = (r.first, r.second) if r.choice == FIRST else (r.second, r.first)
            wins[winner, loser] += 1
    assert [f.value for f in found.log_strength] == pytest.approx(list(fit(4, wins, ties).log_strength))


def test_an_item_never_preferred_has_no_strength() -> None:
    reads = [PairRead(0, 1, SECOND, True, i) for i in range(10)]  # item 0 never preferred
    found = strength_figures(2, reads, resamples=100)
    assert [f.value for f in found.log_strength] == [None, None]


def test_every_read_preferring_the_later_round_says_so() -> None:
    """Rounds 1-3, every read preferring the later one: the strengths said only "the fit runs
    off to infinity: too few reads"."""
    reads = [PairRead(k, k + 1, SECOND, i % 2 == 0, i) for i in range(12) for k in (0, 1)]
    found = strength_figures(3, reads, resamples=100, order=("earlier", "later"))
    assert [f.value for f in found.log_strength] == [None, None, None]
    assert all(f.warning == "no read preferred the earlier edit of its pair: every read "
                            "preferred the later, so the strengths have no finite estimate"
               for f in found.log_strength)


def test_the_later_round_and_the_left_side_as_shares_with_intervals() -> None:
    reads = simulated_reads(np.array([0.0, 0.6, 1.0, 1.2]), 120, seed=5)
    preferring = [r for r in reads if r.choice in (FIRST, SECOND)]
    later = later_preferred(reads, resamples=300)
    assert later.value == pytest.approx(sum(r.choice == SECOND for r in preferring) / len(preferring))
    assert later.n == len(preferring) and 0 <= (later.low or -1) < later.value < (later.high or 2) <= 1
    left = left_preferred(reads, resamples=300)
    on_left = sum((r.choice == FIRST) == r.first_left for r in preferring)
    assert left.value == pytest.approx(on_left / len(preferring))
    assert left.low is not None and left.low < 0.5 < (left.high or 0)  # sides were drawn at random


def test_a_fit_running_off_to_infinity_reports_no_strength() -> None:
    # Item 1 is preferred in every read that prefers one, and tied in the rest: the
    # likelihood climbs without end (its strength and the tie propensity together), so a
    # handful of reads cannot say how far, and no number is the honest answer.
    reads = [PairRead(1, 0, FIRST, True, 1), PairRead(1, 2, FIRST, False, 2),
             PairRead(1, 2, FIRST, True, 3), PairRead(0, 1, EQUAL, True, 4),
             PairRead(0, 1, EQUAL, False, 5), PairRead(1, 2, EQUAL, True, 6)]
    found = strength_figures(3, reads, resamples=100)
    assert [f.value for f in found.log_strength] == [None, None, None]
    assert "infinity" in (found.log_strength[1].warning or "")


@pytest.mark.parametrize("with_ties", [True, False])
def test_the_batched_refit_finds_the_same_fits_as_one_at_a_time(with_ties: bool) -> None:
    rng = np.random.default_rng(4)
    truth = np.array([0.0, 0.5, -0.2, 0.9])
    tables = [davidson_counts(truth, 0.6 if with_ties else 0.0, 30, seed=int(s))
              for s in rng.integers(0, 10_000, 12)]
    wins = np.stack([w for w, _ in tables])
    ties = np.stack([t for _, t in tables])
    start = _davidson(4, wins.sum(axis=0), ties.sum(axis=0), with_ties=with_ties)
    theta, nu = refit_many(4, wins, ties, with_ties, start)
    for k, (w, t) in enumerate(tables):
        one = _davidson(4, w, t, with_ties=with_ties)
        assert theta[k] == pytest.approx(one.log_strength, abs=1e-5)
        if with_ties:
            assert nu[k] == pytest.approx(one.tie, rel=1e-5)


def test_readers_alpha_is_krippendorffs_over_the_four_answers() -> None:
    import krippendorff

    rng = np.random.default_rng(9)
    answers = [FIRST, SECOND, EQUAL, NEITHER]
    units = []
    for image in range(60):
        truth = answers[int(rng.integers(0, 4))]
        units.append((image, [truth if rng.random() < 0.7 else answers[int(rng.integers(0, 4))]
                              for _ in range(2 + image % 2)]))
    found = readers_alpha(units, resamples=300)
    matrix = np.full((3, len(units)), np.nan)
    for column, (_, said) in enumerate(units):
        for row, choice in enumerate(said):
            matrix[row, column] = answers.index(choice)
    assert found.value == pytest.approx(krippendorff.alpha(reliability_data=matrix,
                                                           level_of_measurement="nominal"))
    assert found.n == 60 and found.low is not None and found.low < found.value < (found.high or 0)
    assert readers_alpha([(1, [FIRST])]).value is None  # nobody read it twice
