"""What a study report states besides its figures (GRRAS, STARD 2015): the judge's identity,
the design in honest words, the readers and their qualification, dates, the flow of cases,
the case table, and the software that computed it all."""

import json
import platform
import statistics
import subprocess
from collections import Counter
from dataclasses import dataclass, field
from datetime import datetime
from functools import lru_cache
from importlib import metadata
from pathlib import Path
from typing import Any

from sqlmodel import Session, col, select

from app.agreement.clustering import Clustering, observed_clustering
from app.agreement.reads import StudyReads
from app.agreement.reference import Decided
from app.agreement.report import first_reads, question_data
from app.agreement.report_types import AgreementReport
from app.models import User
from app.studies.draw_plan import figure_scope, scope_of, weighted_to_pool
from app.studies.models import Design, Study
from app.studies.pool import stratum_label
from pipeline.vocabulary import QUESTIONS

LIBRARIES = ("numpy", "scipy", "statsmodels", "krippendorff", "sqlalchemy", "fastapi", "matplotlib")

QUALIFIED = {
    "imported": "the run's own judge: 'qualified' is the verdict the generation scripts acted on "
                "(the paper: a weighted score of compliance 40 %, structure 25 %, realism 20 %, "
                "fidelity 15 % over about 0.7); fidelity was not recorded",
    "pipeline": "this app's judge prompt (prompts/judge.j2): 'qualified' is its accept verdict over "
                "compliance, structure, realism and fidelity",
}


@dataclass(frozen=True)
class Selection:
    design: Design
    facets: tuple[str, ...]
    strata: list[dict[str, Any]]  # label, asked, pool
    total: int | None
    seed: int
    filter: dict[str, Any]
    eligible: int | None  # the whole pool the filter admitted, every stratum; None if unrecorded
    # An adaptive study's budget as recorded at creation (app/designs/adaptive/budget.py).
    budget: dict[str, Any] = field(default_factory=dict)


def recorded_selection(study: Study) -> Selection:
    """The study's sample as recorded, also for studies made before strata were combined. An
    adaptive study's strata are its pool's images per stratum, none asked in advance (its
    draws are allocated as reading goes)."""
    raw = json.loads(study.selection)
    design = Design(study.design)
    facets = tuple(raw.get("strata_facets") or ([raw["strata_facet"]] if raw.get("strata_facet") else []))
    pool = raw.get("pool", {})
    asked = dict.fromkeys(pool, None) if design.draws_in_batches else raw.get("per_stratum", {})
    strata = [{"key": key, "label": stratum_label(key, facets) if len(facets) > 1 else f"{facets[0]} {key}",
               "asked": n, "pool": pool.get(key)}
              for key, n in asked.items()] if facets else []
    return Selection(design, facets, strata, raw.get("total"), raw.get("seed", study.seed),
                     raw.get("filter", {}), sum(pool.values()) if pool else None,
                     raw.get("budget") or {})


def judge_identity(data: StudyReads) -> list[dict[str, Any]]:
    return [{"label": label, "cases": n,
             "qualified_means": QUALIFIED["imported" if label.startswith("imported") else "pipeline"]}
            for label, n in sorted(data.judges.items())]


def judge_named(data: StudyReads) -> str:
    """The judge as its verdicts recorded it, for a title: never a model nobody recorded."""
    named = [label.split(": ", 1)[1] if label.startswith("imported") else f"the judge {label}"
             for label in sorted(data.judges)]
    return " and ".join(named) if named else "the judge"


def design_sentence(study: Study, data: StudyReads, readers: list[dict[str, Any]]) -> str:
    n = len(data.readers)
    k = study.readers_per_case
    plan = (f"{k} of {n} readers per case" if k and k < n else
            f"each of the {n} readers was assigned every case")
    short = [f"{r['name']} read {r['read']} of {r['assigned']}" for r in readers
             if r["read"] < r["assigned"]]
    return plan + ("; " + "; ".join(short) if short else "; every assigned case was read")


