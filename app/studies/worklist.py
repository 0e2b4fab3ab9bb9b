"""A reader's worklist and the blinded view of one read.

The view carries what a reader may see before answering: the images by opaque uid, the
instruction and the modality. Never the judge, the outcome, the round, a file name or an id
that leads to them. After the answer, a study may reveal the judge's verdict.
"""

import json
import secrets
from dataclasses import dataclass

from sqlalchemy import Select, func, select
from sqlmodel import Session, col

from app.errors import Forbidden, NotFound
from app.models import Attempt, JudgeVerdict, Task, User
from app.studies.answers import latest_answer, load_draft
from app.studies.models import Answer, Assignment, Reveal, Study, StudyItem, StudyReader, answer_table
from app.studies.practice import practice_feedback
from app.studies.reader_instruction import reader_instruction
from app.studies.viewer_tools import VIEWER_TOOLS, tools_of
from pipeline.vocabulary import DIMENSIONS, QUESTIONS


class NotAssigned(Forbidden):
    pass


@dataclass(frozen=True)
class Progress:
    done: int
    total: int


@dataclass
class ReadView:
    study: Study
    assignment: Assignment
    progress: Progress
    uid: str
    instruction: str | None  # None: the study hides instructions from its readers
    modality: str
    answer: Answer | None
    draft: dict[str, object] | None
    reveal: dict[str, object] | None
    next_uid: str | None
    next_sequence: int | None
    previous_sequence: int | None  # the reader may go back to see or change an answer
    tools: tuple[str, ...]  # the image tools the study gives its readers
    # The reader's own versions of this answer, oldest first (edits and undos included).
    history: list[Answer]

    def form_state(self) -> dict[str, object]:
        """What the form shows: the unsent draft, else the answer in force, else nothing."""
        if self.draft:
            return self.draft
        if self.answer:
            fields = (*QUESTIONS, "confidence", "comment", "tool_use")
            return {**{f: getattr(self.answer, f) for f in fields},
                    "tags": json.loads(self.answer.tags), "roi": self.answer.roi or ""}
        return {}

    def submission_id(self) -> str:
        """Kept in the draft, so a submit retried after a reload is still stored once."""
        kept = (self.draft or {}).get("submission_id")
        return kept if isinstance(kept, str) else secrets.token_urlsafe(18)


def _answered(study: Study, user_id: int | None = None) -> Select[int | None]:
    """Assignments whose newest answer version is not a retraction."""
    table = answer_table(study)
    newest = (select(col(table.retracted)).where(col(table.assignment_id) == Assignment.id)
              .order_by(col(table.version).desc()).limit(1).scalar_subquery())
    query = select(col(Assignment.id)).where(col(Assignment.study_id) == study.id,
                                             newest.is_(False))
    return query.where(col(Assignment.user_id) == user_id) if user_id is not None else query


def reader_progress(session: Session, study: Study, user_id: int) -> Progress:
    total = session.scalar(select(func.count()).select_from(Assignment).where(
        col(Assignment.study_id) == study.id, col(Assignment.user_id) == user_id)) or 0
    done = session.scalar(select(func.count()).select_from(_answered(study, user_id).subquery()))
    return Progress(int(done or 0), int(total))


def study_progress(session: Session, study: Study) -> list[tuple[User, Progress]]:
    assert study.id is not None
    readers = session.scalars(select(User).join(StudyReader, col(StudyReader.user_id) == User.id)
                              .where(col(StudyReader.study_id) == study.id).order_by(col(User.name)))
    return [(u, reader_progress(session, study, u.id or 0)) for u in readers]


def reads_so_far(session: Session, study: Study) -> Progress:
    """Reads done and planned over every reader: what an interim label states."""
    progress = [p for _, p in study_progress(session, study)]
    return Progress(sum(p.done for p in progress), sum(p.total for p in progress))


def all_studies(session: Session) -> list[tuple[Study, list[tuple[User, Progress]]]]:
    """Every study, newest first, with each reader's progress."""
    return [(s, study_progress(session, s))
            for s in session.scalars(select(Study).order_by(col(Study.id).desc()))]


def studies_of(session: Session, user: User) -> list[tuple[Study, Progress]]:
    query = (select(Study).join(StudyReader, col(StudyReader.study_id) == Study.id)
             .where(col(StudyReader.user_id) == user.id).order_by(col(Study.id)))
    return [(s, reader_progress(session, s, user.id or 0)) for s in session.scalars(query)]


def get_study(session: Session, study_id: int) -> Study:
    study = session.get(Study, study_id)
    if study is None:
        raise NotFound(f"no study with id {study_id}")
    return study


def get_assignment(session: Session, study: Study, user: User, sequence: int) -> Assignment:
    if not is_reader(session, study, user):
        raise NotAssigned(f"{user.name} is not a reader of study {study.name!r}")
    found = session.scalars(select(Assignment).where(
        col(Assignment.study_id) == study.id, col(Assignment.user_id) == user.id,
        col(Assignment.sequence) == sequence)).first()
    if found is None:
        raise NotFound(f"study {study.name!r} has no case {sequence} for {user.name}")
    return found


