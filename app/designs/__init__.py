"""Study designs as the rest of the app asks them: what a study samples and how it is drawn,
what the reader sees and which answer is taken, how an answer is stored and undone, where the
figures and the exports are. The web edge and the CLI ask ``design_of(study)``; they never
branch on a design's name.

A design's traits that the layers below need (whether readers answer the rubric, whether the
reader sees one image) are declared with the design itself (app/studies/design_traits.py, Design);
what it does is here, one module per kind of design, registered in app/designs/registry.py.
"""

from app.designs.base import StudyDesign
from app.designs.pairwise.export import write_pairwise, zipped_pairwise
from app.designs.pairwise.figures import PairwiseFigures, pairwise_figures, strengths_plots
from app.designs.pairwise.pairs import PairKind
from app.designs.pairwise.study import pairs_left_out
from app.designs.real_or_edited import figures as real_or_edited_figures
from app.designs.real_or_edited.panel import panel_roc_for
from app.designs.registry import PAIRWISE, design_of

__all__ = ["PAIRWISE", "PairKind", "PairwiseFigures", "StudyDesign", "design_of", "pairs_left_out",
           "pairwise_figures", "panel_roc_for", "real_or_edited_figures", "strengths_plots",
           "write_pairwise", "zipped_pairwise"]
