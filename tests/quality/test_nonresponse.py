"""Drawn edits left without a consensus weigh on their own stratum, and the sensitivity lines
count them one way and the other."""

import json

import numpy as np
import pytest
from sqlalchemy.engine import Engine
from sqlmodel import Session

from app.agreement.reads import Case, load
from app.agreement.reference import Policy
from app.agreement.report import settled_consensus
from app.quality.nonresponse import within_stratum
from app.quality.report import quality_report
from tests.quality.conftest import judge_rule, read_study, validation_study


def test_a_strata_weight_stays_with_its_stratum() -> None:
    weights = np.array([2.0, 2.0, 2.0, 5.0, 5.0])
    drawn = np.ones(5, dtype=bool)
    settled = np.array([True, True, False, True, True])
    strata = np.array([0, 0, 0, 1, 1])
    adjusted = within_stratum(weights, drawn, settled, strata)
    np.testing.assert_allclose(adjusted, [3.0, 3.0, 0.0, 5.0, 5.0])


def splits_chest_passes(reader: str, case: Case) -> bool:
    """The two readers split on every other chest X-ray edit the judge passed: a tie nobody
    settles, in one stratum only."""
    if case.modality == "chest_xray" and case.judge.get("overall") and case.item_id % 2 == 0:
        return reader.endswith("-0")
    return judge_rule(reader, case)


def stratified_mean(session: Session, study, policy: Policy = Policy()) -> float:  # type: ignore[no-untyped-def]
    """The statistician's figure: each stratum's mean over its settled edits, weighted by the
    stratum's size in the pool."""
    pool = json.loads(study.selection)["pool"]
    data = load(session, study)
    settled = settled_consensus(data, policy)
    means = {}
    for key in pool:
        values = [settled[c.item_id]["overall"] for c in data.cases
                  if c.stratum == key and "overall" in settled.get(c.item_id, {})]
        if values:
            means[key] = float(np.mean(values))
    total = sum(pool[k] for k in means)
    return sum(pool[k] / total * means[k] for k in means)


def test_the_readers_alone_figure_is_the_within_stratum_estimate(demo_engine: Engine) -> None:
    study = validation_study(demo_engine)
    read_study(demo_engine, study, splits_chest_passes)
    with Session(demo_engine) as session:
        report = quality_report(session, study.id)
        judged = next(p for p in report.populations if p.key == "judged")
        row = judged.parts[0].rows["overall"]
        assert row.readers is not None
        # Before, the ties' weight was spread over every stratum: 0.2314 where this is 0.3326.
        assert row.readers.value == pytest.approx(stratified_mean(session, study), abs=1e-9)
        for name, policy in {"ties_as_pass": Policy(ties=True),
                             "ties_as_fail": Policy(ties=False)}.items():
            line = judged.sensitivity[name]["overall"].readers
            assert line is not None
            assert line.value == pytest.approx(stratified_mean(session, study, policy), abs=1e-9)
        assert (judged.sensitivity["ties_as_fail"]["overall"].readers.value  # type: ignore[union-attr]
                < row.readers.value
                < judged.sensitivity["ties_as_pass"]["overall"].readers.value)  # type: ignore[union-attr]
