"""Real or edited: one image alone, its original or its accepted edit, and the reader says
which, with a confidence and, for "edited", where (answers.py)."""

from collections.abc import Iterator
from typing import Any

from pydantic import BaseModel
from sqlmodel import Session

from app.designs.base import SAMPLE, Link, StudyDesign
from app.designs.real_or_edited import answers
from app.designs.real_or_edited.answers_csv import iter_real_or_edited_answers_csv
from app.models import User
from app.studies.design_traits import Design, DesignTraits, DesignWords
from app.studies.models import Assignment, Study
from app.studies.worklist import reader_progress


class RealOrEditedDesign(StudyDesign):
    # A visual Turing test: one image per sampled source image, its original or its accepted
    # edit, and the reader says which (ratings.py). No judge is compared.
    traits = DesignTraits(
        kind=Design.real_or_edited, rubric=False, single_image=True, accepted_only=True,
        one_per_source_image=True, compares_judge=False, shows_originals=True,
        default_facets=("modality",), figures_path="real-or-edited",
        words=DesignWords(
            name="real or edited: one image per source image, its original or its accepted "
                 "edit, shown alone (a visual Turing test)",
            estimates="whether readers can tell an edit from a real image: ROC AUC of their "
                      "confidence, sensitivity and specificity, and whether they find the change",
            cannot="nothing about the judge, and no rubric answers: readers only say real or "
                   "edited (window/level is the only image tool)",
            pool="source images with an accepted edit, one task each",
            eligible="every source image with an accepted edit, one task each"))
    reading_template = "studies/reading/real_or_edited.html"
    answer_model = answers.RealOrEditedIn
    keeps_drafts = False  # the answer is two keys
    images = ()  # its one image has an address of its own, which says nothing of what it is
    tools = ("window",)  # the paired tools would need the other image
    figures = (Link("real-or-edited-link", "Results: can readers tell an edit from a real image?",
                    traits.figures_path),)
    exports = (Link("imrmc-link", "Ratings for MRMC software (iMRMC)", "real-or-edited.imrmc",
                    download=True),
               Link("real-or-edited-csv", "First reads in long format (CSV)", "real-or-edited.csv",
                    download=True),
               Link("export-csv", "Download every answer version (CSV)", "answers.csv",
                    download=True),
               SAMPLE)

    def screen(self, session: Session, study: Study, user: User, assignment: Assignment, *,
               typed: dict[str, Any] | None = None, errors: dict[str, str] | None = None,
               instructions_due: bool = False) -> dict[str, Any]:
        view = answers.case_view(session, study, assignment)
        return {"view": view, "state": typed or view.form_state(), "errors": errors or {},
                "instructions_due": instructions_due,
                "progress": reader_progress(session, study, assignment.user_id)}

    def submit(self, session: Session, study: Study, assignment: Assignment,
               answer: BaseModel) -> None:
        assert isinstance(answer, answers.RealOrEditedIn)
        answers.submit(session, study, assignment, answer)

    def undo_last(self, session: Session, study: Study, user_id: int) -> Assignment | None:
        return answers.undo_last(session, study, user_id)

    def answers_csv(self, session: Session, study: Study) -> Iterator[str]:
        return iter_real_or_edited_answers_csv(session, study)
