"""The report's tables as rows: one list of dicts per table, for the page and for CSV."""

import csv
import io
from collections.abc import Iterator
from typing import Any

from app.agreement.reads import QUESTIONS

TABLES = ("judge-vs-reference", "judge-vs-readers", "readers-vs-others", "reader-pairs",
          "among-readers", "intra-reader", "reference-decisions", "by-disease")


def _pair_columns(figures: dict[str, Any]) -> dict[str, Any]:
    table = figures["table"]
    return {
        "n": figures["n"], "left_out": figures["left_out"],
        "agreement": figures["agreement"]["value"], "agreement_low": figures["agreement"]["low"],
        "agreement_high": figures["agreement"]["high"],
        "kappa": figures["kappa"]["value"], "kappa_low": figures["kappa"]["low"],
        "kappa_high": figures["kappa"]["high"], "pabak": figures["pabak"], "ac1": figures["ac1"],
        "both_pass": table["both_pass"], "a_pass_b_fail": table["a_pass_b_fail"],
        "a_fail_b_pass": table["a_fail_b_pass"], "both_fail": table["both_fail"],
        "a_stricter": figures["a_stricter"]["value"],
        "a_stricter_low": figures["a_stricter"]["low"], "a_stricter_high": figures["a_stricter"]["high"],
        "a_stricter_given_b_pass": figures["a_stricter_given_b_pass"]["value"],
        "a_stricter_given_b_pass_low": figures["a_stricter_given_b_pass"]["low"],
        "a_stricter_given_b_pass_high": figures["a_stricter_given_b_pass"]["high"],
        "a_more_lenient": figures["a_more_lenient"]["value"],
        "a_more_lenient_low": figures["a_more_lenient"]["low"],
        "a_more_lenient_high": figures["a_more_lenient"]["high"],
        "a_more_lenient_given_b_fail": figures["a_more_lenient_given_b_fail"]["value"],
        "a_more_lenient_given_b_fail_low": figures["a_more_lenient_given_b_fail"]["low"],
        "a_more_lenient_given_b_fail_high": figures["a_more_lenient_given_b_fail"]["high"],
        "mcnemar_p": figures["mcnemar_p"],
    }


def rows(report: dict[str, Any], table: str) -> list[dict[str, Any]]:
    questions = report["questions"]
    if table == "judge-vs-reference":
        found = []
        for q in QUESTIONS:
            figures = questions[q]["judge_vs_reference"]
            boot = figures["bootstrap"]
            found.append({"question": q, **_pair_columns(figures),
                          "judge_missing": questions[q]["judge_missing"],
                          "agreement_cluster_low": boot["agreement"]["low"],
                          "agreement_cluster_high": boot["agreement"]["high"],
                          "kappa_cluster_low": boot["kappa"]["low"],
                          "kappa_cluster_high": boot["kappa"]["high"],
                          "bootstrap_method": boot["agreement"]["method"],
                          "bootstrap_resamples": boot["agreement"]["resamples"],
                          "source_images": boot["agreement"]["clusters"]})
        return found
    if table in ("judge-vs-readers", "readers-vs-others"):
        key = "judge_vs_reader" if table == "judge-vs-readers" else "reader_vs_others"
        return [{"question": q, "reader": name, **_pair_columns(figures),
                 "cannot_assess": questions[q]["cannot_assess"][name],
                 "missing": questions[q]["missing"][name]}
                for q in QUESTIONS for name, figures in questions[q][key].items()]
    if table == "reader-pairs":
        return [{"question": q, "reader_a": pair["a"], "reader_b": pair["b"], **_pair_columns(pair)}
                for q in QUESTIONS if questions[q]["among_readers"]
                for pair in questions[q]["among_readers"]["pairs"]]
    if table == "among-readers":
        return [{"question": q, "readers": len(report["readers"]),
                 "fleiss_kappa": a["fleiss_kappa"]["value"], "fleiss_n": a["fleiss_kappa"]["n"],
                 "krippendorff_alpha": a["krippendorff_alpha"]["value"],
                 "krippendorff_n": a["krippendorff_alpha"]["n"]}
                for q in QUESTIONS if (a := questions[q]["among_readers"])]
    if table == "intra-reader":
        return [{"reader": name, "question": q, **_pair_columns(figures)}
                for name, by_question in report["intra_reader"].items()
                for q, figures in by_question.items()]
    if table == "by-disease":
        return [{"question": q, "disease": disease, **_pair_columns(figures)}
                for q in QUESTIONS for disease, figures in questions[q]["by_disease"].items()]
    if table == "reference-decisions":
        return [{"question": q, **questions[q]["reference"]["decided"]} for q in QUESTIONS]
    raise KeyError(table)


def iter_csv(found: list[dict[str, Any]]) -> Iterator[str]:
    buffer = io.StringIO()
    if not found:
        yield ""
        return
    writer = csv.DictWriter(buffer, fieldnames=list(found[0]))
    writer.writeheader()
    writer.writerows(found)
    yield buffer.getvalue()
