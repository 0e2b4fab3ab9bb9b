"""A reference that weighs the readers by their skill: Dawid and Skene's latent-class model
(Applied Statistics 1979), fitted by crowd-kit's EM from every first read of a study's cases,
beside the majority-with-adjudication reference every figure uses.

Each question is fitted apart, as pass / fail ("cannot assess" is no read at all). Each reader
gets a 2 x 2 confusion matrix, so a reader who fails what the others pass counts for less
where they disagree; with two readers who disagree, the model leans on whoever agrees more
with the pattern of the rest of the study. Known-answer cases are not in the reads (app/
agreement/reads.py): they never shape this reference either.

The figures here are a sensitivity analysis: how far the judge's agreement, "too strict" and
"too lenient" move when the reference is the model's instead of the majority's. A case whose
posterior is exactly even has no label.
"""

import warnings
from collections.abc import Sequence
from dataclasses import dataclass

import pandas as pd

from app.agreement.reads import StudyReads, vote
from app.agreement.report import settled_consensus
from app.agreement.stats import Vote

ITERATIONS = 100
TOLERANCE = 1e-5  # crowd-kit's own default: a change in the log-likelihood below it stops EM


@dataclass(frozen=True)
class SkillWeighted:
    """The model's reference for one question."""

    question: str
    labels: dict[int, bool]  # item id -> pass (posterior above one half)
    pass_probability: dict[int, float]  # item id -> posterior probability of pass
    prior_pass: float
    # reader -> (sensitivity: fails a failing case, specificity: passes a passing one)
    skill: dict[str, tuple[float, float]]


def fit_votes(votes: Sequence[tuple[object, str, bool]]) -> tuple[dict[object, float], float,
                                                                  dict[str, tuple[float, float]]]:
    """(task, reader, passed) reads -> each task's posterior probability of pass, the prior
    of pass, and each reader's sensitivity and specificity."""
    from crowdkit.aggregation import DawidSkene  # nltk behind it: seconds to import, once

    frame = pd.DataFrame([(task, reader, "pass" if passed else "fail") for task, reader, passed in votes],
                         columns=["task", "worker", "label"])
    with warnings.catch_warnings():  # its pandas deprecation notices are the library's own
        warnings.filterwarnings("ignore", module="crowdkit")
        model = DawidSkene(n_iter=ITERATIONS, tol=TOLERANCE).fit(frame)
    assert model.probas_ is not None and model.errors_ is not None and model.priors_ is not None
    probas = model.probas_.reindex(columns=["fail", "pass"], fill_value=0.0)
    skill = {}
    for reader in frame["worker"].unique():
        # Rows: the label given (one the reader never gave has probability 0); columns: the
        # true label (one no case was estimated to have is unknown).
        matrix = (model.errors_.loc[reader].reindex(index=["fail", "pass"], fill_value=0.0)
                  .reindex(columns=["fail", "pass"]))
        skill[str(reader)] = (float(matrix.loc["fail", "fail"]), float(matrix.loc["pass", "pass"]))
    priors = model.priors_.reindex(["fail", "pass"], fill_value=0.0)
    return ({task: float(p) for task, p in probas["pass"].items()}, float(priors["pass"]), skill)


def skill_weighted(data: StudyReads, question: str) -> SkillWeighted | None:
    """None when fewer than two readers answered the question: there is nothing to weigh."""
    votes = [(r.item_id, r.reader, v) for r in data.reads
             if not r.repeat and (v := vote(r.answers[question])) is not None]
    if len({reader for _, reader, _ in votes}) < 2:
        return None
    posterior, prior, skill = fit_votes(votes)
    labels = {int(item): p > 0.5 for item, p in posterior.items() if p != 0.5}  # type: ignore[call-overload]
    return SkillWeighted(question, labels, {int(i): p for i, p in posterior.items()},  # type: ignore[call-overload]
                         prior, skill)


@dataclass(frozen=True)
class Figure:
    """One judge figure under both references: k of n under each."""

    name: str
    majority: tuple[int, int]
    weighted: tuple[int, int]

    @staticmethod
    def share(pair: tuple[int, int]) -> float | None:
        return pair[0] / pair[1] if pair[1] else None

    @property
    def moved(self) -> float | None:
        a, b = self.share(self.majority), self.share(self.weighted)
        return None if a is None or b is None else b - a


@dataclass(frozen=True)
class ReferenceShift:
    question: str
    figures: list[Figure]
    cases: int  # cases with both references and a judge answer
    differ: int  # of them, where the two references differ
    model: SkillWeighted


def _figures(judge: list[Vote], reference: list[Vote]) -> dict[str, tuple[int, int]]:
    both = [(j, r) for j, r in zip(judge, reference, strict=True) if j is not None and r is not None]
    n = len(both)
    return {"agreement": (sum(j == r for j, r in both), n),
            "too_strict": (sum(not j and r for j, r in both), n),
            "too_lenient": (sum(j and not r for j, r in both), n)}


def reference_shift(data: StudyReads, question: str) -> ReferenceShift | None:
    """The judge's agreement, too strict and too lenient under the majority reference and
    under the skill-weighted one, on the cases each settles."""
    model = skill_weighted(data, question)
    if model is None:
        return None
    majority = settled_consensus(data)
    judge = [c.judge.get(question) for c in data.cases]
    by_majority = [majority.get(c.item_id, {}).get(question) for c in data.cases]
    by_model = [model.labels.get(c.item_id) for c in data.cases]
    a, b = _figures(judge, by_majority), _figures(judge, by_model)
    paired = [(m, w) for j, m, w in zip(judge, by_majority, by_model, strict=True)
              if j is not None and m is not None and w is not None]
    return ReferenceShift(question, [Figure(name, a[name], b[name]) for name in a], len(paired),
                          sum(m != w for m, w in paired), model)
