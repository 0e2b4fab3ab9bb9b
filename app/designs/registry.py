"""Every design, by its kind: adding a design is writing its module and listing it here."""

from app.designs.base import StudyDesign
from app.designs.pairwise.design import PairwiseDesign
from app.designs.real_or_edited.design import RealOrEditedDesign
from app.designs.rubric import RubricDesign
from app.studies.models import Design, Study

DESIGNS: dict[Design, StudyDesign] = {
    Design.validation: RubricDesign(Design.validation),
    Design.accepted: RubricDesign(Design.accepted),
    Design.runs: RubricDesign(Design.runs),
    Design.adaptive: RubricDesign(Design.adaptive),
    Design.real_or_edited: RealOrEditedDesign(),
    Design.pairwise: PairwiseDesign(),
}


def design_of(study: Study | Design | str) -> StudyDesign:
    """The study's design (or the design of that kind)."""
    kind = study.design if isinstance(study, Study) else study
    return DESIGNS[Design(kind)]
