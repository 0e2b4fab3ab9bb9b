"""Can the judge replace a radiologist? The judge as one more reader of a validation study,
with readers as random as the source images.

Each reader's accuracy on a question is their agreement with the other readers' strict
majority on the cases both they and the judge answered (a tie among the others leaves the case
out for that reader). The judge is scored against the very same reference on the very same
cases, so each reader gives one paired difference: reader minus judge. Those differences are
analysed as RJafroc's StCadVsRad analyses a standalone algorithm against a panel (Chakraborty
2017; Obuchowski & Rockette 1995; Hillis 2007 for the degrees of freedom): their mean square
across readers, and their jackknife over source images (one source image's cases left out at a
time, as every other interval of the app resamples them), give a random-reader random-case
interval of the readers' mean advantage, and beside it the fixed-reader one (these readers
only). Beside them: the alternative annotator test (Calderon et al. 2025), the judge's kappa
as a z-score of the readers' kappas among themselves, and how many readers and cases a study
needs for the interval of the difference to fit inside the study's margin (Hillis et al.
2011).
"""

import math
from dataclasses import dataclass, field
from itertools import combinations
from statistics import mean, stdev

import numpy as np
from statsmodels.stats.proportion import proportion_confint

from app.agreement.alternative_annotator import EPSILON, AltTest, alt_test
from app.agreement.random_reader_words import (
    alike_sentence,
    fixed_width,
    mean_interval,
    p_text,
    points_more_or_less,
    precision_sentence,
    signed_points,
)
from app.agreement.reads import StudyReads, vote
from app.agreement.reference import consensus
from app.agreement.stats import Vote
from app.agreement.two_raters import cells, kappa
from app.charts import Point, readers_and_judge_chart
from app.mrmc.data import MrmcInputError
from app.mrmc.orh import alike
from app.mrmc.sample_size import Pilot, Power, cases_for_width, power, table
from app.mrmc.standalone import VersusPanel, compare

JUDGE = "judge"
RANDOM = "radiologists in general, and source images like these"
FIXED = "these readers only, and source images like these"


@dataclass(frozen=True)
class ReaderAccuracy:
    reader: str
    cases: int  # scored: the others settled it and the judge answered
    correct: int  # the reader agreed with the others' majority
    judge_correct: int  # the judge agreed with the same reference on the same cases

    @property
    def accuracy(self) -> float:
        return self.correct / self.cases

    @property
    def judge_accuracy(self) -> float:
        return self.judge_correct / self.cases


@dataclass(frozen=True)
class KappaZ:
    judge: float | None  # the judge's mean kappa with each reader
    readers: list[float]  # each reader pair's kappa
    z: float | None
    why: str | None  # why there is no z

    def as_dict(self) -> dict[str, object]:
        return {"judge_mean_kappa": self.judge, "reader_pair_kappas": self.readers, "z": self.z,
                "why": self.why}


