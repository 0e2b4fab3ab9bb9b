"""Every agreement figure of a study, for one slice of its cases, as one typed report
(app/agreement/report_types.py; ``as_dict`` is its JSON).

Per question (the four dimensions and the overall verdict): the reference standard and how
each case was decided; the frozen judge against the reference and against each reader; each
reader against the consensus of the others and against each other reader; agreement among
all readers; the human ceiling (judge-reader against reader-reader agreement); sensitivity of
the judge's agreement to ties and "cannot assess"; and per disease. Every interval is the
cluster bootstrap over source images (app/agreement/resample.py), every figure carries its n.
Other judges' verdicts on the same edits are compared apart, under ``judge_b``.
"""

import threading
from collections import Counter
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from _collections_abc import dict_items, dict_keys, dict_values

import numpy as np

from app.agreement.ceiling import EQUIVALENCE_MARGIN, human_ceiling
from app.agreement.multiplicity import holm_adjusted
from app.agreement.readers import among_readers
from app.agreement.reads import CANNOT_ASSESS, Case, Read, StudyReads, vote
from app.agreement.reference import PRIMARY, Decided, Policy, consensus, leave_one_out
from app.agreement.report_types import (
    AgreementReport,
    Comparison,
    Intervals,
    Multiplicity,
    OtherJudge,
    QuestionReport,
    ReferenceCounts,
    Sensitivity,
)
from app.agreement.resample import CONFIDENCE, FEW_CLUSTERS, METHOD, RESAMPLES, SEED, ClusterBootstrap
from app.agreement.stats import Vote
from app.agreement.two_raters import FIGURES, SUBGROUP_FIGURES, cells, compare_many
from pipeline.vocabulary import QUESTIONS


@dataclass(frozen=True)
class Slice:
    """Which cases count; an empty tuple means all."""

    modality: tuple[str, ...] = ()
    disease: tuple[str, ...] = ()
    direction: tuple[str, ...] = ()
    round: tuple[int, ...] = ()

    def admits(self, case: Case) -> bool:
        return all(not wanted or value in wanted for wanted, value in (
            (self.modality, case.modality), (self.disease, case.disease),
            (self.direction, case.direction), (self.round, case.round)))

    def as_dict(self) -> dict[str, list[object]]:
        return {k: list(getattr(self, k)) for k in ("modality", "disease", "direction", "round")}


def slice_choices(cases: Sequence[Case]) -> dict[str, list[Any]]:
    """The values each part of a slice can take among these cases, for the slice form."""
    return {"modality": sorted({c.modality for c in cases}),
            "disease": sorted({c.disease for c in cases}),
            "direction": sorted({c.direction for c in cases}),
            "round": sorted({c.round for c in cases})}


def first_reads(reads: Sequence[Read]) -> dict[tuple[str, int], Read]:
    return {(r.reader, r.item_id): r for r in reads if not r.repeat}


@dataclass(frozen=True)
class QuestionData:
    """One question's answers over the slice's cases, in case order."""

    cases: Sequence[Case]
    readers: Sequence[str]
    answers: dict[str, list[str | None]]  # reader -> answer as given, None when not read
    settled: list[Vote]  # the adjudicator's decision per case
    judge: list[Vote]
    # Votes and votes by case, by how "cannot assess" counts (all a policy changes of them):
    # a report asks for them a dozen times per question.
    _kept: dict[tuple[str, Vote], Any] = field(default_factory=dict, compare=False, repr=False)

    def votes(self, policy: Policy = PRIMARY) -> dict[str, list[Vote]]:
        key = ("votes", policy.cannot_assess)
        if key not in self._kept:
            counted = {answer: vote(answer) for given in self.answers.values() for answer in given}
            if policy.cannot_assess is not None:
                counted[CANNOT_ASSESS] = policy.cannot_assess
            self._kept[key] = {name: [counted[a] for a in given]
                               for name, given in self.answers.items()}
        found: dict[str, list[Vote]] = self._kept[key]
        return found

    def by_case(self, policy: Policy = PRIMARY) -> list[tuple[Vote, ...]]:
        key = ("by_case", policy.cannot_assess)
        if key not in self._kept:
            votes = self.votes(policy)
            self._kept[key] = (list(zip(*(votes[n] for n in self.readers), strict=True))
                               if self.readers else [() for _ in self.cases])
        found: list[tuple[Vote, ...]] = self._kept[key]
        return found

    def reference(self, policy: Policy = PRIMARY) -> list[tuple[Vote, Decided]]:
        return [consensus(case_votes, settled, policy)
                for case_votes, settled in zip(self.by_case(policy), self.settled, strict=True)]


