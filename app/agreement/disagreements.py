"""Where the judge and the reference differ, or the readers differ among themselves: the
queue an admin works through, and the cases an adjudicator must settle."""

from dataclasses import dataclass

from app.agreement.reads import QUESTIONS, Case, StudyReads, vote
from app.agreement.reference import Decided, consensus
from app.agreement.report import first_reads
from app.agreement.stats import Vote

KINDS = ("judge", "readers")


@dataclass(frozen=True)
class Disagreement:
    case: Case
    question: str
    answers: dict[str, str]  # reader -> answer as given ("" when not read)
    judge: Vote
    reference: Vote
    decided: Decided
    judge_differs: bool
    readers_differ: bool


def case_rows(data: StudyReads) -> list[Disagreement]:
    """Every case x question with its reference and how it was decided."""
    reads = first_reads(data.reads)
    found = []
    for case in data.cases:
        for question in QUESTIONS:
            answers = {name: reads[(name, case.item_id)].answers[question]
                       if (name, case.item_id) in reads else "" for name in data.readers}
            votes = [vote(a) for a in answers.values()]
            settled = vote(data.decisions.get(case.item_id, {}).get(question))
            reference, decided = consensus(votes, settled)
            judge = case.judge.get(question)
            cast = {v for v in votes if v is not None}
            found.append(Disagreement(
                case=case, question=question, answers=answers, judge=judge,
                reference=reference, decided=decided,
                judge_differs=judge is not None and reference is not None and judge != reference,
                readers_differ=len(cast) > 1))
    return found


def disagreements(data: StudyReads, question: str | None = None,
                  kind: str | None = None) -> list[Disagreement]:
    """Rows where something differs, optionally for one question and one kind."""
    return [row for row in case_rows(data)
            if (question is None or row.question == question)
            and ((kind in (None, "judge") and row.judge_differs)
                 or (kind in (None, "readers") and row.readers_differ))]


@dataclass(frozen=True)
class ToSettle:
    case: Case
    questions: list[str]  # what the readers left unresolved
    decided: bool  # the adjudicator has recorded a decision for this case


def to_adjudicate(data: StudyReads) -> list[ToSettle]:
    """Cases with a question on which the readers reached no majority (ties, or no answer
    but "cannot assess"), once every reader has answered the case."""
    reads = first_reads(data.reads)
    found = []
    for case in data.cases:
        if any((name, case.item_id) not in reads for name in data.readers):
            continue  # still being read: not a tie yet
        open_questions = [q for q in QUESTIONS if consensus(
            [vote(reads[(n, case.item_id)].answers[q]) for n in data.readers])[1] is Decided.unresolved]
        if open_questions:
            found.append(ToSettle(case, open_questions, case.item_id in data.decisions))
    return found