@dataclass
class JudgeAsReader:
    question: str
    readers: list[ReaderAccuracy] = field(default_factory=list)
    cases: int = 0  # distinct cases scored, for any reader
    clusters: int = 0
    versus: VersusPanel | None = None
    reason: str | None = None  # why there is no random-reader interval
    alt: AltTest | None = None
    kappa_z: KappaZ | None = None
    margin: float = 0.05
    sizes: list[tuple[int, Power | None]] = field(default_factory=list)
    # Readers who answered but could not be scored: the others never settled a case they
    # read (always tied), or the judge answered none of them.
    unscored: list[str] = field(default_factory=list)
    at_these_readers: Power | None = None  # images for the margin with the readers scored
    expected_now: float = float("nan")  # the half-width the components predict as things are

    @property
    def readers_alike(self) -> bool:
        """Every reader is ahead of (or behind) the judge by exactly the same amount."""
        return self.versus is not None and self.versus.var_r == 0

    @property
    def sentence_random(self) -> str | None:
        v = self.versus
        if v is None:
            return None
        low, high = v.ci
        if low > 0:
            verdict = "the readers are more accurate than the judge"
        elif high < 0:
            verdict = "the judge is more accurate than the readers"
        else:
            verdict = "the interval holds no difference, so neither is shown better"
        found = (f"For {RANDOM}: {verdict}. The readers agree with their reference "
                 f"{points_more_or_less(v.difference)} than the judge does (95 % CI "
                 f"{signed_points(low)} to {signed_points(high)}; {p_text(v.p)}).")
        if self.readers_alike:
            found += " " + alike_sentence(len(v.readers), "advantage over the judge")
        return found

    @property
    def sentence_fixed(self) -> str | None:
        v = self.versus
        if v is None:
            return None
        return (f"For {FIXED}: the readers agree with their reference "
                f"{points_more_or_less(v.difference)} than the judge does (95 % CI "
                f"{signed_points(v.fixed_ci[0])} to {signed_points(v.fixed_ci[1])}); "
                f"{fixed_width(v.fixed_ci, v.ci)}.")

    def points(self) -> list[Point]:
        """What the chart draws: each reader and the judge against that reader's reference
        (exact Clopper-Pearson intervals, the cases as n), then the readers' mean and the
        judge's, readers and source images random."""
        found = []
        for r in self.readers:
            for label, series, k in ((r.reader, "reader", r.correct),
                                     (f"judge, {r.reader}'s reference", "judge", r.judge_correct)):
                low, high = proportion_confint(k, r.cases, method="beta")
                found.append(Point(label, series, k / r.cases, float(low), float(high), r.cases))
        v = self.versus
        if v is not None:
            # The means rest on every case scored, once each (not reader x case pairs); their
            # t intervals are cut at 0 and 1, which a share cannot pass (mean_interval).
            found.append(Point("readers' mean (readers random)", "readers", v.panel_auc,
                               *mean_interval(v.panel_ci), self.cases))
            found.append(Point("judge's mean (readers random)", "judge", v.algorithm_auc,
                               *mean_interval(v.algorithm_ci), self.cases))
        return found

    @property
    def means_shown(self) -> tuple[tuple[float | None, float | None], tuple[float | None, float | None]]:
        """The readers' and the judge's mean intervals as drawn and printed (mean_interval)."""
        v = self.versus
        if v is None:
            return (None, None), (None, None)
        return mean_interval(v.panel_ci), mean_interval(v.algorithm_ci)

    @property
    def cut(self) -> bool:
        """A mean's interval reached past 0 or 1 and is shown cut there."""
        v = self.versus
        return v is not None and any(
            not math.isnan(ci[0]) and (ci[0] < 0 or ci[1] > 1) for ci in (v.panel_ci, v.algorithm_ci))

    @property
    def why_n_differ(self) -> str:
        """Why each reader's n is their own."""
        return (f"n is the cases each was scored on: the cases that reader read on which the "
                f"other readers agreed (a tie among them settles nothing) and the judge answered; "
                f"so each reader's n is their own. The two means rest on all {self.cases:,} such "
                "cases, each once.")

    def chart(self) -> str:
        return readers_and_judge_chart(
            self.points(), f"Accuracy against the other readers' majority, {self.question} "
            "(exact 95 % CI; the means: readers random)", "share of cases agreeing with the reference")

    @property
    def precision(self) -> str | None:
        """With few readers, in words: how wide the interval is, and what the margin needs."""
        if self.versus is None:
            return None
        return precision_sentence(len(self.versus.readers), self.versus.ci, self.margin,
                                  self.expected_now, self.at_these_readers, self.readers_needed,
                                  self.clusters, "source images", alike=self.readers_alike,
                                  points=True)

    @property
    def readers_needed(self) -> int | None:
        """The fewest readers (in the table) for which some number of cases brings the
        interval of the difference inside the margin."""
        return next((j for j, found in self.sizes if found is not None), None)

    def as_dict(self) -> dict[str, object]:
        v = self.versus
        return {
            "question": self.question,
            "method": "judge as one more reader: StCadVsRad single-treatment OR analysis of each "
                      "reader's accuracy minus the judge's against the leave-that-reader-out "
                      "majority (Chakraborty 2017; Obuchowski & Rockette 1995; Hillis 2007); "
                      "jackknife over source images",
            "readers": [{"reader": r.reader, "cases": r.cases, "accuracy": r.accuracy,
                         "judge_accuracy": r.judge_accuracy} for r in self.readers],
            "source_images": self.clusters, "reason": self.reason, "unscored": self.unscored,
            "rrrc": None if v is None else {"difference": v.difference, "ci": list(v.ci), "df": v.df,
                                            "t": v.t, "p": v.p, "generalises": RANDOM,
                                            "readers_mean": v.panel_auc,
                                            "readers_ci": list(v.panel_ci),
                                            "judge_mean": v.algorithm_auc},
            "frrc": None if v is None else {"difference": v.difference, "ci": list(v.fixed_ci),
                                            "se": v.fixed_se, "p": v.fixed_p, "generalises": FIXED},
            "alternative_annotator_test": None if self.alt is None else self.alt.as_dict(),
            "kappa_z": None if self.kappa_z is None else self.kappa_z.as_dict(),
            "sample_size": {"half_width": self.margin, "method": "Hillis, Obuchowski & Berbaum "
                            "(2011), from this study's own variance components",
                            "rows": [{"readers": j, "cases": None if p is None else p.cases}
                                     for j, p in self.sizes]},
        }


