"""SSIM outside each reader's region, computed in the background for answers that have one."""

import csv
import io

from sqlalchemy.engine import Engine
from sqlmodel import Session, col, select

from app.images.roi import Roi
from app.studies import roi_metrics
from app.studies.answers import AnswerIn, submit_answer, undo_last
from app.studies.export import iter_answer_csv
from app.studies.models import Assignment, RoiMetric
from tests.studies.conftest import make_study

BASE = {"compliance": "yes", "structure": "yes", "realism": "yes", "fidelity": "yes",
        "overall": "accept", "confidence": 4}


def test_regions_are_measured_once_and_retractions_are_not(demo_engine: Engine) -> None:
    setup = make_study(demo_engine)
    with Session(demo_engine) as session:
        reader = setup.readers[0]
        first, second, third = session.scalars(select(Assignment).where(
            col(Assignment.user_id) == reader.id).order_by(col(Assignment.sequence)).limit(3)).all()
        whole = Roi(kind="rect", points=[(0, 0), (1, 1)])
        corner = Roi(kind="freehand", points=[(0, 0), (0.1, 0), (0, 0.1)])
        a = submit_answer(session, setup.study, first,
                          AnswerIn(**BASE, roi=whole, submission_id="roi-a-0001"))
        b = submit_answer(session, setup.study, second,
                          AnswerIn(**BASE, roi=corner, submission_id="roi-b-0001"))
        submit_answer(session, setup.study, third, AnswerIn(**BASE, submission_id="roi-c-0001"))
        assert undo_last(session, setup.study, reader.id) is not None  # retracts the third
        assert roi_metrics.pending(session) == [a.id, b.id]

    assert roi_metrics.compute_pending(demo_engine) == 2
    assert roi_metrics.compute_pending(demo_engine) == 0
    with Session(demo_engine) as session:
        covered = session.get(RoiMetric, a.id)
        corner_only = session.get(RoiMetric, b.id)
    assert covered is not None and corner_only is not None
    assert covered.error is None and covered.ssim_outside_roi is None  # nothing lies outside
    assert covered.changed_outside_roi == 0.0
    # The demo lesion is not in the top-left corner: its change lies outside that region.
    assert corner_only.ssim_outside_roi is not None and 0 < corner_only.ssim_outside_roi < 1
    assert corner_only.changed_outside_roi is not None and corner_only.changed_outside_roi > 0.9

    with Session(demo_engine) as session:
        rows = list(csv.DictReader(io.StringIO("".join(iter_answer_csv(session, setup.study)))))
    by_id = {row["item"]: row for row in rows if row["roi"]}
    assert len(by_id) == 2
    measured = [row for row in rows if row["ssim_outside_roi"]]
    assert [float(r["ssim_outside_roi"]) for r in measured] == [round(corner_only.ssim_outside_roi, 4)]
