"""Judge self-consistency: when an attempt was judged more than once, how often the verdicts
match, as the paper's 87.2 % figure does.

Verdicts are grouped by attempt and by the judge that gave them (its model; imported
verdicts form a group of their own), so an offline re-judgement is never compared with an
imported Gemini verdict. Within a group each later verdict is compared with the first.
Only the dimensions both verdicts scored are compared (imported verdicts never scored
fidelity). "Identical" means every compared dimension and the qualified verdict agree.
"""

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from sqlalchemy import func, select
from sqlmodel import Session, col

from app.agreement.stats import Estimate, wilson
from app.models import JudgeVerdict
from pipeline.vocabulary import DIMENSIONS

Verdict = dict[str, bool | None]


@dataclass(frozen=True)
class Consistency:
    attempts: int  # attempts with at least two readable verdicts
    pairs: int  # later verdicts compared with the first
    identical: Estimate
    one_dimension: Estimate  # exactly one dimension differs
    more: Estimate  # two or more differ
    qualified_flips: Estimate

    def as_dict(self) -> dict[str, object]:
        return {"attempts": self.attempts, "pairs": self.pairs,
                "identical": self.identical.as_dict(), "one_dimension": self.one_dimension.as_dict(),
                "two_or_more": self.more.as_dict(), "qualified_flips": self.qualified_flips.as_dict()}


def differences(first: Verdict, later: Verdict) -> tuple[int, bool]:
    """Dimensions that differ (where both scored), and whether qualified changed."""
    differ = sum(1 for d in DIMENSIONS if first.get(d) is not None and later.get(d) is not None
                 and first[d] != later[d])
    return differ, first.get("qualified") != later.get("qualified")


def consistency(verdicts_by_attempt: Iterable[Sequence[Verdict]]) -> Consistency:
    attempts = pairs = identical = one = more = flips = 0
    for verdicts in verdicts_by_attempt:
        if len(verdicts) < 2:
            continue
        attempts += 1
        for later in verdicts[1:]:
            pairs += 1
            differ, flipped = differences(verdicts[0], later)
            identical += differ == 0 and not flipped
            one += differ == 1
            more += differ >= 2
            flips += flipped
    return Consistency(attempts, pairs, wilson(identical, pairs), wilson(one, pairs),
                       wilson(more, pairs), wilson(flips, pairs))


def judge_consistency(session: Session, attempt_ids: Iterable[int] | None = None) -> Consistency:
    """Over the given attempts (a study's), or over every attempt judged twice or more."""
    repeated = (select(col(JudgeVerdict.attempt_id)).where(col(JudgeVerdict.error).is_(None))
                .group_by(col(JudgeVerdict.attempt_id), col(JudgeVerdict.model))
                .having(func.count() > 1))
    if attempt_ids is not None:
        # Narrowed inside the grouping, so a study never scans every verdict of the data set.
        repeated = repeated.where(col(JudgeVerdict.attempt_id).in_(list(attempt_ids)))
    query = (select(JudgeVerdict).where(col(JudgeVerdict.attempt_id).in_(repeated),
                                        col(JudgeVerdict.error).is_(None))
             .order_by(col(JudgeVerdict.attempt_id), col(JudgeVerdict.id)))
    grouped: dict[tuple[int, str], list[Verdict]] = {}
    for v in session.scalars(query):
        grouped.setdefault((v.attempt_id, v.model or "imported"), []).append(
            {d: getattr(v, d) for d in DIMENSIONS} | {"qualified": v.qualified})
    return consistency(grouped.values())
