"""Every design, by its kind: adding a design is writing its package and listing it here."""

from app.designs.adaptive.design import AdaptiveDesign
from app.designs.base import StudyDesign
from app.designs.pairwise.design import PairwiseDesign
from app.designs.real_or_edited.design import RealOrEditedDesign
from app.designs.rubric.design import RubricDesign
from app.designs.rubric.variants import ACCEPTED, RUNS, VALIDATION
from app.studies.design_traits import Design, declare
from app.studies.models import Study

# The pairwise form is its own page (app/web/routes/pairwise.py), which asks this one.
PAIRWISE = PairwiseDesign()
DESIGNS: dict[Design, StudyDesign] = {design.kind: design for design in (
    RubricDesign(VALIDATION),
    RubricDesign(ACCEPTED),
    RubricDesign(RUNS),
    AdaptiveDesign(),
    RealOrEditedDesign(),
    PAIRWISE,
)}
# The shared machinery asks a design's traits, never its name (app/studies/design_traits.py).
declare([design.traits for design in DESIGNS.values()], default=VALIDATION.kind)


def design_of(study: Study | Design | str) -> StudyDesign:
    """The study's design (or the design of that kind)."""
    kind = study.design if isinstance(study, Study) else study
    return DESIGNS[Design(kind)]