# Ways of counting what the readers left open, for the sensitivity analyses (app/quality too).
SENSITIVITY = {
    "ties_as_pass": Policy(ties=True), "ties_as_fail": Policy(ties=False),
    "cannot_assess_as_pass": Policy(cannot_assess=True),
    "cannot_assess_as_fail": Policy(cannot_assess=False),
}


def question_tables(data: StudyReads) -> dict[str, "QuestionData"]:
    """Every question's answers over all the study's cases, first reads only."""
    reads = first_reads(data.reads)
    return {q: question_data(data.cases, data.readers, reads, data.decisions, q) for q in QUESTIONS}


def settled_consensus(data: StudyReads, policy: Policy = PRIMARY,
                      tables: dict[str, "QuestionData"] | None = None) -> dict[int, dict[str, bool]]:
    """Item id -> question -> the readers' consensus (the adjudicator's decision on a tie),
    for every question the readers settled on the case: the label a quality estimate or a
    training export takes from a study. Under another policy (a sensitivity analysis), what
    the policy decides counts as settled too (a tie counted as pass). ``tables``: the
    study's ``question_tables``, when the caller asks under several policies."""
    found: dict[int, dict[str, bool]] = {}
    for question, table in (tables or question_tables(data)).items():
        for case, (value, decided) in zip(data.cases, table.reference(policy), strict=True):
            if value is not None and (decided.resolved or policy != PRIMARY):
                found.setdefault(case.item_id, {})[question] = bool(value)
    return found


def question_data(cases: Sequence[Case], readers: Sequence[str], reads: dict[tuple[str, int], Read],
                  decisions: dict[int, dict[str, str]], question: str) -> QuestionData:
    answers = {name: [reads[(name, c.item_id)].answers[question] if (name, c.item_id) in reads
                      else None for c in cases] for name in readers}
    settled = [vote(decisions.get(c.item_id, {}).get(question)) for c in cases]
    return QuestionData(cases, readers, answers, settled, [c.judge.get(question) for c in cases])


def _sensitivity(data: QuestionData, boot: ClusterBootstrap, primary: dict[str, object]) -> Sensitivity:
    """The judge's agreement with the reference when what the readers left open is counted
    one way or the other: does a conclusion rest on how ties or "cannot assess" were handled?
    ``primary`` is the judge-vs-reference agreement already computed (the primary policy)."""
    policies = {**SENSITIVITY, "ties_excluded": Policy(use_adjudication=False)}
    one_hot = np.stack([cells(data.judge, [value for value, _ in data.reference(policy)])
                        for policy in policies.values()], axis=1)
    found = dict(zip(policies, boot.figures_of_many(
        one_hot, {"agreement": FIGURES["agreement"]}, ns=[int(n) for n in one_hot.sum(axis=(0, 2))],
        bounds={"agreement": (0.0, 1.0)}), strict=True))
    agreement = {name: figures["agreement"].as_dict() for name, figures in found.items()}
    return Sensitivity(
        ties={"primary": primary, "as_pass": agreement["ties_as_pass"],
              "as_fail": agreement["ties_as_fail"], "excluded": agreement["ties_excluded"]},
        cannot_assess={"excluded": primary, "as_pass": agreement["cannot_assess_as_pass"],
                       "as_fail": agreement["cannot_assess_as_fail"]},
    )


Subgroups = dict[str, tuple[list[int], ClusterBootstrap]]


def subgroups(cases: Sequence[Case], resamples: int) -> Subgroups:
    """Each disease's cases (by index) and their own bootstrap, built once for every question."""
    groups: dict[str, list[int]] = {}
    for i, case in enumerate(cases):
        groups.setdefault(case.disease, []).append(i)
    return {disease: (where, ClusterBootstrap([cases[i].cluster for i in where], resamples=resamples,
                                              weights=[cases[i].weight for i in where]))
            for disease, where in sorted(groups.items())}


