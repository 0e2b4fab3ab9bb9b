"""A reference that weighs the readers by their skill: Dawid and Skene's latent-class model
(Applied Statistics 1979), fitted by EM (here, in numpy) from every first read of a study's cases,
beside the majority-with-adjudication reference every figure uses.

Each question is fitted apart, as pass / fail ("cannot assess" is no read at all). Each reader
gets a 2 x 2 confusion matrix, so a reader who fails what the others pass counts for less
where they disagree. With two readers the model is not identified (an evenly split case
could go either way, and which way depends on where EM starts): it needs three. Known-answer
cases are not in the reads (app/agreement/reads.py): they never shape this reference either.

The figures here are a sensitivity analysis: how far the judge's agreement, "too strict" and
"too lenient" move when the reference is the model's instead of the majority's. A case whose
posterior is exactly even has no label.
"""

import logging
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from app.agreement.reads import StudyReads, vote
from app.agreement.report import settled_consensus
from app.agreement.stats import Vote

log = logging.getLogger(__name__)

# EM runs until the log-likelihood of the reads stops rising: a rise below TOLERANCE (in nats,
# over the whole study) ends it. A looser rule on a per-read bound stopped EM after a few
# steps on flat stretches, with posteriors far from the fit's.
ITERATIONS = 10_000
TOLERANCE = 1e-10
# A probability kept off 0 and 1: a reader never wrong in the fit has a finite log-likelihood.
EPS = 1e-10
# Two readers who disagree cannot be told apart: either could be the one in error. The model
# is identified from three readers up, so with fewer there is no skill-weighted figure.
MIN_READERS = 3


@dataclass(frozen=True)
class SkillWeighted:
    """The model's reference for one question."""

    question: str
    labels: dict[int, bool]  # item id -> pass (posterior above one half)
    pass_probability: dict[int, float]  # item id -> posterior probability of pass
    prior_pass: float
    # reader -> (sensitivity: fails a failing case, specificity: passes a passing one)
    skill: dict[str, tuple[float, float]]


@dataclass(frozen=True)
class Fit:
    """Each task's posterior probability of pass, the prior of pass, each reader's sensitivity
    and specificity, and how EM ended."""

    posterior: dict[object, float]
    prior: float
    skill: dict[str, tuple[float, float]]
    iterations: int
    converged: bool
    log_likelihood: float


def _errors(labels: np.ndarray, given: np.ndarray, posterior: np.ndarray) -> np.ndarray:
    """M-step: reader x label given x true label, each true label's column summing to one."""
    # labels: tasks x readers, 1 pass, 0 fail; given: where the reader read the task.
    truth = np.stack([1.0 - posterior, posterior], axis=1)  # tasks x (fail, pass)
    said_pass = (labels * given).T @ truth  # readers x true
    said_fail = ((1 - labels) * given).T @ truth
    counts = np.clip(np.stack([said_fail, said_pass], axis=1), EPS, None)
    return counts / counts.sum(axis=1, keepdims=True)


def _e_step(labels: np.ndarray, given: np.ndarray, prior: float,
            errors: np.ndarray) -> tuple[np.ndarray, float]:
    """Each task's posterior of pass, and the log-likelihood of every read under the model."""
    log_errors = np.log(errors)  # readers x given x true
    weights = np.clip(np.array([1.0 - prior, prior]), EPS, None)
    joint = np.log(weights)[None, :] + np.stack([
        (given * np.where(labels == 1, log_errors[:, 1, c], log_errors[:, 0, c])).sum(axis=1)
        for c in (0, 1)], axis=1)
    top = joint.max(axis=1, keepdims=True)
    total = top[:, 0] + np.log(np.exp(joint - top).sum(axis=1))
    return np.exp(joint[:, 1] - total), float(total.sum())


def fit_votes(votes: Sequence[tuple[object, str, bool]], iterations: int | None = None) -> Fit:
    """(task, reader, passed) reads -> the Dawid-Skene fit by EM, started (as crowd-kit starts
    it) from each task's share of pass reads."""
    iterations = ITERATIONS if iterations is None else iterations
    tasks = list(dict.fromkeys(task for task, _, _ in votes))
    readers = list(dict.fromkeys(reader for _, reader, _ in votes))
    at_task = {t: i for i, t in enumerate(tasks)}
    at_reader = {r: i for i, r in enumerate(readers)}
    labels = np.zeros((len(tasks), len(readers)))
    given = np.zeros_like(labels)
    for task, reader, passed in votes:
        labels[at_task[task], at_reader[reader]] = float(passed)
        given[at_task[task], at_reader[reader]] = 1.0
    posterior = (labels * given).sum(axis=1) / given.sum(axis=1)
    prior = float(posterior.mean())
    errors = _errors(labels, given, posterior)
    previous, likelihood, converged, steps, rise = -np.inf, -np.inf, iterations == 0, 0, np.inf
    while not converged and steps < iterations:
        steps += 1
        posterior, likelihood = _e_step(labels, given, prior, errors)
        prior = float(posterior.mean())
        errors = _errors(labels, given, posterior)
        rise = likelihood - previous
        converged = rise < TOLERANCE
        previous = likelihood
    if not converged:
        # The last step's own rise (the message once always said 0: it was taken after the
        # step's likelihood had become the previous one).
        log.warning("Dawid-Skene EM stopped at %d steps before the log-likelihood settled "
                    "(last rise %.3g)", iterations, rise)
    skill = {str(r): (float(errors[i, 0, 0]), float(errors[i, 1, 1])) for r, i in at_reader.items()}
    return Fit({t: float(posterior[i]) for t, i in at_task.items()}, prior, skill, steps, converged,
               likelihood)


def skill_weighted(data: StudyReads, question: str) -> SkillWeighted | None:
    """None when fewer than MIN_READERS readers answered the question: the model cannot tell
    them apart."""
    votes = [(r.item_id, r.reader, v) for r in data.reads
             if not r.repeat and (v := vote(r.answers[question])) is not None]
    if len({reader for _, reader, _ in votes}) < MIN_READERS:
        return None
    fit = fit_votes(votes)
    posterior = {int(item): p for item, p in fit.posterior.items()}  # type: ignore[call-overload]
    labels = {item: p > 0.5 for item, p in posterior.items() if p != 0.5}
    return SkillWeighted(question, labels, posterior, fit.prior, fit.skill)


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
