"""The report a page asks for, computed once per state of the study's answers.

A report takes about a second (the cluster bootstrap), so it is kept until an answer or a
verdict of the study changes: the key holds the study, the slice, and a fingerprint of
everything the figures rest on.
"""

import threading
from collections import OrderedDict
from typing import Any

from sqlalchemy import func, select
from sqlmodel import Session, col

from app.agreement.charts import report_charts
from app.agreement.consistency import judge_consistency
from app.agreement.reads import StudyReads, load
from app.agreement.report import Slice, study_report
from app.models import JudgeVerdict
from app.study_models import Adjudication, Answer, Assignment, Study, StudyItem

KEEP = 32
_lock = threading.Lock()
_reports: OrderedDict[tuple[object, ...], tuple[StudyReads, dict[str, Any], dict[str, str]]] = OrderedDict()


def _fingerprint(session: Session, study: Study) -> tuple[object, ...]:
    answers = session.execute(
        select(func.count(), func.max(Answer.id)).select_from(Answer)
        .join(Assignment, col(Assignment.id) == Answer.assignment_id)
        .where(col(Assignment.study_id) == study.id)).one()
    verdicts = session.scalar(
        select(func.max(JudgeVerdict.id)).where(col(JudgeVerdict.attempt_id).in_(
            select(col(StudyItem.attempt_id)).where(col(StudyItem.study_id) == study.id))))
    decisions = session.execute(select(func.count(), func.max(Adjudication.id)).where(
        col(Adjudication.study_id) == study.id)).one()
    return (study.id, tuple(answers), verdicts, tuple(decisions))


def report_for(session: Session, study: Study,
               scope: Slice) -> tuple[StudyReads, dict[str, Any], dict[str, str]]:
    """The reads, the report and its charts (SVG) for this slice of the study."""
    key = (_fingerprint(session, study), scope)
    with _lock:
        if key in _reports:
            _reports.move_to_end(key)
            return _reports[key]
    data = load(session, study)
    report = study_report(data, scope)
    read = select(col(StudyItem.attempt_id)).where(col(StudyItem.study_id) == study.id)
    report["judge_self_consistency"] = judge_consistency(session, session.scalars(read)).as_dict()
    found = (data, report, report_charts(report))
    with _lock:
        _reports[key] = found
        while len(_reports) > KEEP:
            _reports.popitem(last=False)
    return found
