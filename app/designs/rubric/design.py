"""The rubric designs' reading screen and answer: the original beside the edit, the four
questions and the overall verdict, with confidence, tags and a comment. Each variant
(variants.py) samples differently; all read alike."""

from typing import Any

from pydantic import BaseModel
from sqlmodel import Session

from app.designs.base import StudyDesign
from app.models import User
from app.studies import answers
from app.studies.answers import FAILURE_TAGS, AnswerIn
from app.studies.design_traits import DesignTraits
from app.studies.models import Assignment, Study
from app.studies.worklist import read_view


class RubricDesign(StudyDesign):
    reading_template = "studies/reading/read.html"
    answer_model = AnswerIn

    def __init__(self, traits: DesignTraits) -> None:
        self.traits = traits

    def screen(self, session: Session, study: Study, user: User, assignment: Assignment, *,
               typed: dict[str, Any] | None = None, errors: dict[str, str] | None = None,
               instructions_due: bool = False) -> dict[str, Any]:
        view = read_view(session, study, user, assignment)
        if typed is not None:
            view.draft = typed
        return {"view": view, "tags": FAILURE_TAGS, "errors": errors or {},
                "instructions_due": instructions_due}

    def submit(self, session: Session, study: Study, assignment: Assignment,
               answer: BaseModel) -> None:
        assert isinstance(answer, AnswerIn)
        answers.submit_answer(session, study, assignment, answer)

    def undo_last(self, session: Session, study: Study, user_id: int) -> Assignment | None:
        return answers.undo_last(session, study, user_id)

    def after_submit(self, study: Study, sequence: int) -> str | None:
        # Revealed after each answer: the reader stays to see the judge's verdict.
        if study.reveal == "after_submit":
            return f"/read/{study.id}/{sequence}"
        return None
