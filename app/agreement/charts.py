"""The agreement page's charts, from a study report (drawn with app/charts.py)."""

from typing import Any

from app.agreement.report_types import AgreementReport
from app.charts import Point, heat_table, interval_chart
from pipeline.vocabulary import QUESTIONS


def _point(label: str, series: str, figure: dict[str, Any]) -> Point:
    return Point(label, series, figure["value"], figure["low"], figure["high"], figure["n"])


def report_charts(report: AgreementReport) -> dict[str, str]:
    """The charts of the agreement page, from a study report. Rows with nothing to show
    (no case compared) are left out rather than drawn as "undefined"."""
    questions = report.questions
    points = []
    for q in QUESTIONS:
        points.append(_point(f"{q} · judge", "judge", questions[q].judge_vs_reference["agreement"]))
        for name, figures in questions[q].reader_vs_others.items():
            points.append(_point(f"{q} · {name}", "reader", figures["agreement"]))
    by_disease = [_point(f"{disease} · {q}", "judge", f["agreement"])
                  for disease in questions["overall"].by_disease
                  for q in QUESTIONS if (f := questions[q].by_disease.get(disease))]
    method = "cluster bootstrap 95 % CI"
    charts = {
        "agreement": interval_chart([p for p in points if p.n] or points,
                                    f"Agreement with the reference (judge; readers vs the others; {method})",
                                    "share of cases agreeing"),
        "by_disease": interval_chart([p for p in by_disease if p.n] or by_disease,
                                     f"Judge vs reference per disease and question ({method})",
                                     "share of cases agreeing"),
    }
    for q in QUESTIONS:
        charts[f"table_{q}"] = heat_table(questions[q].judge_vs_reference["table"], "judge",
                                          "reference", q)
    return charts
