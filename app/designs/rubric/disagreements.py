"""Where the judge and the reference differ, or the readers differ among themselves: the
queue an admin works through, and the cases an adjudicator must settle."""

from dataclasses import dataclass
from typing import Any

from sqlmodel import Session

from app.agreement.reads import Case, Read, StudyReads, load, vote
from app.agreement.reference import Decided, Policy, consensus
from app.agreement.report import first_reads
from app.agreement.stats import Vote, pass_fail
from app.models import Attempt, Task
from app.studies.adjudication import item_by_uid, latest_decisions
from app.studies.models import Adjudication, Study, StudyItem
from pipeline.vocabulary import QUESTIONS

KINDS = ("judge", "readers")
READERS_ONLY = Policy(use_adjudication=False)


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
    questions: list[str]  # what the readers left tied (or all found impossible to assess)
    decided: bool  # the adjudicator has recorded a decision for this case
    unread: tuple[str, ...]  # assigned readers who have not read the case


def csv_rows(found: list[Disagreement]) -> list[dict[str, object]]:
    """Cases x questions as disagreements.csv and reference.csv write them."""
    return [{"case": r.case.uid, "task": r.case.task_key, "modality": r.case.modality,
             "disease": r.case.disease, "direction": r.case.direction, "round": r.case.round,
             "question": r.question, **{f"reader:{n}": a for n, a in r.answers.items()},
             "judge": pass_fail(r.judge), "reference": pass_fail(r.reference),
             "decided": r.decided.value, "judge_differs": r.judge_differs,
             "readers_differ": r.readers_differ} for r in found]


def to_adjudicate(data: StudyReads) -> list[ToSettle]:
    """Cases with a question the readers' reads so far leave open: a tie, or only "cannot
    assess". A case is offered as soon as one reader has read it and it is open, even if an
    assigned reader has not read it (and may never): a decision only counts while the tie
    stands, so a later read that breaks the tie makes it moot."""
    reads = first_reads(data.reads)
    found = []
    for case in data.cases:
        read_by = [n for n in data.readers if (n, case.item_id) in reads]
        if not read_by:
            continue
        open_questions = [q for q in QUESTIONS if not consensus(
            [vote(reads[(n, case.item_id)].answers[q]) for n in read_by], None,
            READERS_ONLY)[1].resolved]
        if open_questions:
            unread = tuple(n for n in case.assigned if n not in read_by)
            found.append(ToSettle(case, open_questions, case.item_id in data.decisions, unread))
    return found


@dataclass(frozen=True)
class AdjudicationScreen:
    """One case on the adjudicator's screen: the readers' first reads, what they left open,
    the decision in force, and the values the form starts from."""

    item: StudyItem
    earlier: list[Read]
    open_questions: list[str]
    decision: Adjudication | None
    instruction: str
    modality: str
    given: dict[str, Any]


def adjudication_screen(session: Session, study: Study, uid: str) -> AdjudicationScreen:
    item = item_by_uid(session, study, uid)
    data = load(session, study)
    reads = first_reads(data.reads)
    key = item.id or 0
    earlier = [reads[(name, key)] for name in data.readers if (name, key) in reads]
    attempt = session.get(Attempt, item.attempt_id)
    task = session.get(Task, item.task_id)
    decision = latest_decisions(session, study).get(key)
    open_questions = next((c.questions for c in to_adjudicate(data) if c.case.item_id == key), [])
    given = ({q: getattr(decision, q) for q in (*QUESTIONS, "comment")} if decision else {})
    return AdjudicationScreen(item, earlier, open_questions, decision,
                              attempt.instruction or "" if attempt else "",
                              task.modality if task else "", given)
