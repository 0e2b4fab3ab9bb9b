"""The report's tables as rows: one list of dicts per table, for the page and for CSV.

Each figure becomes three columns (value, low, high) from its cluster-bootstrap interval."""

from dataclasses import asdict
from typing import Any

from app.agreement.report_types import AgreementReport
from app.agreement.two_raters import FIGURES, INDICES
from app.errors import NotFound
from pipeline.vocabulary import QUESTIONS

TABLES = ("judge-vs-reference", "judge-vs-readers", "readers-vs-others", "reader-pairs",
          "among-readers", "human-ceiling", "sensitivity", "intra-reader", "reference-decisions",
          "by-disease", "judge-b", "flow", "case-table")


def _figure_columns(name: str, figure: dict[str, Any]) -> dict[str, Any]:
    return {name: figure["value"], f"{name}_low": figure["low"], f"{name}_high": figure["high"]}


def _pair_columns(figures: dict[str, Any]) -> dict[str, Any]:
    table = figures["table"]
    columns: dict[str, Any] = {"n": figures["n"], "left_out": figures["left_out"], **table}
    for name in FIGURES:
        if name in figures:  # a subgroup (one disease) carries only some
            columns |= _figure_columns(name, figures[name])
    for name in INDICES:
        columns[name] = figures[name]["value"]
    return columns | {"mcnemar_exact_p": figures["mcnemar_exact_p"],
                      "mcnemar_clustered_p": figures["mcnemar_clustered_p"],
                      "source_images": figures["agreement"]["clusters"],
                      "interval_warning": figures["agreement"]["warning"]}


def _pairs(report: AgreementReport, table: str) -> list[dict[str, Any]]:
    questions = report.questions
    if table == "judge-vs-reference":
        adjusted = report.multiplicity.adjusted_p
        return [{"question": q, "primary": q == report.multiplicity.primary,
                 **_pair_columns(questions[q].judge_vs_reference),
                 "judge_missing": questions[q].judge_missing, "holm_p": adjusted.get(q)}
                for q in QUESTIONS]
    if table in ("judge-vs-readers", "readers-vs-others"):
        key = "judge_vs_reader" if table == "judge-vs-readers" else "reader_vs_others"
        return [{"question": q, "reader": name, **_pair_columns(figures),
                 "cannot_assess": questions[q].cannot_assess[name],
                 "missing": questions[q].missing[name]}
                for q in QUESTIONS for name, figures in getattr(questions[q], key).items()]
    if table == "reader-pairs":
        return [{"question": q, "reader_a": pair["a"], "reader_b": pair["b"], **_pair_columns(pair)}
                for q in QUESTIONS for pair in questions[q].reader_pairs]
    if table == "intra-reader":
        return [{"reader": name, "question": q, **_pair_columns(figures)}
                for name, by_question in report.intra_reader.items()
                for q, figures in by_question.items()]
    if table == "by-disease":
        return [{"question": q, "disease": disease, **_pair_columns(figures)}
                for q in QUESTIONS for disease, figures in questions[q].by_disease.items()]
    if table == "judge-b":
        return [{"judge": label, "question": q, **_pair_columns(j.questions[q])}
                for label, j in report.judge_b.items() for q in QUESTIONS]
    raise KeyError(table)


def rows(report: AgreementReport, table: str) -> list[dict[str, Any]]:
    if table not in TABLES:
        raise NotFound(f"no table {table!r}; tables: {', '.join(TABLES)}")
    questions = report.questions
    if table == "among-readers":
        return [{"question": q, "readers": len(report.readers), "rated_twice": a["n_rated_twice"],
                 **_figure_columns("fleiss_kappa", a["fleiss_kappa"]),
                 "fleiss_se_gwet": a["fleiss_kappa"]["se_gwet"], **_figure_columns("ac1", a["ac1"]),
                 "ac1_se_gwet": a["ac1"]["se_gwet"],
                 **_figure_columns("krippendorff_alpha", a["krippendorff_alpha"])}
                for q in QUESTIONS if (a := questions[q].among_readers)]
    if table == "human-ceiling":
        return [{"question": q, **{k: v for name in ("judge_vs_readers", "reader_vs_reader", "difference")
                                   for k, v in _figure_columns(name, h[name]).items()},
                 "judge_is": h["judge_is"]}
                for q in QUESTIONS if (h := questions[q].human_ceiling)]
    if table == "sensitivity":
        return [{"question": q, "open_answers": kind, "counted": how, "n": f["n"],
                 **_figure_columns("agreement", f)}
                for q in QUESTIONS for kind, lines in asdict(questions[q].sensitivity).items()
                for how, f in lines.items()]
    if table == "reference-decisions":
        return [{"question": q, **questions[q].reference.decided} for q in QUESTIONS]
    if table == "flow":
        return [{"question": q, "sampled": f["sampled"], "read": f["read"], "compared": f["compared"],
                 **{f"excluded: {reason}": n for reason, n in f["excluded"].items()}}
                for q, f in (report.facts or {}).get("flow", {}).items()]
    if table == "case-table":
        return list((report.facts or {}).get("case_table", []))
    return _pairs(report, table)