def study_reader(session: Session, study: Study, user_id: int) -> User:
    """A reader of the study, by id."""
    user = session.get(User, user_id)
    if user is None or not is_reader(session, study, user):
        raise NotFound(f"no reader with id {user_id} in this study")
    return user


def is_reader(session: Session, study: Study, user: User) -> bool:
    return session.scalars(select(StudyReader).where(
        col(StudyReader.study_id) == study.id, col(StudyReader.user_id) == user.id)).first() is not None


def next_open(session: Session, study: Study, user: User) -> Assignment | None:
    done = _answered(study, user.id)
    return session.scalars(select(Assignment).where(
        col(Assignment.study_id) == study.id, col(Assignment.user_id) == user.id,
        col(Assignment.id).not_in(done)).order_by(col(Assignment.sequence)).limit(1)).first()


def read_for_reader(session: Session, study: Study, user: User, uid: str) -> tuple[Assignment, StudyItem]:
    """The read and its item behind an image URL: the uid is the read's own, and only its
    reader may use it."""
    assignment = session.scalars(select(Assignment).where(
        col(Assignment.study_id) == study.id, col(Assignment.uid) == uid)).first()
    if assignment is None:
        raise NotFound("no such image in this study")
    if assignment.user_id != user.id:
        raise NotAssigned("this image belongs to a case you are not assigned")
    item = session.get(StudyItem, assignment.item_id)
    assert item is not None
    return assignment, item


def read_view(session: Session, study: Study, user: User, assignment: Assignment) -> ReadView:
    item = session.get(StudyItem, assignment.item_id)
    attempt = session.get(Attempt, item.attempt_id) if item else None
    task = session.get(Task, item.task_id) if item else None
    assert item is not None and attempt is not None and task is not None and assignment.id
    answer = latest_answer(session, assignment.id)
    following = session.scalars(select(Assignment).where(
        col(Assignment.study_id) == study.id, col(Assignment.user_id) == user.id,
        col(Assignment.sequence) == assignment.sequence + 1)).first()
    return ReadView(
        study=study, assignment=assignment,
        progress=reader_progress(session, study, user.id or 0),
        uid=assignment.uid, modality=task.modality,
        instruction=_instruction_for_readers(session, study, item, task, attempt),
        # Drafts are deleted on submit, so one that exists is newer than the answer: an edit
        # in progress, which a reload must bring back too.
        answer=answer, draft=load_draft(session, assignment.id),
        reveal=_reveal(session, study, item, answer),
        next_uid=following.uid if following else None,
        next_sequence=following.sequence if following else None,
        previous_sequence=assignment.sequence - 1 if assignment.sequence > 1 else None,
        tools=tuple(t for t in VIEWER_TOOLS if t in tools_of(study)),
        history=list(session.scalars(select(Answer).where(
            col(Answer.assignment_id) == assignment.id).order_by(col(Answer.version)))),
    )


def _reader_of(session: Session, answer: Answer) -> int:
    assignment = session.get(Assignment, answer.assignment_id)
    assert assignment is not None
    return assignment.user_id


def _instruction_for_readers(session: Session, study: Study, item: StudyItem, task: Task,
                             attempt: Attempt) -> str | None:
    """None when the study hides instructions; items of studies made before the reader's
    instruction was frozen get it computed the same way."""
    if not study.show_instructions:
        return None
    return item.reader_instruction or reader_instruction(session, task, attempt)


def _reveal(session: Session, study: Study, item: StudyItem,
            answer: Answer | None) -> dict[str, object] | None:
    """After an answer, and only if the study says so: the verdict the study compares with
    (frozen on the item), never a later re-judgement."""
    if answer is None or study.reveal != Reveal.after_submit:
        return None
    if study.practice:
        assert answer.assignment_id is not None
        return {"available": True, "practice": practice_feedback(session, item, _reader_of(session, answer)),
                "given": {q: getattr(answer, q) for q in QUESTIONS}}
    verdict = session.get(JudgeVerdict, item.judge_verdict_id) if item.judge_verdict_id else None
    if verdict is None or verdict.qualified is None:
        return {"available": False}
    judge_accepts = bool(verdict.qualified)
    return {"available": True, "judge_accepts": judge_accepts,
            "agree": judge_accepts == (answer.overall == "accept"),
            "dimensions": {d: getattr(verdict, d) for d in DIMENSIONS},
            "reason": verdict.reason}


def is_known_case(session: Session, assignment: Assignment) -> bool:
    """Whether the read is of a known-answer case (the only reads the pause's test reads)."""
    item = session.get(StudyItem, assignment.item_id)
    return item is not None and item.known_answer_id is not None
