"""The alternative annotator test held to the paper's published results (Calderon, Reichart &
Dror, ACL 2025; their repository's alt_test_example notebook): on MT-Bench, three human
annotators, accuracy alignment, epsilon 0.2, Gemini Flash has winning rate 0.00 and advantage
probability 0.72, Gemini Pro 0.00 and 0.76. The annotations are the paper's
(data/mtbench), as tests/agreement/data/alternative_annotator_mtbench.csv."""

import csv
from pathlib import Path

import numpy as np
import pytest

from app.agreement.alternative_annotator import NO, TOO_FEW, YES, alt_test

DATA = Path(__file__).parent / "data" / "alternative_annotator_mtbench.csv"


def annotations() -> dict[str, dict[str, str]]:
    found: dict[str, dict[str, str]] = {}
    with DATA.open() as f:
        for row in csv.DictReader(f):
            found.setdefault(row["annotator"], {})[row["instance"]] = row["label"]
    return found


@pytest.mark.parametrize(("llm", "advantage"), [("gemini_flash", "0.72"), ("gemini_pro", "0.76")])
def test_published_mtbench_results(llm: str, advantage: str) -> None:
    every = annotations()
    humans = {k: v for k, v in every.items() if not k.startswith("gemini")}
    found = alt_test(humans, every[llm], epsilon=0.2)
    assert found.winning_rate == 0.0
    assert found.advantage is not None and f"{found.advantage:.2f}" == advantage
    assert [r.cases for r in found.rows] == [74, 84, 88]
    assert found.conclusion == NO


def consensus_study(readers: int, cases: int, noise: float, seed: int = 1
                    ) -> tuple[dict[str, dict[int, bool]], dict[int, bool]]:
    rng = np.random.default_rng(seed)
    truth = rng.random(cases) < 0.5
    humans = {f"r{j}": {i: bool(t) ^ bool(rng.random() < noise) for i, t in enumerate(truth)}
              for j in range(readers)}
    return humans, {i: bool(t) for i, t in enumerate(truth)}


def test_a_judge_that_is_the_truth_replaces_noisy_readers() -> None:
    humans, judge = consensus_study(4, 100, 0.25)
    found = alt_test(humans, judge, epsilon=0.1)
    assert found.winning_rate == 1.0 and found.conclusion == YES
    assert found.advantage is not None and found.advantage > 0.8


def test_a_judge_that_guesses_does_not() -> None:
    humans, _ = consensus_study(4, 100, 0.05)
    rng = np.random.default_rng(9)
    guesses = {i: bool(rng.random() < 0.5) for i in range(100)}
    found = alt_test(humans, guesses, epsilon=0.1)
    assert found.winning_rate == 0.0 and found.conclusion == NO


def test_two_readers_are_too_few_and_a_short_reader_is_left_out() -> None:
    humans, judge = consensus_study(2, 100, 0.1)
    assert alt_test(humans, judge).conclusion == TOO_FEW
    humans, judge = consensus_study(3, 100, 0.1)
    humans["r2"] = {i: a for i, a in humans["r2"].items() if i < 20}
    found = alt_test(humans, judge)
    assert found.skipped == {"r2": 20}
    assert found.conclusion == TOO_FEW and "3 or more" in found.why


def test_epsilon_outside_a_share_is_refused() -> None:
    with pytest.raises(ValueError, match="epsilon"):
        alt_test({}, {}, epsilon=1.5)
