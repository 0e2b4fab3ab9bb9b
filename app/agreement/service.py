"""The report a page asks for, computed once per state of the study's answers.

A report takes about a second (the cluster bootstrap), so it is kept until an answer or a
verdict of the study changes: the key holds the study, the slice, and a fingerprint of
everything the figures rest on.
"""

from dataclasses import replace
from functools import partial
from typing import Any

from sqlalchemy import select
from sqlmodel import Session, col

from app.agreement.charts import report_charts
from app.agreement.consistency import judge_consistency
from app.agreement.dawid_skene import ReferenceShift, reference_shift
from app.agreement.facts import achieved_precision, primary_clustering, study_facts
from app.agreement.judge_as_reader import JudgeAsReader, judge_as_reader
from app.agreement.monitoring import Draw, Watch, parse_targets, watch
from app.agreement.reads import StudyReads, load
from app.agreement.report import Slice, study_report
from app.agreement.report_types import AgreementReport
from app.agreement.stopping import stopping_outcome, stopping_rule
from app.audit import Head
from app.charts import narrowing_chart
from app.fingerprints import study_state
from app.memo import Memo, paused_collection
from app.studies.design_traits import rubric_kinds
from app.studies.draw_plan import (
    anticipated_agreement,
    case_weights,
    draw_plan,
    draws_edits,
    tuned_draws,
)
from app.studies.models import (
    Design,
    Study,
    StudyBatch,
    StudyDraw,
    StudyItem,
    StudyStatus,
    in_figures,
)
from app.studies.targets import units_to_meet

KEEP = 32
_reports: Memo[tuple[StudyReads, AgreementReport]] = Memo(KEEP)
_charts: Memo[dict[str, str]] = Memo(KEEP)
_watches: Memo[Watch] = Memo(KEEP)
_shifts: Memo[tuple[ReferenceShift | None]] = Memo(KEEP)
_replacements: Memo[JudgeAsReader] = Memo(KEEP)


def _fingerprint(session: Session, study: Study) -> tuple[object, ...]:
    """The study's answers, adjudications, verdicts and readers, and its readers' accounts
    (the report states each reader's qualification, which changes without an answer
    changing): one statement per request, the whole cost of a kept page's figures."""
    return (study.status, *study_state(session, study.id or 0))


def report_for(session: Session, study: Study, scope: Slice) -> tuple[StudyReads, AgreementReport]:
    """The reads and the report for this slice of the study."""
    fingerprint = _fingerprint(session, study)
    key = (fingerprint, scope)
    found = _reports.get(key)
    if found is None:
        with paused_collection():  # see app/memo.py: tens of thousands of small objects
            found = _report(session, study, scope, fingerprint)
        _reports.put(key, found)
    return found


def _report(session: Session, study: Study, scope: Slice,
            fingerprint: tuple[object, ...]) -> tuple[StudyReads, AgreementReport]:
    data = load(session, study)
    report = study_report(data, scope, primary=study.primary_question, margin=study.margin)
    in_scope = {c.item_id for c in data.cases if scope.admits(c)}
    read = select(col(StudyItem.attempt_id)).where(col(StudyItem.study_id) == study.id, in_figures())
    report = replace(
        report, facts=study_facts(session, study, data, in_scope),
        achieved=achieved_precision(report, study, primary_clustering(data, study, in_scope)),
        judge_self_consistency=judge_consistency(session, session.scalars(read)).as_dict(),
        monitoring=_monitoring(study, _watch(session, study, data, fingerprint)))
    return data, report


def reference_shift_for(session: Session, study: Study) -> ReferenceShift | None:
    """The primary question's figures under the skill-weighted reference beside the
    majority's (app/agreement/dawid_skene.py), kept per fingerprint like the report."""
    if not Design(study.design).rubric:
        return None
    fingerprint = _fingerprint(session, study)
    return _shifts.get_or_make(("shift", fingerprint), lambda: (reference_shift(
        report_for(session, study, Slice())[0], study.primary_question),))[0]


def judge_as_reader_for(session: Session, study: Study, epsilon: float) -> JudgeAsReader:
    """The judge as one more reader on the primary question, over the whole study (app/
    agreement/judge_as_reader.py), kept per fingerprint and epsilon like the report."""
    return _replacements.get_or_make(
        ("replace", _fingerprint(session, study), epsilon),
        lambda: judge_as_reader(report_for(session, study, Slice())[0], study.primary_question,
                                margin=study.margin, epsilon=epsilon))


def watch_for(session: Session, study: Study) -> Watch | None:
    """The study's figures as they stand, with their anytime-valid intervals and targets;
    None for a real-or-edited study, which compares no judge, and for a practice study,
    which never enters a figure (its page said "0 of 0 planned reads ... lock the study")."""
    if study.practice:
        return None
    return _watch(session, study, None, _fingerprint(session, study))


