"""Practice studies, and the qualification a study may require of its readers.

A practice study is a rubric study whose every case is a known-answer case. After each answer
the reader is shown the settled answer, the other readers' answers on the edit and the judge's
reasons, and may read the definitions again; the figures never see it (all its items are
known-answer cases). A study may require each reader to reach an agreement with the settled
answers in a practice study first: at least ``threshold`` of the first ``min_cases`` cases
read, judged on the estimate or on the lower bound of its exact 95 % interval, the case as the
unit (each reader's standing, and who qualified: app/readers/qualification.py).
"""

import json
import random
import secrets
from dataclasses import asdict, dataclass
from typing import Literal

from sqlalchemy import func, select
from sqlmodel import Session, col

from app.errors import Invalid
from app.models import Role, User
from app.studies.design_traits import default_design
from app.studies.known_answers import draw_known
from app.studies.models import Answer, Assignment, Reveal, Study, StudyItem
from app.studies.practice_apart import unread_images
from app.studies.reader_models import KnownAnswer
from app.studies.study_rows import known_rows, write_items_and_worklists
from app.studies.viewer_tools import VIEWER_TOOLS, tools_json

MAX_PRACTICE = 500


def create_practice(session: Session, *, name: str, cases: int, reader_ids: list[int],
                    created_by: User, seed: int = 42) -> Study:
    """A practice study of ``cases`` settled edits, every reader reading all of them."""
    if not name.strip() or len(name) > 200:
        raise Invalid("give the practice study a name of at most 200 characters", field="name")
    if not 1 <= cases <= MAX_PRACTICE:
        raise Invalid(f"a practice study needs between 1 and {MAX_PRACTICE} cases", field="cases")
    if not reader_ids:
        raise Invalid("tick at least one reader", field="readers")
    readers = [session.get(User, uid) for uid in set(reader_ids)]
    if any(r is None or r.role != Role.reader for r in readers):
        raise Invalid("every assigned account must exist and be a reader", field="readers")
    if session.scalars(select(Study).where(col(Study.name) == name.strip())).first():
        raise Invalid(f"a study named {name.strip()!r} exists already", field="name")
    # Nothing a reader still has to read elsewhere: the practice would show its answer.
    waiting = set().union(*unread_images(session, reader_ids).values())
    try:
        drawn = draw_known(session, cases, seed, (), set(), leave_out_images=waiting)
    except Invalid as error:
        raise Invalid(str(error), field="cases") from error
    assert created_by.id is not None
    kind = default_design().value  # a practice reads judged edits with the rubric
    study = Study(name=name.strip(), design=kind, practice=True,
                  reveal=Reveal.after_submit.value, blinded=True, images_ready=False, seed=seed,
                  selection=json.dumps({"practice": True, "cases": cases, "seed": seed,
                                        "design": kind, "filter": {},
                                        "strata_facets": [], "per_stratum": {}, "pool": {},
                                        "total": cases}, sort_keys=True),
                  created_by=created_by.id, order_secret=secrets.token_hex(16),
                  viewer_tools=tools_json(tuple(VIEWER_TOOLS), single_image=False))
    session.add(study)
    session.flush()
    write_items_and_worklists(session, study, known_rows(session, drawn.answers),
                              sorted(set(reader_ids)))
    session.commit()
    session.refresh(study)
    return study


def practice_studies(session: Session) -> list[Study]:
    return list(session.scalars(select(Study).where(col(Study.practice).is_(True))
                                .order_by(col(Study.id))))


@dataclass(frozen=True)
class Requirement:
    practice_id: int
    threshold: float
    min_cases: int
    on: Literal["estimate", "lower_bound"] = "estimate"

    def as_json(self) -> str:
        return json.dumps(asdict(self), sort_keys=True)

    @property
    def wording(self) -> str:
        bar = ("agreement" if self.on == "estimate"
               else "the lower bound of the 95 % interval of agreement")
        return (f"{bar} of at least {self.threshold:.0%} with the settled answers, decided on "
                f"the first {self.min_cases} practice cases read (a case agrees when every "
                "settled answer of it is matched)")


def requirement_of(study: Study) -> Requirement | None:
    return Requirement(**json.loads(study.qualification)) if study.qualification else None


