"""Plain values the agreement figures share: a vote, a proportion with its Wilson interval
(for counts that are not clustered, such as re-judgements of one attempt), and a 2x2 table."""

from dataclasses import dataclass

import numpy as np
from statsmodels.stats.proportion import proportion_confint

Vote = bool | None


def pass_fail(vote: Vote) -> str:
    """A vote as the CSV files write it: pass, fail, or empty for none."""
    return "" if vote is None else ("pass" if vote else "fail")
CONFIDENCE = 0.95


@dataclass(frozen=True)
class Estimate:
    """A figure with its interval and the n it rests on; value None when undefined."""

    value: float | None
    low: float | None = None
    high: float | None = None
    n: int = 0

    def as_dict(self) -> dict[str, float | int | None]:
        return {"value": self.value, "low": self.low, "high": self.high, "n": self.n}


def wilson(successes: int, n: int) -> Estimate:
    if n == 0:
        return Estimate(None, n=0)
    low, high = proportion_confint(successes, n, alpha=1 - CONFIDENCE, method="wilson")
    # Rounding noise (3e-18 for 0 of 100) would print as a non-zero bound.
    return Estimate(successes / n, max(0.0, round(float(low), 12)), min(1.0, round(float(high), 12)), n)


@dataclass(frozen=True)
class Table2x2:
    """Rows: rater A passes / fails; columns: rater B passes / fails."""

    both_pass: int
    a_pass_b_fail: int
    a_fail_b_pass: int
    both_fail: int

    @property
    def n(self) -> int:
        return self.both_pass + self.a_pass_b_fail + self.a_fail_b_pass + self.both_fail

    def array(self) -> np.ndarray:
        return np.array([[self.both_pass, self.a_pass_b_fail],
                         [self.a_fail_b_pass, self.both_fail]], dtype=float)

    def as_dict(self) -> dict[str, int]:
        return {"both_pass": self.both_pass, "a_pass_b_fail": self.a_pass_b_fail,
                "a_fail_b_pass": self.a_fail_b_pass, "both_fail": self.both_fail}