def first_votes(data: StudyReads, question: str) -> dict[str, dict[int, bool]]:
    """Reader -> case -> pass, from each reader's first read ("cannot assess" is no vote)."""
    found: dict[str, dict[int, bool]] = {}
    for r in data.reads:
        if not r.repeat and (v := vote(r.answers.get(question))) is not None:
            found.setdefault(r.reader, {})[r.item_id] = v
    return found


def _scored(votes: dict[str, dict[int, bool]], judge: dict[int, Vote], reader: str
            ) -> list[tuple[int, bool, bool]]:
    """(item, reader right, judge right) on each case the other readers settle."""
    found = []
    for item, own in votes[reader].items():
        others = [v[item] for name, v in votes.items() if name != reader and item in v]
        ref = consensus(others)[0]  # a tie among the others settles nothing
        answer = judge.get(item)
        if ref is not None and answer is not None:
            found.append((item, own == ref, answer == ref))
    return found


def _jackknife(scored: list[tuple[int, bool, bool]], at: dict[int, int], clusters: int
               ) -> tuple[np.ndarray, np.ndarray]:
    """Leave-one-source-image-out accuracy of the reader and of the judge, per image."""
    where = np.array([at[item] for item, _, _ in scored])
    n_c = np.bincount(where, minlength=clusters).astype(float)
    own = np.bincount(where, weights=[float(r) for _, r, _ in scored], minlength=clusters)
    judge = np.bincount(where, weights=[float(j) for _, _, j in scored], minlength=clusters)
    n = len(scored)
    with np.errstate(all="ignore"):
        return (own.sum() - own) / (n - n_c), (judge.sum() - judge) / (n - n_c)


