"""A locked pilot study for the demo data, so that practice, known-answer cases and
qualification can be tried on a fresh demo: without one the settled pool is empty, and each
of them needs settled answers.

Three synthetic pilot readers (demo accounts, never able to sign in) read a validation study
of the demo's chest radiographs. Each answers as the judge's verdict of record says, except
on a fixed one case in ten per reader and question, chosen by a hash, where they differ: so
most cases are unanimous (settled) and a few are not, as in a real pilot. The study is locked
and its settled cases join the known-answer pool. Everything here is labelled as synthetic:
the study's name, its readers' names and their qualification line.
"""

import hashlib
import logging
import secrets

from sqlalchemy import select
from sqlmodel import Session, col

from app.accounts.users import create_user, deactivate_user, find_user
from app.cases.filters import CaseFilter
from app.models import JudgeVerdict, Role, User
from app.readers.settled import settle_from
from app.studies.answers import AnswerIn, submit_answer
from app.studies.design import StudyError, StudyPlan, create_study
from app.studies.models import Assignment, Design, Study, StudyItem
from app.studies.versions import lock_study
from pipeline.vocabulary import QUESTIONS

log = logging.getLogger(__name__)

PILOT_NAME = "Pilot (synthetic demo readers)"
PILOT_READERS = ("pilot-reader-1", "pilot-reader-2", "pilot-reader-3")
PER_STRATUM = 12  # chest radiographs the judge passed, and as many it failed
DIFFER = 0.1  # share of a reader's answers on a question that differ from the verdict


def _differs(reader: str, item_id: int, question: str) -> bool:
    digest = hashlib.blake2b(f"{reader}:{item_id}:{question}".encode(), digest_size=4).digest()
    return int.from_bytes(digest, "big") / 2**32 < DIFFER


def _answer(verdict: JudgeVerdict | None, reader: str, item_id: int, n: int) -> AnswerIn:
    said: dict[str, str] = {}
    for question in QUESTIONS:
        judged = (verdict.qualified if question == "overall" else getattr(verdict, question)
                  ) if verdict is not None else True
        passes = bool(judged) != _differs(reader, item_id, question)
        said[question] = (("accept" if passes else "reject") if question == "overall"
                          else ("yes" if passes else "no"))
    return AnswerIn(**said, confidence=4, time_on_case_ms=30_000,  # type: ignore[arg-type]
                    submission_id=f"pilot-{reader}-{n:05d}")


def _readers(session: Session) -> list[User]:
    found = []
    for name in PILOT_READERS:
        user = find_user(session, name)
        if user is None:
            # A password nobody is told, and the account deactivated: it cannot sign in.
            user = create_user(session=session, name=name, role=Role.reader,
                               password=secrets.token_urlsafe(24), is_demo=True)
            user.qualification = "synthetic demo reader (answers made up)"
            session.add(user)
            session.commit()
        found.append(user)
    return found


def make_pilot(session: Session, admin: User) -> Study | None:
    """The locked pilot study, made once; the existing one when it is there. None when the
    data holds too few judged chest radiographs for it."""
    existing = session.scalars(select(Study).where(col(Study.name) == PILOT_NAME)).first()
    if existing is not None:
        return existing
    readers = _readers(session)
    plan = StudyPlan(name=PILOT_NAME, case_filter=CaseFilter(modality=("chest_xray",)),
                     design=Design.validation, reader_ids=[r.id or 0 for r in readers], seed=7,
                     strata_facets=("verdict",),
                     per_stratum={"pass": PER_STRATUM, "fail": PER_STRATUM})
    try:
        study = create_study(session=session, plan=plan, created_by=admin)
    except StudyError as error:
        log.warning("no demo pilot study: %s", error)
        return None
    rows = session.execute(
        select(Assignment, col(User.name), col(StudyItem.judge_verdict_id))
        .join(StudyItem, col(StudyItem.id) == Assignment.item_id)
        .join(User, col(User.id) == Assignment.user_id)
        .where(col(Assignment.study_id) == study.id).order_by(col(Assignment.id))).all()
    for n, (assignment, name, verdict_id) in enumerate(rows):
        verdict = session.get(JudgeVerdict, verdict_id) if verdict_id else None
        submit_answer(session, study, assignment, _answer(verdict, name, assignment.item_id, n))
    lock_study(session, study)
    settled = settle_from(session, study)
    for user in readers:
        if user.active:
            deactivate_user(session=session, user=user)
    log.info("demo pilot study %r: %d reads, %d settled cases in the known-answer pool",
             study.name, len(rows), settled)
    return study