def _median(values: list[float]) -> float | None:
    return statistics.median(values) if values else None


def reader_rows(session: Session, data: StudyReads) -> list[dict[str, Any]]:
    people = {u.name: u for u in session.scalars(select(User).where(col(User.name).in_(data.readers)))}
    first = first_reads(data.reads)
    rows = []
    for name in data.readers:
        mine = [r for r in data.reads if r.reader == name]
        repeats = [r for r in mine if r.repeat]
        pairs = [(first[(name, r.item_id)].answered_at, r.answered_at) for r in repeats
                 if (name, r.item_id) in first]
        gaps = [(later - earlier).total_seconds() / 86400 for earlier, later in pairs
                if earlier is not None and later is not None]
        times = [r.time_on_case_ms / 1000 for r in mine if r.time_on_case_ms]
        user = people.get(name)
        rows.append({
            "name": name, "qualification": user.qualification if user else None,
            "experience_years": user.experience_years if user else None,
            "board_certified": user.board_certified if user else None,
            "assigned": sum(1 for c in data.cases if name in c.assigned),
            "read": sum(1 for r in mine if not r.repeat), "repeats": len(repeats),
            "median_seconds": _median(times), "repeat_interval_days": _median(gaps),
        })
    return rows


def dates(study: Study, data: StudyReads) -> dict[str, datetime | None]:
    answered = [r.answered_at for r in data.reads if r.answered_at]
    return {"created": study.created_at, "first_read": min(answered, default=None),
            "last_read": max(answered, default=None), "locked": study.locked_at}


def flow(data: StudyReads, question: str, cases_in_scope: set[int]) -> dict[str, Any]:
    """Sampled -> read -> compared for one question, with every exclusion and its reason."""
    cases = [c for c in data.cases if c.item_id in cases_in_scope]
    reads = first_reads(data.reads)
    q = question_data(cases, data.readers, reads, data.decisions, question)
    excluded: Counter[str] = Counter()
    compared = 0
    for i, (value, how) in enumerate(q.reference()):
        if not any(q.answers[name][i] is not None for name in data.readers):
            excluded["not read by any reader"] += 1
        elif q.judge[i] is None:
            excluded["no readable judge verdict (frozen)"] += 1
        elif how is Decided.tie:
            excluded["readers tied, not adjudicated"] += 1
        elif value is None:
            excluded["every read was 'cannot assess'"] += 1
        else:
            compared += 1
    read = len(cases) - excluded["not read by any reader"]
    return {"question": question, "sampled": len(cases), "read": read, "compared": compared,
            "excluded": dict(excluded)}


def case_table(data: StudyReads, cases_in_scope: set[int]) -> list[dict[str, Any]]:
    """Cases by modality, disease, direction and round, with the frozen judge's verdicts."""
    counts: Counter[tuple[str, str, str, int]] = Counter()
    passed: Counter[tuple[str, str, str, int]] = Counter()
    for c in data.cases:
        if c.item_id in cases_in_scope:
            key = (c.modality, c.disease, c.direction, c.round)
            counts[key] += 1
            passed[key] += c.judge.get("overall") is True
    return [{"modality": m, "disease": d, "direction": dr, "round": r, "cases": n,
             "judge_pass": passed[(m, d, dr, r)], "judge_fail_or_missing": n - passed[(m, d, dr, r)]}
            for (m, d, dr, r), n in sorted(counts.items())]


