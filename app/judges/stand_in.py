"""Can each judge on a leaderboard stand in for one of the reference's readers? The
alternative annotator test (app/agreement/alternative_annotator.py; Calderon, Reichart & Dror, ACL 2025)
for the judge of record and every single candidate scored on the reference, on one question.

Each judge's first answer to each edit (repeat 0, the images in their usual order) is set
against the readers' first reads of every edit of the reference, settled or not: the test's
reference is the other readers' answers, not their settled majority. Panels are left out: a
panel is made of judges already tested here.
"""

from dataclasses import dataclass

from sqlalchemy import select
from sqlmodel import Session, col

from app.agreement.alternative_annotator import AltTest, alt_test
from app.agreement.judge_as_reader import KappaZ, first_votes, kappa_z
from app.judges.candidates import candidate_names
from app.judges.leaderboard import RECORD
from app.judges.models import CandidateVerdict
from app.judges.reference import Reference


@dataclass(frozen=True)
class StandIn:
    name: str
    test: AltTest
    kappa: KappaZ  # its mean kappa with the readers, as a z-score of theirs among themselves


def stand_ins(session: Session, loaded: Reference, question: str, epsilon: float) -> list[StandIn]:
    """The judge of record first, then each candidate by name."""
    readers = first_votes(loaded.data, question)
    items = {c.item_id for c in loaded.data.cases}
    record = {c.item_id: c.judge[question] for c in loaded.data.cases
              if c.judge.get(question) is not None}
    found = [StandIn(RECORD, alt_test(readers, record, epsilon=epsilon), kappa_z(readers, record))]
    column = col(getattr(CandidateVerdict, "qualified" if question == "overall" else question))
    answers: dict[int, dict[int, bool]] = {}
    for candidate_id, item_id, value in session.connection().execute(
            select(col(CandidateVerdict.candidate_id), col(CandidateVerdict.item_id), column)
            .where(col(CandidateVerdict.study_id).in_(loaded.study_ids),
                   col(CandidateVerdict.repeat) == 0, col(CandidateVerdict.original_first).is_(False),
                   col(CandidateVerdict.error).is_(None))
            .order_by(col(CandidateVerdict.id))):
        if item_id in items and value is not None:
            answers.setdefault(candidate_id, {}).setdefault(item_id, bool(value))
    names = candidate_names(session, sorted(answers))
    for candidate_id in sorted(answers, key=lambda i: names.get(i, "")):
        found.append(StandIn(names.get(candidate_id, f"candidate {candidate_id}"),
                             alt_test(readers, answers[candidate_id], epsilon=epsilon),
                             kappa_z(readers, answers[candidate_id])))
    return found
