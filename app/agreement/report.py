"""Every agreement figure of a study, for one slice of its cases, as one JSON-ready dict.

Per question (the four dimensions and the overall verdict): the reference standard and how
each case was decided; the judge against the reference (with cluster-bootstrap intervals)
and against each reader; each reader against the consensus of the others; agreement among
the readers; and, from the repeat reads, each reader against themself. Every figure carries
its n, and the "cannot assess" and missing counts beside it.
"""

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

from app.agreement.bootstrap import RESAMPLES, SEED, agreement_of, cluster_interval, kappa_of
from app.agreement.readers import among_readers
from app.agreement.reads import CANNOT_ASSESS, QUESTIONS, Case, Read, StudyReads, vote
from app.agreement.reference import Decided, consensus, leave_one_out
from app.agreement.stats import Vote, compare


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


def first_reads(reads: Sequence[Read]) -> dict[tuple[str, int], Read]:
    return {(r.reader, r.item_id): r for r in reads if not r.repeat}


def question_report(cases: Sequence[Case], readers: Sequence[str],
                    reads: dict[tuple[str, int], Read], question: str,
                    *, resamples: int = RESAMPLES,
                    decisions: dict[int, dict[str, str]] | None = None) -> dict[str, object]:
    answers = {name: [reads[(name, c.item_id)].answers[question] if (name, c.item_id) in reads
                      else None for c in cases] for name in readers}
    votes = {name: [vote(a) for a in given] for name, given in answers.items()}
    by_case = list(zip(*(votes[name] for name in readers), strict=True)) if readers else []
    settled = [vote((decisions or {}).get(c.item_id, {}).get(question)) for c in cases]
    decided = [consensus(case_votes, adjudicated)
               for case_votes, adjudicated in zip(by_case, settled, strict=True)]
    reference: list[Vote] = [value for value, _ in decided]
    judge: list[Vote] = [c.judge.get(question) for c in cases]
    clusters = [c.source_image_id if c.source_image_id is not None else f"task-{c.task_id}"
                for c in cases]
    versus_reference = compare(judge, reference)
    return {
        "n_cases": len(cases),
        "reference": {"decided": {d.value: sum(1 for _, how in decided if how is d)
                                  for d in Decided}},
        "judge_missing": sum(1 for j in judge if j is None),
        "judge_vs_reference": versus_reference.as_dict() | {"bootstrap": {
            "agreement": cluster_interval(judge, reference, clusters, agreement_of,
                                          resamples=resamples).as_dict(),
            "kappa": cluster_interval(judge, reference, clusters, kappa_of,
                                      resamples=resamples).as_dict()}},
        "judge_vs_reader": {name: compare(judge, votes[name]).as_dict() for name in readers},
        "reader_vs_others": {name: compare(votes[name], [
            leave_one_out(case_votes, i, adjudicated)
            for case_votes, adjudicated in zip(by_case, settled, strict=True)]).as_dict()
            for i, name in enumerate(readers)} if len(readers) > 1 else {},
        "among_readers": among_readers(votes).as_dict() if len(readers) > 1 else None,
        "by_disease": {disease: compare([judge[i] for i in where], [reference[i] for i in where]).as_dict()
                       for disease, where in _groups(cases, "disease").items()},
        "cannot_assess": {name: Counter(answers[name])[CANNOT_ASSESS] for name in readers},
        "missing": {name: sum(1 for a in answers[name] if a is None) for name in readers},
    }


def _groups(cases: Sequence[Case], attribute: str) -> dict[str, list[int]]:
    found: dict[str, list[int]] = {}
    for i, case in enumerate(cases):
        found.setdefault(str(getattr(case, attribute)), []).append(i)
    return dict(sorted(found.items()))


def intra_reader(reads: Sequence[Read], admitted: set[int]) -> dict[str, dict[str, object]]:
    """Each reader's first read against their hidden repeat of the same case."""
    first = first_reads(reads)
    repeats = [r for r in reads if r.repeat and r.item_id in admitted and (r.reader, r.item_id) in first]
    found: dict[str, dict[str, object]] = {}
    for name in sorted({r.reader for r in repeats}):
        mine = [r for r in repeats if r.reader == name]
        found[name] = {q: compare([vote(first[(name, r.item_id)].answers[q]) for r in mine],
                                  [vote(r.answers[q]) for r in mine]).as_dict() for q in QUESTIONS}
    return found


def study_report(data: StudyReads, scope: Slice = Slice(), *,
                 resamples: int = RESAMPLES) -> dict[str, object]:
    cases = [c for c in data.cases if scope.admits(c)]
    reads = first_reads(data.reads)
    return {
        "slice": scope.as_dict(),
        "n_cases": len(cases),
        "readers": list(data.readers),
        "bootstrap": {"resamples": resamples, "seed": SEED, "unit": "source image",
                      "method": "BCa, percentile when BCa degenerates (scipy.stats.bootstrap)"},
        "questions": {q: question_report(cases, data.readers, reads, q, resamples=resamples,
                                         decisions=data.decisions)
                      for q in QUESTIONS},
        "intra_reader": intra_reader(data.reads, {c.item_id for c in cases}),
    }