@lru_cache(maxsize=1)
def software() -> dict[str, str]:
    """Versions of what computed the figures, and the commit when run from a checkout."""
    found = {"python": platform.python_version()}
    for name in ("medbanana-review", *LIBRARIES):
        try:
            found[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            found[name] = "not installed"
    try:
        commit = subprocess.run(["git", "rev-parse", "HEAD"], cwd=Path(__file__).resolve().parent,
                                capture_output=True, text=True, timeout=5, check=True).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        commit = "unknown (not run from a git checkout)"
    found["commit"] = commit
    return found


def study_facts(session: Session, study: Study, data: StudyReads,
                cases_in_scope: set[int]) -> dict[str, Any]:
    readers = reader_rows(session, data)
    selection = recorded_selection(study)
    eligible = selection.eligible
    return {
        "design": {"kind": selection.design.value, **selection.design.traits.words.as_dict(),
                   "sentence": design_sentence(study, data, readers),
                   "facets": list(selection.facets), "strata": selection.strata,
                   "total": selection.total, "seed": selection.seed,
                   **({"budget": selection.budget} if selection.budget else {}),
                   "primary_question": study.primary_question,
                   "weighted_to_pool": weighted_to_pool(study), "scope": scope_of(study),
                   "plan": json.loads(study.plan) if study.plan else None},
        "judge": judge_identity(data),
        "judge_named": judge_named(data),
        "reader_details": readers,
        "dates": {k: v.isoformat() if v else None for k, v in dates(study, data).items()},
        "flow": {q: flow(data, q, cases_in_scope) | {"eligible": eligible} for q in QUESTIONS},
        "case_table": case_table(data, cases_in_scope),
        "software": software(),
    }


def primary_clustering(data: StudyReads, study: Study, cases_in_scope: set[int]) -> Clustering | None:
    """The observed design effect and ICC of the primary question's agreement with the
    reference (app/agreement/clustering.py): what the planner offers for the next study."""
    cases = [c for c in data.cases if c.item_id in cases_in_scope]
    q = question_data(cases, data.readers, first_reads(data.reads), data.decisions,
                      study.primary_question)
    pairs = [(judge == value, case.cluster) for case, judge, (value, _)
             in zip(cases, q.judge, q.reference(), strict=True)
             if judge is not None and value is not None]
    return observed_clustering([a for a, _ in pairs], [c for _, c in pairs])


def achieved_precision(report: AgreementReport, study: Study,
                       clustering: Clustering | None = None) -> dict[str, object]:
    """The primary question's achieved half-width (half the interval), beside the one planned,
    with the clustering observed."""
    question = study.primary_question
    figure = report.questions[question].judge_vs_reference["agreement"]
    half = ((figure["high"] - figure["low"]) / 2 if figure["low"] is not None
            and figure["high"] is not None else None)
    return {"question": question, "agreement": figure["value"], "half_width": half,
            "n": figure["n"], "planned": json.loads(study.plan) if study.plan else None,
            "clustering": clustering.as_dict() if clustering else None}


def limitations(report: AgreementReport) -> list[str]:
    """What a reader of the report must keep in mind, from the figures themselves."""
    facts = report.facts or {}
    found = []
    design = Design(facts["design"]["kind"])
    if design.traits.estimates_pool and not facts["design"].get("weighted_to_pool"):
        found.append(f"Design: {figure_scope(False)}")  # made before its figures were weighted
    else:
        found.append(design.traits.words.first_limitation())
    if report.intervals.warning:
        found.append(report.intervals.warning + ".")
    primary = report.multiplicity.primary
    decided = report.questions[primary].reference.decided
    if decided["tie"]:
        found.append(f"{decided['tie']} cases of the primary question were tied between readers "
                     "and not adjudicated; they are left out (see the sensitivity analysis).")
    if decided["single_vote"]:
        found.append(f"{decided['single_vote']} references of the primary question rest on a single vote.")
    short = [r for r in facts["reader_details"] if r["read"] < r["assigned"]]
    if short:
        found.append("Not every assigned case was read: " + "; ".join(
            f"{r['name']} {r['read']} of {r['assigned']}" for r in short) + ".")
    missing = report.questions[primary].judge_missing
    if missing:
        found.append(f"{missing} cases have no readable frozen judge verdict for the primary question.")
    found.append("McNemar p-values are Durkalski's clustered test; the exact test, which ignores "
                 "clustering, is in the JSON.")
    return found