def watch_plot(w: Watch) -> str:
    """The watched endpoints' half-widths against the cases in their figures, each with its
    target (SVG); kept by what it draws."""
    lines = tuple((e.label, e.path, e.target) for e in w.endpoints)
    confidence = round(w.confidence * 100)
    title = f"How the {confidence} % anytime-valid intervals narrowed ({w.question})"
    return _plots.get_or_make((lines, title), lambda: narrowing_chart(
        lines, title, "compared cases in these figures (n)"))


_plots: Memo[str] = Memo(KEEP)


def _watch(session: Session, study: Study, data: StudyReads | None,
           fingerprint: tuple[object, ...]) -> Watch | None:
    """The study's watch, kept per fingerprint; from ``data`` when the caller has read the
    reads already, else read when the watch is not kept."""
    if not Design(study.design).rubric:
        return None
    primary, targets = study.primary_question, parse_targets(study.targets)

    def reads() -> StudyReads:
        return data if data is not None else load(session, study)

    if Design(study.design).draws_in_batches:
        draws, budget = adaptive_draws(session, study)
        edits = draws_edits(study)
        return _watches.get_or_make((fingerprint, len(draws)), lambda: watch(
            reads(), primary, targets, draws=draws, budget=budget, by_item=edits,
            tuned_to=tuned_draws(study, targets) if edits else None))
    return _watches.get_or_make(fingerprint, lambda: watch(
        reads(), primary, targets, secret=study.order_secret, weights=case_weights(study),
        tuned_to=units_to_meet(targets, anticipated_agreement=anticipated_agreement(study))))


def adaptive_draws(session: Session, study: Study) -> tuple[list[Draw], int]:
    """An adaptive study's draws as its figures weight them, and its budget of draws."""
    bounds = {batch: bound for batch, bound in session.execute(
        select(col(StudyBatch.batch), col(StudyBatch.bound)).where(
            col(StudyBatch.study_id) == study.id))}
    rows = list(session.scalars(select(StudyDraw).where(col(StudyDraw.study_id) == study.id)))
    # A drawn edit's unit is its item: the figures take the case, not its image.
    items = dict(session.execute(select(col(StudyItem.attempt_id), col(StudyItem.id)).where(
        col(StudyItem.study_id) == study.id)).all()) if any(d.attempt_id for d in rows) else {}
    draws = [Draw(d.batch, d.position,
                  items[d.attempt_id] if d.attempt_id is not None else d.source_image_id,
                  (1 / d.pool_images) / d.probability, bounds[d.batch]) for d in rows]
    return draws, draw_plan(study).budget


def _monitoring(study: Study, found: Watch | None) -> dict[str, Any] | None:
    if found is None:
        return None
    locked = study.status == StudyStatus.locked
    return found.as_dict() | {
        "interim": not locked, "rule": stopping_rule(found),
        "outcome": stopping_outcome(found, locked=locked, locked_at=study.locked_at)}


# A locked study's clustering, or None when it has too little to estimate one: kept as a
# one-element tuple, so that a None is kept too and not computed again on every form view.
_observed: Memo[tuple[dict[str, Any] | None]] = Memo(KEEP)
OFFERED = 5  # the newest locked studies whose clustering the planner offers


def observed_in_finished(session: Session) -> list[dict[str, Any]]:
    """The clustering observed in the newest locked studies, for the planner to offer. A
    locked study never changes, so each is computed once."""
    found = []
    locked = session.scalars(select(Study).where(
        col(Study.status) == StudyStatus.locked, col(Study.design).in_(rubric_kinds()))
        .order_by(col(Study.locked_at).desc()).limit(OFFERED))
    for study in locked:
        key = (str(session.get_bind().engine.url), study.id, study.locked_at)
        (clustering,) = _observed.get_or_make(key, partial(_clustering, session, study))
        if clustering is not None:
            found.append({"study": study.name, **clustering})
    return found


def _clustering(session: Session, study: Study) -> tuple[dict[str, Any] | None]:
    data = load(session, study)
    found = primary_clustering(data, study, {c.item_id for c in data.cases})
    return (found.as_dict() if found else None,)


def charts_for(session: Session, study: Study, scope: Slice) -> dict[str, str]:
    """The page's charts (SVG), drawn on their own request so the tables show at once."""
    key = (_fingerprint(session, study), scope)
    return _charts.get_or_make(key, lambda: report_charts(report_for(session, study, scope)[1]))


def report_json(study: Study, report: AgreementReport,
                audit: Head | None = None) -> dict[str, Any]:
    """The report as the JSON download and `medbanana stats --format json` give it, with the
    audit log's head when it was made."""
    stamp = {"audit_log": {"records": audit.records, "head_sha256": audit.digest}} if audit else {}
    return {"study": {"id": study.id, "name": study.name, "status": study.status},
            **report.as_dict(), **stamp}