def question_report(data: QuestionData, boot: ClusterBootstrap,
                    by_disease: dict[str, dict[str, object]],
                    margin: float = EQUIVALENCE_MARGIN) -> QuestionReport:
    """One question's figures; ``by_disease`` (the judge against the reference in each
    disease) is computed for every question at once (``_by_disease``)."""
    readers = list(data.readers)
    votes = data.votes()
    by_case = data.by_case()
    decided = data.reference()
    reference: list[Vote] = [value for value, _ in decided]
    how = Counter(d for _, d in decided)
    several = len(readers) > 1
    # Every pair over the slice's cases from one resampling: the judge against the reference
    # and each reader, each reader against the others' consensus, each pair of readers.
    others = [(votes[name], [leave_one_out(case_votes, i, settled) for case_votes, settled
                             in zip(by_case, data.settled, strict=True)])
              for i, name in enumerate(readers)] if several else []
    pairs = [(a, b) for i, a in enumerate(readers) for b in readers[i + 1:]] if several else []
    found = iter(compare_many([(data.judge, reference), *((data.judge, votes[n]) for n in readers),
                               *others, *((votes[a], votes[b]) for a, b in pairs)], boot))
    versus_reference = next(found)
    return QuestionReport(
        n_cases=len(data.cases),
        reference=ReferenceCounts(
            decided={d.value: how.get(d, 0) for d in Decided},
            reader_ties=how.get(Decided.tie, 0) + how.get(Decided.adjudicated, 0)),
        judge_missing=sum(1 for j in data.judge if j is None),
        judge_vs_reference=versus_reference.as_dict(),
        judge_vs_reader={name: next(found).as_dict() for name in readers},
        reader_vs_others={name: next(found).as_dict() for name in readers} if several else {},
        reader_pairs=[{"a": a, "b": b, **next(found).as_dict()} for a, b in pairs],
        among_readers=among_readers([votes[n] for n in readers], boot) if several else None,
        human_ceiling=(human_ceiling(data.judge, [votes[n] for n in readers], boot, margin)
                       if several else None),
        cannot_assess={name: Counter(data.answers[name])[CANNOT_ASSESS] for name in readers},
        missing={name: sum(1 for a in data.answers[name] if a is None) for name in readers},
        sensitivity=_sensitivity(data, boot, versus_reference.figures["agreement"].as_dict()),
        by_disease=by_disease,
    )


class _Pending:
    """Every question's by-disease figures, computed once, on first look, for all questions
    at once (one resampling per disease serves them all)."""

    def __init__(self, tables: dict[str, "QuestionData"], cases: Sequence[Case], resamples: int) -> None:
        self._arguments: tuple[Any, ...] | None = (tables, cases, resamples)
        self._found: dict[str, dict[str, Any]] | None = None
        self._lock = threading.Lock()

    def result(self) -> dict[str, dict[str, Any]]:
        with self._lock:
            if self._found is None:
                assert self._arguments is not None
                tables, cases, resamples = self._arguments
                self._found = _by_disease(tables, subgroups(cases, resamples))
                self._arguments = None  # the tables go with it
            return self._found


class ByDisease(dict[str, Any]):
    """Disease -> the judge against the reference among that disease's cases, for one
    question. The agreement page shows none of it (its charts, tables, JSON and the report
    do), and it was a fifth of the page's first view: so it is computed on first look, to the
    same figures, and a plain dict once filled."""

    def __init__(self, source: Any = (), question: str | None = None) -> None:
        pending = isinstance(source, _Pending)
        super().__init__(() if pending else source)
        self._pending: _Pending | None = source if pending else None
        self._question = question

    def _fill(self) -> None:
        if self._pending is not None and self._question is not None:
            super().update(self._pending.result()[self._question])
            self._pending = None

    def __getitem__(self, key: str) -> Any:
        self._fill()
        return super().__getitem__(key)

    def __iter__(self) -> Iterator[str]:
        self._fill()
        return super().__iter__()

    def __len__(self) -> int:
        self._fill()
        return super().__len__()

    def __contains__(self, key: object) -> bool:
        self._fill()
        return super().__contains__(key)

    def __eq__(self, other: object) -> bool:
        self._fill()
        if isinstance(other, ByDisease):
            other._fill()
        return super().__eq__(other)

    __hash__ = None

    def __repr__(self) -> str:
        self._fill()
        return super().__repr__()

    def get(self, key: str, default: Any = None) -> Any:
        self._fill()
        return super().get(key, default)

    def items(self) -> "dict_items[str, Any]":
        self._fill()
        return super().items()

    def keys(self) -> "dict_keys[str, Any]":
        self._fill()
        return super().keys()

    def values(self) -> "dict_values[str, Any]":
        self._fill()
        return super().values()


