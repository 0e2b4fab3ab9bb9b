"""Panels of judges: several judges' answers on the same edits combined into one.

- Majority: the answer most members who answered gave; a tie is no answer.
- Stacked: a logistic regression of the readers' reference on the members' answers (pass 1,
  fail 0, no answer 0.5), cross-fitted: the edits are split in folds by source image, and each
  edit's answer comes from a model fitted on the other folds only, so the panel is never scored
  on the labels it was fitted to. Its probability is the panel's score.
"""

from collections.abc import Hashable, Sequence

import numpy as np
from sklearn.linear_model import LogisticRegression
from sklearn.model_selection import GroupKFold

from app.agreement.stats import Vote

FOLDS = 5


def majority(members: Sequence[Sequence[Vote]]) -> list[Vote]:
    found: list[Vote] = []
    for answers in zip(*members, strict=True):
        passes = sum(a is True for a in answers)
        fails = sum(a is False for a in answers)
        found.append(True if passes > fails else False if fails > passes else None)
    return found


def share_passing(members: Sequence[Sequence[Vote]]) -> list[float | None]:
    """The share of answering members who passed each edit: the majority panel's score."""
    found: list[float | None] = []
    for answers in zip(*members, strict=True):
        given = [a for a in answers if a is not None]
        found.append(sum(given) / len(given) if given else None)
    return found


def stacked(members: Sequence[Sequence[Vote]], truth: Sequence[Vote],
            clusters: Sequence[Hashable]) -> tuple[list[Vote], list[float | None]]:
    """Each edit's cross-fitted answer and probability; None where no member answered (as
    the majority panel leaves it), or a fold could not be fitted (its training edits hold
    one class only, or there are too few source images)."""
    x = np.array([[0.5 if a is None else float(a) for a in answers]
                  for answers in zip(*members, strict=True)], dtype=float)
    y = np.array([np.nan if t is None else float(t) for t in truth])
    answered = [any(a is not None for a in answers) for answers in zip(*members, strict=True)]
    order = {c: i for i, c in enumerate(dict.fromkeys(clusters))}
    groups = np.array([order[c] for c in clusters])
    n = len(y)
    votes: list[Vote] = [None] * n
    scores: list[float | None] = [None] * n
    images = len(set(groups.tolist()))
    if images < 2 or n == 0:
        return votes, scores
    for train, test in GroupKFold(n_splits=min(FOLDS, images)).split(x, groups=groups):
        fit = train[~np.isnan(y[train])]
        if len(set(y[fit].tolist())) < 2:
            continue
        model = LogisticRegression(C=1.0).fit(x[fit], y[fit].astype(int))
        for index, p in zip(test, model.predict_proba(x[test])[:, 1], strict=True):
            if not answered[index]:
                continue  # no member answered: the intercept alone is no answer of the panel's
            scores[index] = float(p)
            votes[index] = bool(p >= 0.5)
    return votes, scores