def judge_as_reader(data: StudyReads, question: str, *, margin: float = 0.05,
                    epsilon: float = EPSILON) -> JudgeAsReader:
    out = JudgeAsReader(question, margin=margin)
    votes = first_votes(data, question)
    judge = {c.item_id: c.judge.get(question) for c in data.cases}
    cluster_of = {c.item_id: c.cluster for c in data.cases}
    out.alt = alt_test(votes, {i: v for i, v in judge.items() if v is not None}, epsilon=epsilon)
    out.kappa_z = kappa_z(votes, judge)
    scored = {reader: s for reader in sorted(votes) if (s := _scored(votes, judge, reader))}
    out.unscored = [reader for reader in sorted(votes) if reader not in scored]
    out.readers = [ReaderAccuracy(reader, len(s), sum(r for _, r, _ in s), sum(j for _, _, j in s))
                   for reader, s in scored.items()]
    names = sorted({cluster_of[item] for s in scored.values() for item, _, _ in s}, key=str)
    out.clusters = len(names)
    out.cases = len({item for s in scored.values() for item, _, _ in s})
    if len(scored) < 2:
        out.reason = ("Needs two readers or more who each share cases with another reader and "
                      "the judge: with fewer, no reader can be scored against the others, and "
                      "readers cannot be treated as random.")
        return out
    if out.clusters < 2:
        out.reason = "All the scored cases come from one source image: nothing to resample."
        return out
    at = {item: names.index(cluster_of[item]) for s in scored.values() for item, _, _ in s}
    values, jack, judge_values, judge_jack = [], [], [], []
    for s in scored.values():
        own, by_judge = _jackknife(s, at, out.clusters)
        if not np.isfinite(own).all():
            out.reason = ("A reader's scored cases all come from one source image: leaving it "
                          "out leaves nothing, so no jackknife.")
            return out
        values.append(sum(r for _, r, _ in s) / len(s))
        judge_values.append(sum(j for _, _, j in s) / len(s))
        jack.append(own)
        judge_jack.append(by_judge)
    v, j = np.array(values), np.array(judge_values)
    vj, jj = np.array(jack), np.array(judge_jack)
    psi = v - j
    if alike(psi) and alike(vj - jj):
        out.reason = ("Every reader's accuracy differs from the judge's by exactly the same "
                      "amount on every resample: no interval of it can be right.")
        return out
    try:
        out.versus = compare(JUDGE, tuple(scored), v, vj, j, jj)
    except (MrmcInputError, ZeroDivisionError) as error:
        out.reason = f"The random-reader interval cannot be computed: {error}"
        return out
    if out.readers_alike:  # a zero spread would promise the margin with too few readers
        return out
    pilot = Pilot.single(psi, vj - jj)
    out.sizes = table(pilot, half_width=margin)
    if out.sizes:  # else the pilot has no variance to predict from
        out.at_these_readers = cases_for_width(pilot, len(scored), margin)
        out.expected_now = power(pilot, len(scored), out.clusters, 0.0).half_width
    return out


def kappa_z(votes: dict[str, dict[int, bool]], judge: dict[int, Vote] | dict[int, bool]) -> KappaZ:
    """Cohen's kappa of the judge with each reader, and of each pair of readers, on the cases
    both answered; z = (judge's mean - readers' mean) / readers' standard deviation."""
    def pair(a: dict[int, bool] | dict[int, Vote], b: dict[int, bool]) -> float | None:
        items = sorted(set(a) & set(b))
        value = float(kappa(cells([a[i] for i in items], [b[i] for i in items]).sum(axis=0)))
        return None if np.isnan(value) else value

    with_judge = [k for reader in sorted(votes) if (k := pair(judge, votes[reader])) is not None]
    among = [k for a, b in combinations(sorted(votes), 2) if (k := pair(votes[a], votes[b])) is not None]
    judge_mean = mean(with_judge) if with_judge else None
    if judge_mean is None:
        return KappaZ(None, among, None, "the judge's kappa with the readers is undefined "
                      "(too few shared cases, or one side answered one way only)")
    if len(among) < 2:
        return KappaZ(judge_mean, among, None, f"{len(among)} pair(s) of readers with a kappa: "
                      "a spread needs three readers or more")
    spread = stdev(among)
    if spread == 0:
        return KappaZ(judge_mean, among, None, "the readers' kappas are all equal: no spread "
                      "to measure the judge against")
    return KappaZ(judge_mean, among, (judge_mean - mean(among)) / spread, None)
