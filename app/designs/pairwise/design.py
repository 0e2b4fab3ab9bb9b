"""The pairwise design behind app/designs' interface."""

from collections.abc import Iterator
from typing import Any

from pydantic import BaseModel
from sqlmodel import Session

from app.designs.base import SAMPLE, Link, StudyDesign
from app.designs.pairwise import answers
from app.designs.pairwise.answers_csv import iter_pair_answers_csv, iter_pair_design_csv
from app.designs.pairwise.study import create_pairwise_study, pair_strata
from app.images.files import ImageFile
from app.models import User
from app.studies.answers import FAILURE_TAGS
from app.studies.design import StudyPlan
from app.studies.design_traits import PAIR_FACETS, DesignTraits, DesignWords
from app.studies.models import Assignment, Design, Study, StudyItem
from app.studies.pool import StratumRow


class PairwiseDesign(StudyDesign):
    # Two edits of one source image side by side, the original a key away, and the reader
    # says which is better: refinement rounds, or runs, compared.
    traits = DesignTraits(
        kind=Design.pairwise, rubric=False, pairs=True, default_facets=PAIR_FACETS,
        figures_path="pairwise",
        words=DesignWords(
            name="pairwise: two edits of one source image side by side, the original a key "
                 "away (beside them on a wide screen), and the reader says which is better "
                 "(sides drawn at random for each read)",
            estimates="Bradley-Terry strengths of rounds or runs with cluster-bootstrap "
                      "intervals, how often the later round is preferred, position bias, and "
                      "where readers overrule the judge's choice of edit",
            cannot="no rubric answers and no acceptability of a single edit: a pair says which "
                   "is better, and \"both unacceptable\" only that neither is good enough",
            pool="pairs of edits of one source image",
            eligible="every pair of edits of one source image the filter admits"))
    facet_choices = PAIR_FACETS
    reading_template = "studies/reading/pairwise.html"
    answer_model = answers.PairAnswerIn
    keeps_drafts = False  # the answer is a few keys
    images = ("original", "left", "right")
    tools = answers.PAIR_TOOLS
    figures = (Link("pairwise-link", "Figures: which edit readers prefer",
                    traits.figures_path),)
    exports = (Link("pairwise-pairs", "Preference pairs (zip: JSON Lines, Parquet, images)",
                    "pairwise/pairs.zip", download=True),
               Link("export-csv", "Download every answer version, with reasons and comments (CSV)",
                    "answers.csv", download=True), SAMPLE)

    def strata(self, session: Session, plan: StudyPlan) -> tuple[list[StratumRow], list[int]]:
        return pair_strata(session, plan)

    def create(self, session: Session, plan: StudyPlan, created_by: User) -> Study:
        """Pairs of the plan's ``pair_kind`` (app/designs/pairwise/pairs.py)."""
        return create_pairwise_study(session, plan, created_by)

    def screen(self, session: Session, study: Study, user: User, assignment: Assignment, *,
               typed: dict[str, Any] | None = None, errors: dict[str, str] | None = None,
               instructions_due: bool = False) -> dict[str, Any]:
        view = answers.pair_view(session, study, assignment)
        return {"view": view, "state": typed if typed is not None else view.state(),
                "errors": errors or {},
                "tags": FAILURE_TAGS, "instructions_due": instructions_due,
                "progress": view.progress}

    def submit(self, session: Session, study: Study, assignment: Assignment,
               answer: BaseModel) -> None:
        assert isinstance(answer, answers.PairAnswerIn)
        answers.submit(session, study, assignment, answer)

    def undo_last(self, session: Session, study: Study, user_id: int) -> Assignment | None:
        return answers.undo_last(session, study, user_id)

    def image(self, session: Session, study: Study, assignment: Assignment, item: StudyItem,
              which: str) -> ImageFile:
        return answers.pair_image(session, study, assignment, item, which)

    def answers_csv(self, session: Session, study: Study) -> Iterator[str]:
        return iter_pair_answers_csv(session, study)

    def design_csv(self, session: Session, study: Study) -> Iterator[str]:
        return iter_pair_design_csv(session, study)