def check_requirement(session: Session, practice_id: int, threshold: float, min_cases: int,
                      on: str) -> Requirement:
    """The requirement, or Invalid naming the field that is wrong."""
    practice = session.get(Study, practice_id)
    if practice is None or not practice.practice:
        raise Invalid(f"no practice study with id {practice_id}", field="qualify_practice")
    if not 0 <= threshold <= 1:
        raise Invalid(f"the agreement asked must be between 0 and 1 (not {threshold:g})",
                      field="qualify_threshold")
    if on not in ("estimate", "lower_bound"):
        raise Invalid("judge it on the estimate or on the lower bound", field="qualify_on")
    cases = int(session.scalar(select(func.count()).select_from(StudyItem).where(
        col(StudyItem.study_id) == practice_id)) or 0)
    if cases == 0:
        raise Invalid(f"practice study {practice.name!r} has no cases", field="qualify_practice")
    if not 1 <= min_cases <= cases:
        raise Invalid(f"practice study {practice.name!r} has {cases} cases: ask for between 1 "
                      f"and {cases}", field="qualify_cases")
    return Requirement(practice_id, threshold, min_cases, on)  # type: ignore[arg-type]


def practice_feedback(session: Session, item: StudyItem, reader_id: int) -> dict[str, object]:
    """What a practice case shows once answered: the settled answer and how it was settled,
    the other readers' answers on the edit (in the study that settled it, and in this
    practice), and the judge's verdict with its reasons."""
    from app.models import JudgeVerdict

    known = session.get(KnownAnswer, item.known_answer_id) if item.known_answer_id else None
    verdict = session.get(JudgeVerdict, item.judge_verdict_id) if item.judge_verdict_id else None
    others: list[dict[str, str]] = []
    if known is not None and known.study_id is not None:
        others += _answers_on(session, known.study_id, item.attempt_id, reader_id)
    others += _answers_on(session, item.study_id, item.attempt_id, reader_id)
    return {
        "settled": known.settled() if known else {},
        "how": known.source if known else None,
        "note": known.note if known else "",
        "others": others,
        "judge": None if verdict is None or verdict.qualified is None else {
            "accepts": bool(verdict.qualified), "reason": verdict.reason or "",
            "dimensions": {d: getattr(verdict, d) for d in ("compliance", "structure", "realism",
                                                            "fidelity")}},
    }


def _answers_on(session: Session, study_id: int, attempt_id: int, reader_id: int) -> list[dict[str, str]]:
    """Other readers' first answers on this edit in one study (not the reader's own)."""
    first = (select(col(Answer.assignment_id), func.min(Answer.version).label("version"))
             .join(Assignment, col(Assignment.id) == Answer.assignment_id)
             .join(StudyItem, col(StudyItem.id) == Assignment.item_id)
             .where(col(Assignment.study_id) == study_id, col(StudyItem.attempt_id) == attempt_id,
                    col(Assignment.user_id) != reader_id, col(Assignment.repeat_of).is_(None),
                    col(Answer.after_reveal).is_(False))
             .group_by(col(Answer.assignment_id)).subquery())
    answers = session.scalars(select(Answer).join(
        first, (first.c.assignment_id == Answer.assignment_id) & (first.c.version == Answer.version))
        .order_by(col(Answer.id))).all()
    return [{q: getattr(a, q) for q in ("compliance", "structure", "realism", "fidelity", "overall")}
            for a in answers if not a.retracted]


def enrol(session: Session, practice: Study, user_ids: list[int]) -> int:
    """Give readers who are not yet in the practice study its cases, in an order of their own
    (within the caller's transaction); how many were added."""
    from app.studies.models import StudyReader

    present = set(session.scalars(select(col(StudyReader.user_id)).where(
        col(StudyReader.study_id) == practice.id)))
    items = sorted(int(i or 0) for i in session.scalars(select(col(StudyItem.id)).where(
        col(StudyItem.study_id) == practice.id)))
    added = 0
    for user_id in sorted(set(user_ids) - present):
        seed = random.Random(f"{practice.order_secret}:reader:{user_id}").randrange(2**31)
        order = list(items)
        random.Random(seed).shuffle(order)
        session.add(StudyReader(study_id=practice.id or 0, user_id=user_id, order_seed=seed))
        for sequence, item_id in enumerate(order, start=1):
            session.add(Assignment(study_id=practice.id or 0, user_id=user_id, item_id=item_id,
                                   sequence=sequence))
        added += 1
    session.flush()
    return added
