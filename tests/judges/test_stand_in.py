"""Each judge on the leaderboard tested as a stand-in for a reader: the judge of record first,
on every edit of the reference (settled or not), with its kappa z-score."""

import numpy as np
from sqlalchemy.engine import Engine
from sqlmodel import Session

from app.agreement.alternative_annotator import NO, YES
from app.agreement.reads import Case, Read, StudyReads
from app.judges.leaderboard import RECORD
from app.judges.reference import Ref, Reference
from app.judges.stand_in import stand_ins


def reference(judge_noise: float, seed: int = 2) -> Reference:
    rng = np.random.default_rng(seed)
    truth = rng.random(80) < 0.5
    cases = [Case(item_id=i, uid=f"u{i}", task_id=i, task_key=f"t{i}", source_image_id=i,
                  modality="fundus", disease="drusen", direction="add", round=1,
                  judge={"overall": bool(t) ^ bool(rng.random() < judge_noise)})
             for i, t in enumerate(truth)]
    names = ["a", "b", "c", "d"]
    reads = [Read(item_id=i, reader=n, repeat=False, time_on_case_ms=1, version=1,
                  answers={"overall": "accept" if bool(t) ^ bool(rng.random() < 0.25) else "reject"})
             for i, t in enumerate(truth) for n in names]
    # A study id no candidate was scored on: the judge of record alone.
    return Reference(Ref("study", 10**6), "simulated", (10**6,), StudyReads(cases, reads, names), {})


def test_a_judge_of_record_that_knows_the_truth_stands_in(engine: Engine) -> None:
    with Session(engine) as session:
        [record] = stand_ins(session, reference(0.0), "overall", 0.1)
    assert record.name == RECORD and record.test.conclusion == YES
    assert record.kappa.z is not None and record.kappa.z > 0


def test_one_that_guesses_does_not(engine: Engine) -> None:
    with Session(engine) as session:
        [record] = stand_ins(session, reference(0.5), "overall", 0.1)
    assert record.test.conclusion == NO
    assert record.kappa.z is not None and record.kappa.z < 0
