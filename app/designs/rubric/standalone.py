"""A self-contained HTML study report: one file, styles and charts inline, nothing fetched.

It answers every GRRAS (Kottner et al. 2011) and STARD 2015 item that software can answer, and
ends with the checklist mapping each item to its section (app/agreement/checklist.py).
"""

from datetime import UTC, datetime
from typing import Any

from jinja2 import Environment, FileSystemLoader, select_autoescape
from sqlmodel import Session

from app.agreement.alternative_annotator import EPSILON
from app.agreement.checklist import ITEMS
from app.agreement.facts import limitations, recorded_selection
from app.agreement.report import Slice
from app.agreement.service import charts_for, judge_as_reader_for, report_for
from app.audit import head_of
from app.cases.filters import recorded_criteria
from app.resources import TEMPLATES_DIR
from app.studies.adjudication import adjudicator_of
from app.studies.design_traits import traits_of
from app.studies.models import Study
from app.studies.viewer_tools import VIEWER_TOOLS, tools_of
from app.wording import plural, spaced
from pipeline.rubric import MODALITIES, rubric
from pipeline.vocabulary import QUESTIONS

_env = Environment(loader=FileSystemLoader(TEMPLATES_DIR), autoescape=select_autoescape())
_env.filters["plural"] = plural
_env.filters["spaced"] = spaced
# A design's traits and words, asked by its kind (the report never branches on its name).
_env.globals["design_traits"] = traits_of


def describe_filter(case_filter: dict[str, Any]) -> str:
    """The case filter in words: "modality chest_xray; outcome success"."""
    parts = [f"{label} {values}" for label, values in recorded_criteria(case_filter)]
    return "; ".join(parts) or "all cases"


def standalone_html(session: Session, study: Study, scope: Slice = Slice(),
                    reader_checks: Any = None) -> str:
    """``reader_checks``: the study's checks on its readers (app/readers/checks.py), which
    the caller brings: this package computes no reader's accuracy."""
    data, report = report_for(session, study, scope)
    adjudicator = adjudicator_of(session, study)
    # Whole study, whatever the slice: readers are random over every case they read.
    random = judge_as_reader_for(session, study, EPSILON)
    context: dict[str, Any] = {
        "study": study, "report": report, "charts": charts_for(session, study, scope),
        "questions": QUESTIONS, "checklist": ITEMS, "limitations": limitations(report),
        "filter_text": describe_filter(recorded_selection(study).filter),
        "adjudicator": adjudicator.name if adjudicator else None,
        "repeats": sum(1 for r in data.reads if r.repeat),
        "generated": datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC"),
        "rubric": rubric(), "modalities": MODALITIES,
        "tools": [text for tool, text in VIEWER_TOOLS.items() if tool in tools_of(study)],
        "reader_checks": reader_checks,
        "random": random, "random_chart": random.chart() if random.readers else None,
        "audit": head_of(session),
    }
    return _env.get_template("agreement/standalone.html").render(context)
