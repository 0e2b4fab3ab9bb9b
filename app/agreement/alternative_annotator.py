"""The alternative annotator test (Calderon, Reichart & Dror, "The Alternative Annotator Test
for LLM-as-a-Judge", ACL 2025): can the judge stand in for one of the readers?

Each reader in turn is left out. On every case that reader and at least one other read, the
judge's alignment with the remaining readers (the share of them it agrees with) is set
against the left-out reader's. The judge wins the case when its alignment is at least the
reader's, the reader when theirs is at least the judge's (a tie counts for both). A one-sided
t test asks whether the reader wins more often than the judge by less than epsilon, the
admin's price of a reader over the judge (0.1 by default here; the paper suggests 0.2 for
experts, 0.15 skilled, 0.1 crowd workers). The Benjamini-Yekutieli procedure over readers
holds the false discovery rate at q. The winning rate is the share of readers whose test
rejects; the judge passes at 0.5 or more. The advantage probability is the mean share of
cases the judge wins: the figure to rank judges by.

The paper asks for 30 cases or more per reader (fewer: the t test's normality is not
safe, and the reader is left out of the test, as the reference code does) and three readers
or more: with two, each is compared with the other alone, with no consensus to represent.
"""

from collections.abc import Hashable, Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from scipy import stats
from statsmodels.stats.multitest import multipletests

from app.errors import Invalid

EPSILON = 0.1
Q = 0.05
MIN_CASES = 30  # per reader: the paper's floor for the t test
MIN_READERS = 3  # the paper's recommendation
# Never a bare "too few readers" after "can the judge stand in?": it read as a yes.
YES, NO, TOO_FEW = "yes", "no", "not tested: too few readers"


@dataclass(frozen=True)
class LeftOut:
    reader: str
    cases: int
    judge_wins: float  # share of cases the judge's alignment is at least the reader's
    reader_wins: float
    p: float
    rejected: bool  # the judge wins against this reader, after the correction


@dataclass
class AltTest:
    epsilon: float
    q: float
    rows: list[LeftOut] = field(default_factory=list)
    skipped: dict[str, int] = field(default_factory=dict)  # reader -> cases, under MIN_CASES

    @property
    def winning_rate(self) -> float | None:
        return sum(r.rejected for r in self.rows) / len(self.rows) if self.rows else None

    @property
    def advantage(self) -> float | None:
        """The advantage probability rho: the judge as good as or better than a reader."""
        return float(np.mean([r.judge_wins for r in self.rows])) if self.rows else None

    @property
    def passed(self) -> bool | None:
        rate = self.winning_rate
        return None if rate is None else rate >= 0.5

    @property
    def tested(self) -> bool:
        return len(self.rows) >= MIN_READERS

    @property
    def conclusion(self) -> str:
        if len(self.rows) < MIN_READERS:
            return TOO_FEW
        return YES if self.passed else NO

    @property
    def why(self) -> str:
        if not self.rows:
            return (f"No reader has {MIN_CASES} cases or more that another reader and the judge "
                    "also answered: the test has nothing to stand on.")
        if len(self.rows) < MIN_READERS:
            return (f"{len(self.rows)} reader{'s' if len(self.rows) != 1 else ''} with "
                    f"{MIN_CASES} cases or more; the test needs "
                    f"{MIN_READERS} or more to ask whether the judge represents the readers' "
                    "consensus rather than one reader.")
        rate = self.winning_rate
        assert rate is not None
        verb = "wins against" if self.passed else "wins against only"
        return (f"The judge {verb} {sum(r.rejected for r in self.rows)} of {len(self.rows)} "
                f"readers (winning rate {rate:.2f}; it passes at 0.5) at epsilon {self.epsilon:g}.")

    def as_dict(self) -> dict[str, object]:
        return {"method": "alternative annotator test (Calderon, Reichart & Dror, ACL 2025); "
                          "Benjamini-Yekutieli over readers",
                "epsilon": self.epsilon, "q": self.q, "winning_rate": self.winning_rate,
                "advantage_probability": self.advantage, "conclusion": self.conclusion,
                "why": self.why, "skipped": self.skipped,
                "readers": [{"reader": r.reader, "cases": r.cases, "judge_wins": r.judge_wins,
                             "reader_wins": r.reader_wins, "p": r.p, "judge_wins_test": r.rejected}
                            for r in self.rows]}


def parse_epsilon(text: str | None) -> float:
    """The admin's epsilon as typed: empty is the default."""
    if text is None or not text.strip():
        return EPSILON
    try:
        value = float(text)
    except ValueError:
        raise Invalid(f"epsilon {text!r} is not a number: give a share of cases, such as 0.1",
                      field="epsilon") from None
    if not 0 <= value < 1:
        raise Invalid(f"epsilon {text!r} is outside 0 to 1: it is a share of cases, such as "
                      "0.1 (crowd workers), 0.15 (skilled) or 0.2 (experts)", field="epsilon")
    return value


def _p_value(differences: np.ndarray, epsilon: float) -> float:
    """H0: mean(reader wins - judge wins) >= epsilon, one-sided t. Identical differences have
    no variance: the test is then decided by the mean alone."""
    if np.all(differences == differences[0]):
        return 0.0 if differences[0] < epsilon else 1.0
    return float(stats.ttest_1samp(differences, epsilon, alternative="less").pvalue)


def alt_test(readers: Mapping[str, Mapping[Any, object]], judge: Mapping[Any, object],
             epsilon: float = EPSILON, q: float = Q, min_cases: int = MIN_CASES) -> AltTest:
    """``readers``: reader -> case -> answer; ``judge``: case -> answer. Answers compare by
    equality; a case a reader did not answer is simply absent."""
    if not 0 <= epsilon < 1:
        raise Invalid("epsilon is a share of cases: at least 0 and below 1", field="epsilon")
    by_case: dict[Hashable, dict[str, object]] = {}
    for reader, answers in readers.items():
        for case, answer in answers.items():
            by_case.setdefault(case, {})[reader] = answer
    kept = {case: who for case, who in by_case.items() if len(who) >= 2 and case in judge}
    out = AltTest(epsilon, q)
    p_values = []
    for reader in readers:
        cases = [case for case, who in kept.items() if reader in who]
        if len(cases) < min_cases:
            out.skipped[reader] = len(cases)
            continue
        judge_wins, reader_wins = [], []
        for case in cases:
            others = [a for r, a in kept[case].items() if r != reader]
            human = float(np.mean([kept[case][reader] == a for a in others]))
            machine = float(np.mean([judge[case] == a for a in others]))
            judge_wins.append(machine >= human)
            reader_wins.append(human >= machine)
        d = np.array(reader_wins, dtype=float) - np.array(judge_wins, dtype=float)
        p_values.append(_p_value(d, epsilon))
        out.rows.append(LeftOut(reader, len(cases), float(np.mean(judge_wins)),
                                float(np.mean(reader_wins)), p_values[-1], False))
    if p_values:
        rejected = multipletests(p_values, alpha=q, method="fdr_by")[0]
        out.rows = [LeftOut(r.reader, r.cases, r.judge_wins, r.reader_wins, r.p, bool(flag))
                    for r, flag in zip(out.rows, rejected, strict=True)]
    return out
