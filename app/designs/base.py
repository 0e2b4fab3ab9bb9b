"""The interface every study design implements."""

from abc import ABC, abstractmethod
from collections.abc import Iterator
from dataclasses import dataclass, replace
from typing import Any

from pydantic import BaseModel
from sqlmodel import Session

from app.images.files import ImageFile
from app.models import User
from app.studies.design import StudyPlan, create_study, plan_apart
from app.studies.design_traits import DesignTraits
from app.studies.export import iter_answer_csv, iter_design_csv
from app.studies.images import item_image
from app.studies.models import Assignment, Design, Study, StudyItem
from app.studies.pool import STRATA_FACETS, StratumRow, strata_table
from app.studies.viewer_tools import VIEWER_TOOLS


@dataclass(frozen=True)
class Link:
    """A page or a download of a study of this design: its element id, its words, and its
    address under /studies/{id}/."""

    id: str
    text: str
    path: str
    download: bool = False


# What every design exports: the sample, and each reader's order.
SAMPLE = Link("export-design", "Download the sample and each reader's order (CSV)", "design.csv",
              download=True)


class StudyDesign(ABC):
    """One design: what it samples, its reading screen and its answer, and where its figures
    and exports are."""

    # What it is, as the shared machinery asks it (app/studies/design_traits.py).
    traits: DesignTraits
    # The facets its strata may be drawn on (its form starts with its ``default_facets``).
    facet_choices: tuple[str, ...] = STRATA_FACETS
    # The reading screen's template (templates/studies/reading/) and the answer it posts.
    reading_template: str
    answer_model: type[BaseModel]
    # Whether a half-typed answer is kept as a draft while the reader works.
    keeps_drafts: bool = True
    # The images a read shows at /read/{study}/image/{uid}/{which}.
    images: tuple[str, ...] = ("original", "edit")
    # The image tools a study of this design may offer its readers.
    tools: tuple[str, ...] = tuple(VIEWER_TOOLS)
    # Its figures' pages, and its downloads (the study page lists both).
    figures: tuple[Link, ...] = (
        Link("agreement-link", "Agreement: judge vs readers, readers among themselves", "agreement"),
        Link("disagreements-link", "Disagreement queue", "disagreements"))
    exports: tuple[Link, ...] = (
        Link("export-csv", "Download every answer version (CSV)", "answers.csv", download=True),
        Link("export-long", "Answers in force, one row per case \u00d7 reader \u00d7 question (CSV)",
             "answers-long.csv", download=True),
        SAMPLE)

    @property
    def kind(self) -> Design:
        return self.traits.kind

    @property
    def figures_page(self) -> str:
        """Its main figures page, under /studies/{id}/ (where the agreement page sends it)."""
        return self.figures[0].path

    def strata(self, session: Session, plan: StudyPlan) -> tuple[list[StratumRow], list[int]]:
        """What the plan's filter and facets leave to draw: each stratum with its pool, and
        the pool's units per source image (the sample-size planner's clusters). Only the
        plan's filter, facets and design options are read: a form being filled in has these."""
        return strata_table(session, plan.case_filter, self.kind, plan.strata_facets,
                            plan_apart(session, plan))

    def create(self, session: Session, plan: StudyPlan, created_by: User) -> Study:
        """Draw the plan's sample, stratified and seeded, and write the study with its
        readers' worklists: all of it, or nothing. StudyError (a 422 naming the field) when
        the plan cannot be drawn."""
        return create_study(session=session, plan=plan, created_by=created_by)

    def up_to(self, session: Session, plan: StudyPlan, most: int) -> StudyPlan:
        """The plan drawing ``most`` units from each stratum (from the whole pool, without
        strata), or all that a stratum holds when it holds fewer."""
        pools = {row.key: row.pool for row in self.strata(session, plan)[0]}
        if plan.strata_facets:
            return replace(plan, per_stratum={key: min(most, n) for key, n in pools.items()})
        return replace(plan, total=min(most, pools.get("", most)))

    @abstractmethod
    def screen(self, session: Session, study: Study, user: User, assignment: Assignment, *,
               typed: dict[str, Any] | None = None, errors: dict[str, str] | None = None,
               instructions_due: bool = False) -> dict[str, Any]:
        """The reading screen's context: the case, and what was typed when it was refused."""

    @abstractmethod
    def submit(self, session: Session, study: Study, assignment: Assignment,
               answer: BaseModel) -> None:
        """Store a checked answer (a new version, never an overwrite)."""

    @abstractmethod
    def undo_last(self, session: Session, study: Study, user_id: int) -> Assignment | None:
        """Take the reader's last answer back; the read it belonged to."""

    def image(self, session: Session, study: Study, assignment: Assignment, item: StudyItem,
              which: str) -> ImageFile:
        """One of ``images`` of this read (the edit, or its original)."""
        return item_image(session, item, which)

    def answers_csv(self, session: Session, study: Study) -> Iterator[str]:
        """answers.csv: every version of every answer, as this design stores it."""
        return iter_answer_csv(session, study)

    def design_csv(self, session: Session, study: Study) -> Iterator[str]:
        """design.csv: the sample and each reader's order, enough to rebuild the sample."""
        return iter_design_csv(session, study)

    def after_submit(self, study: Study, sequence: int) -> str | None:
        """Where the reader goes once an answer is stored; None: their next open case."""
        return None
