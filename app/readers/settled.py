"""The settled pool of known-answer cases: filled from locked studies, and by an admin.

An edit's answer to a question is settled when every reader of a locked study gave it (at
least two readers, none of them "cannot assess"), or when the study's adjudicator decided it.
Only edits whose accept / reject is settled join the pool: a case must have an answer to the
question every reader is scored on first. A majority of three is not settled here, though
the figures count it as the readers' consensus: a check on one reader must not rest on two
others who might share their mistake.
"""

import json
import logging

from sqlalchemy import select
from sqlmodel import Session, col

from app.agreement.reads import load, vote
from app.errors import Conflict, Invalid, NotFound
from app.models import Attempt, User, utcnow
from app.studies.design_traits import rubric_kinds
from app.studies.models import Design, Study, StudyItem, StudyStatus
from app.studies.reader_models import KnownAnswer, Settled
from pipeline.vocabulary import QUESTIONS

log = logging.getLogger(__name__)


def settled_answers(session: Session, study: Study) -> dict[int, tuple[Settled, dict[str, str]]]:
    """Item id -> how it was settled and its settled answers, for a rubric study's cases."""
    data = load(session, study)
    given: dict[int, list[dict[str, str]]] = {}
    for read in data.reads:
        if not read.repeat:
            given.setdefault(read.item_id, []).append(read.answers)
    found: dict[int, tuple[Settled, dict[str, str]]] = {}
    for case in data.cases:
        decided = {q: a for q, a in data.decisions.get(case.item_id, {}).items()
                   if vote(a) is not None}
        answers = given.get(case.item_id, [])
        unanimous = {q: answers[0][q] for q in QUESTIONS
                     if len(answers) >= 2 and vote(answers[0][q]) is not None
                     and all(a[q] == answers[0][q] for a in answers)}
        if "overall" in decided:
            found[case.item_id] = (Settled.adjudicated, unanimous | decided)
        elif "overall" in unanimous:
            found[case.item_id] = (Settled.unanimous, unanimous)
    return found


def settle_from(session: Session, study: Study) -> int:
    """Add a locked study's settled edits to the pool (none already in it); how many."""
    if study.status != StudyStatus.locked:
        raise Conflict(f"study {study.name!r} is not locked: its answers may still change")
    if not Design(study.design).rubric:
        return 0
    found = settled_answers(session, study)
    attempt_of: dict[int, int] = dict(session.execute(select(
        col(StudyItem.id), col(StudyItem.attempt_id)).where(col(StudyItem.study_id) == study.id)).all())
    pooled = set(session.scalars(select(col(KnownAnswer.attempt_id)).where(
        col(KnownAnswer.retired_at).is_(None))))
    added = 0
    for item_id, (how, answers) in sorted(found.items()):
        attempt = attempt_of[item_id]
        if attempt in pooled:
            continue
        pooled.add(attempt)
        session.add(KnownAnswer(attempt_id=attempt, answers=json.dumps(answers, sort_keys=True),
                                source=how.value, study_id=study.id))
        added += 1
    session.commit()
    log.info("study %s added %d settled edits to the known-answer pool", study.id, added)
    return added


def mark(session: Session, attempt_id: int, answers: dict[str, str], user: User,
         note: str = "") -> KnownAnswer:
    """An admin marks an edit as unmistakable, with its answer to each question they settle
    (accept / reject at least); it replaces the edit's settled answer in force."""
    if session.get(Attempt, attempt_id) is None:
        raise NotFound(f"no edit with id {attempt_id}")
    settled = {q: a for q, a in answers.items() if a}
    unknown = [q for q, a in settled.items() if q not in QUESTIONS or vote(a) is None
               or (q == "overall") != (a in ("accept", "reject"))]
    if unknown:
        raise Invalid(f"answer {', '.join(unknown)} with yes / no (accept / reject for overall)",
                      field=unknown[0])
    if "overall" not in settled:
        raise Invalid("settle accept or reject at least: every reader is scored on it",
                      field="overall")
    for earlier in session.scalars(select(KnownAnswer).where(
            col(KnownAnswer.attempt_id) == attempt_id, col(KnownAnswer.retired_at).is_(None))):
        earlier.retired_at = utcnow()
        session.add(earlier)
    known = KnownAnswer(attempt_id=attempt_id, answers=json.dumps(settled, sort_keys=True),
                        source=Settled.marked.value, marked_by=user.id, note=note.strip()[:2000])
    session.add(known)
    session.commit()
    session.refresh(known)
    return known


def retire(session: Session, known_id: int) -> None:
    """Take a settled answer out of the pool; the studies drawn with it keep it."""
    known = session.get(KnownAnswer, known_id)
    if known is None:
        raise NotFound(f"no known answer {known_id}")
    if known.retired_at is None:
        known.retired_at = utcnow()
        session.add(known)
        session.commit()


def settle_all(session: Session) -> int:
    """Every locked rubric study's settled edits (for studies locked before the pool was kept)."""
    studies = session.scalars(select(Study).where(col(Study.status) == StudyStatus.locked,
                                                  col(Study.design).in_(rubric_kinds()))
                              .order_by(col(Study.id)))
    return sum(settle_from(session, s) for s in list(studies))
