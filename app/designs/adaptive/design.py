"""The adaptive design behind app/designs' interface: the rubric's screen and answer, its own
way of drawing."""

from sqlmodel import Session

from app.designs.adaptive.create import create_adaptive
from app.designs.rubric.design import RubricDesign
from app.designs.rubric.variants import JUDGED_ATTEMPT, JUDGED_POOL
from app.models import User
from app.studies.design import StudyPlan
from app.studies.design_traits import Design, DesignTraits, DesignWords
from app.studies.models import Study

# Judged edits like a validation study, but edits are drawn in batches as reading
# goes, each at a recorded probability chosen to narrow the target figure fastest
# (prior.py, edits.py); the figures weight each draw by its inverse probability.
ADAPTIVE = DesignTraits(
    kind=Design.adaptive, judged=True, draws_in_batches=True, default_facets=("modality",),
    words=DesignWords(
        name="adaptive: judged edits drawn in batches as reading goes, each at a recorded "
             "probability: uniform until the reads show which edits the readers overturn, "
             "then more often where they are least predictable, but only where that is "
             "predicted to save reads",
        estimates="agreement, too strict and too lenient of the whole pool, each draw weighted "
                  "by its inverse probability, with intervals valid at every look",
        cannot="nothing of the above is out of reach; every figure of its report weights each "
               "case by its draws' inverse probability, so the figures estimate the pool, and "
               "the case counts (n) are the cases read",
        pool=JUDGED_POOL, eligible=f"every {JUDGED_ATTEMPT}"))


class AdaptiveDesign(RubricDesign):
    def __init__(self) -> None:
        super().__init__(ADAPTIVE)

    def create(self, session: Session, plan: StudyPlan, created_by: User) -> Study:
        """The pool of judged edits frozen, the readers' lists opened, and the first batch
        drawn (create.py); the next batches are drawn as reading goes (top_up.py)."""
        return create_adaptive(session, plan, created_by)
