"""The judge's calibration on a read study: the stored score when every read edit has one,
the rubric-weighted answers otherwise, and a reason instead of a curve that cannot be drawn."""

from sqlalchemy.engine import Engine
from sqlmodel import Session, col, select

from app.models import JudgeVerdict
from app.quality.calibration import DERIVED, STORED
from app.quality.report import quality_report
from tests.quality.conftest import read_study, validation_study


def test_a_stored_score_is_used_when_every_read_edit_has_one(demo_engine: Engine) -> None:
    study = validation_study(demo_engine)
    read_study(demo_engine, study)
    with Session(demo_engine) as session:
        for verdict in session.exec(select(JudgeVerdict)):
            # Passing verdicts score 0.75 to 0.95, failing ones 0.30 to 0.60 (spread by id).
            spread = (verdict.id or 0) % 5 / 20
            verdict.weighted_score = 0.75 + spread if verdict.qualified else 0.30 + 1.5 * spread
            session.add(verdict)
        session.commit()
        calibration = quality_report(session, study.id).calibration
    assert calibration is not None and calibration.score_source == STORED
    assert calibration.auc is not None and calibration.auc.value is not None
    paper, best = calibration.thresholds
    assert paper.threshold == 0.7 and best.threshold >= 0.75
    # Every edit the readers passed, the judge passed: sensitivity 1 at 0.7.
    assert paper.sensitivity.value == 1.0
    assert sum(b.n for b in calibration.bins) == calibration.reads


def test_one_missing_score_falls_back_to_the_rubric(demo_engine: Engine) -> None:
    study = validation_study(demo_engine)
    read_study(demo_engine, study)
    with Session(demo_engine) as session:
        verdicts = list(session.exec(select(JudgeVerdict).order_by(col(JudgeVerdict.id))))
        for verdict in verdicts[1:]:
            verdict.weighted_score = 0.9 if verdict.qualified else 0.2
            session.add(verdict)
        session.commit()
        calibration = quality_report(session, study.id).calibration
    assert calibration is not None and calibration.score_source == DERIVED


def test_readers_who_pass_everything_give_a_reason_not_a_curve(demo_engine: Engine) -> None:
    study = validation_study(demo_engine)
    read_study(demo_engine, study, rule=lambda reader, case: True)
    with Session(demo_engine) as session:
        calibration = quality_report(session, study.id).calibration
    assert calibration is not None and calibration.auc is None and calibration.roc == []
    assert calibration.reason is not None and "failed 0" in calibration.reason
    # Per question the figures that can be computed still are: sensitivity, not specificity.
    overall = calibration.questions["overall"]
    assert overall["specificity"].value is None and overall["sensitivity"].value is not None