def _by_disease(tables: dict[str, QuestionData], diseases: Subgroups) -> dict[str, dict[str, Any]]:
    """Question -> disease -> the judge against the reference among that disease's cases:
    every question of a disease from one resampling of its source images."""
    references = {q: [value for value, _ in table.reference()] for q, table in tables.items()}
    found: dict[str, dict[str, Any]] = {q: {} for q in tables}
    for disease, (where, subgroup) in diseases.items():
        pairs = compare_many([([table.judge[i] for i in where], [references[q][i] for i in where])
                              for q, table in tables.items()], subgroup, SUBGROUP_FIGURES)
        for q, pair in zip(tables, pairs, strict=True):
            found[q][disease] = pair.as_dict()
    return found


def intra_reader(reads: Sequence[Read], cases: Sequence[Case],
                 resamples: int) -> dict[str, dict[str, Comparison]]:
    """Each reader's first read against their hidden repeat of the same case."""
    first = first_reads(reads)
    by_item = {c.item_id: c for c in cases}
    repeats = [r for r in reads if r.repeat and r.item_id in by_item and (r.reader, r.item_id) in first]
    found: dict[str, dict[str, Comparison]] = {}
    for name in sorted({r.reader for r in repeats}):
        mine = [r for r in repeats if r.reader == name]
        boot = ClusterBootstrap([by_item[r.item_id].cluster for r in mine], resamples=resamples)
        pairs = compare_many([([vote(first[(name, r.item_id)].answers[q]) for r in mine],
                               [vote(r.answers[q]) for r in mine]) for q in QUESTIONS], boot)
        found[name] = {q: pair.as_dict() for q, pair in zip(QUESTIONS, pairs, strict=True)}
    return found


def _judge_b(data: StudyReads, cases: Sequence[Case], readers: Sequence[str],
             reads: dict[tuple[str, int], Read], boot: ClusterBootstrap) -> dict[str, OtherJudge]:
    """Every other judge against the same reference: labelled, and never mixed into the
    frozen judge's figures."""
    found: dict[str, OtherJudge] = {}
    for label, verdicts in sorted(data.judge_b.items()):
        pairs = compare_many([([verdicts.get(c.item_id, {}).get(q) for c in cases],
                               [value for value, _ in question_data(
                                   cases, readers, reads, data.decisions, q).reference()])
                              for q in QUESTIONS], boot)
        found[label] = OtherJudge(sum(1 for c in cases if c.item_id in verdicts),
                                  {q: pair.as_dict() for q, pair in zip(QUESTIONS, pairs, strict=True)})
    return found


def study_report(data: StudyReads, scope: Slice = Slice(), *, resamples: int = RESAMPLES,
                 primary: str = "overall", margin: float = EQUIVALENCE_MARGIN) -> AgreementReport:
    cases = [c for c in data.cases if scope.admits(c)]
    reads = first_reads(data.reads)
    boot = ClusterBootstrap([c.cluster for c in cases], resamples=resamples,
                            weights=[c.weight for c in cases])
    tables = {q: question_data(cases, data.readers, reads, data.decisions, q) for q in QUESTIONS}
    pending = _Pending(tables, cases, resamples)
    questions = {q: question_report(tables[q], boot, ByDisease(pending, q), margin) for q in QUESTIONS}
    secondary = [q for q in QUESTIONS if q != primary]
    return AgreementReport(
        slice=scope.as_dict(),
        n_cases=len(cases),
        readers=list(data.readers),
        intervals=Intervals(method=METHOD, unit="source image", resamples=resamples, seed=SEED,
                            confidence=CONFIDENCE, clusters=boot.k,
                            warning=(f"few clusters ({boot.k} source images): intervals "
                                     "unreliable" if boot.k < FEW_CLUSTERS else None)),
        multiplicity=Multiplicity(
            primary=primary, secondary=secondary,
            method="Holm, over the secondary questions' clustered McNemar p-values",
            adjusted_p=holm_adjusted({q: questions[q].judge_vs_reference["mcnemar_clustered_p"]
                                      for q in secondary})),
        questions=questions,
        intra_reader=intra_reader(data.reads, cases, resamples),
        judge_b=_judge_b(data, cases, data.readers, reads, boot),
    )
