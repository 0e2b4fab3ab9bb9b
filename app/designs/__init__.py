"""Study designs as the rest of the app asks them: what a study samples and how it is drawn,
what the reader sees and which answer is taken, how an answer is stored and undone, where the
figures and the exports are. The web edge and the CLI ask ``design_of(study)``; they never
branch on a design's name.

A design's traits that the layers below need (whether readers answer the rubric, whether the
reader sees one image) are declared with the design itself (app/studies/design_traits.py, Design);
what it does is here, one module per kind of design, registered in app/designs/registry.py.
"""

from app.designs.adaptive.batches import latest_steer, planned_budget
from app.designs.adaptive.budget import recorded_budget
from app.designs.adaptive.top_up import more_coming, top_up
from app.designs.base import StudyDesign
from app.designs.pairwise.export import write_pairwise, zipped_pairwise
from app.designs.pairwise.figures import PairwiseFigures, pairwise_figures, strengths_plots
from app.designs.pairwise.pairs import PairKind
from app.designs.pairwise.study import pairs_left_out
from app.designs.real_or_edited import figures as real_or_edited_figures
from app.designs.real_or_edited.panel import panel_roc_for
from app.designs.registry import PAIRWISE, design_of
from app.designs.rubric.answers_long import iter_long_csv
from app.designs.rubric.disagreements import KINDS as DISAGREEMENT_KINDS
from app.designs.rubric.disagreements import (
    Disagreement,
    adjudication_screen,
    case_rows,
    csv_rows,
    disagreements,
    to_adjudicate,
)
from app.designs.rubric.standalone import standalone_html
from app.designs.rubric.tables import TABLES as AGREEMENT_TABLES
from app.designs.rubric.tables import rows as agreement_table

__all__ = [
    "AGREEMENT_TABLES",
    "DISAGREEMENT_KINDS",
    "PAIRWISE",
    "Disagreement",
    "PairKind",
    "PairwiseFigures",
    "StudyDesign",
    "adjudication_screen",
    "agreement_table",
    "case_rows",
    "csv_rows",
    "design_of",
    "disagreements",
    "iter_long_csv",
    "latest_steer",
    "more_coming",
    "pairs_left_out",
    "pairwise_figures",
    "panel_roc_for",
    "planned_budget",
    "real_or_edited_figures",
    "recorded_budget",
    "standalone_html",
    "strengths_plots",
    "to_adjudicate",
    "top_up",
    "write_pairwise",
    "zipped_pairwise",
]
