"""The frame a quality estimate rests on is the pool the study sampled from (app/studies/pool.py),
edit for edit, with each edit's verdict of record, facets and source image."""

import json

import numpy as np
from sqlalchemy.engine import Engine
from sqlmodel import Session, col, select

from app.cases.filters import CaseFilter
from app.models import Attempt, JudgeVerdict, Task
from app.quality.population import encoded, frame_of, grouped
from app.studies.models import Design, Study
from app.studies.pool import candidates
from tests.quality.conftest import validation_study
from tests.studies.conftest import make_study

FACETS = ("verdict", "direction", "modality", "disease")


def _pool(session: Session, study: Study) -> dict[int, dict[str, str]]:
    raw = json.loads(study.selection)
    found = candidates(session, CaseFilter(**{k: tuple(v) if isinstance(v, list) else v
                                              for k, v in raw["filter"].items()
                                              if k in CaseFilter.__dataclass_fields__}),
                       Design(study.design), FACETS if study.design == "validation" else FACETS[1:])
    return {c.attempt_id or 0: c.values | {"image": str(c.source_image_id)} for c in found}


def _frame_values(session: Session, study: Study) -> dict[int, dict[str, str]]:
    frame = frame_of(session, study)
    facets = FACETS if study.design == "validation" else FACETS[1:]
    return {int(a): {f: str(frame.facets[f][i]) for f in facets} | {"image": str(frame.clusters[i])}
            for i, a in enumerate(frame.attempt_ids)}


def test_a_validation_frame_is_the_pool_it_was_drawn_from(demo_engine: Engine) -> None:
    study = validation_study(demo_engine)
    with Session(demo_engine) as session:
        frame = frame_of(session, study)
        assert _frame_values(session, study) == _pool(session, study)
        assert list(frame.attempt_ids) == sorted(frame.attempt_ids)
        # The recorded pool sizes, stratum by stratum.
        pool = json.loads(study.selection)["pool"]
        for key, size in pool.items():
            verdict, modality = key.split("/")
            chosen = (frame.facets["verdict"] == verdict) & (frame.facets["modality"] == modality)
            assert int(chosen.sum()) == size
        accepted = set(session.exec(select(Task.accepted_attempt_id)).all())
        in_frame = set(frame.attempt_ids.tolist())
        assert {int(a) for a in frame.attempt_ids[frame.accepted]} == accepted & in_frame


def test_the_first_verdict_is_the_one_of_record(demo_engine: Engine) -> None:
    """A re-judgement stores a later verdict; the frame keeps the first. An edit whose first
    verdict could not be read leaves the validation pool even when a later one could."""
    study = validation_study(demo_engine)
    with Session(demo_engine) as session:
        frame = frame_of(session, study)
        flipped, broken = int(frame.attempt_ids[0]), int(frame.attempt_ids[1])
        before = frame.judge["overall"][0]
        session.add(JudgeVerdict(attempt_id=flipped, qualified=not bool(before), compliance=False,
                                 structure=False, realism=False))
        first_of_broken = session.exec(select(JudgeVerdict).where(
            col(JudgeVerdict.attempt_id) == broken).order_by(col(JudgeVerdict.id))).first()
        assert first_of_broken is not None
        first_of_broken.error = "JSON parse error: Expecting value"
        first_of_broken.qualified = None
        session.add(first_of_broken)
        session.add(JudgeVerdict(attempt_id=broken, qualified=True))
        session.commit()
        after = frame_of(session, study)
        assert after.judge["overall"][0] == before
        assert broken not in after.attempt_ids.tolist()
        assert _frame_values(session, study) == _pool(session, study)


def test_the_judge_answers_are_read_with_their_gaps(demo_engine: Engine) -> None:
    """Yes, no and no answer (nan) per question, as stored."""
    study = validation_study(demo_engine)
    with Session(demo_engine) as session:
        assert_judge_as_stored(session, study)


def assert_judge_as_stored(session: Session, study: Study) -> None:
    frame = frame_of(session, study)
    some = [int(a) for a in frame.attempt_ids]
    stored = {v.attempt_id: v for v in session.exec(select(JudgeVerdict).where(
        col(JudgeVerdict.attempt_id).in_(some)).order_by(col(JudgeVerdict.id).desc()))}
    seen = set()
    for i, attempt_id in enumerate(some):
        verdict = stored[attempt_id]
        for question, column in (("overall", "qualified"), ("compliance", "compliance"),
                                 ("structure", "structure"), ("realism", "realism"),
                                 ("fidelity", "fidelity")):
            value = getattr(verdict, column)
            seen.add(value)
            got = frame.judge[question][i]
            assert (np.isnan(got) if value is None else got == float(value)), (attempt_id, question)
    assert seen == {True, False, None}


def test_an_accepted_edits_frame_is_every_accepted_edit(demo_engine: Engine) -> None:
    setup = make_study(demo_engine, design=Design.accepted)
    with Session(demo_engine) as session:
        frame = frame_of(session, setup.study)
        assert _frame_values(session, setup.study) == _pool(session, setup.study)
        assert frame.accepted.all()
        # The study's filter: chest X-ray tasks that ended in an accepted edit.
        assert len(frame) == len(session.exec(select(Attempt.id).join(
            Task, col(Task.accepted_attempt_id) == Attempt.id).where(
            col(Task.modality) == "chest_xray")).all())


def test_grouping_by_coded_facets_keeps_each_combination() -> None:
    modality = np.array(["fundus", "chest_xray", "fundus", "brain_mri", "chest_xray"], dtype=object)
    direction = np.array(["add", "remove", "remove", "add", "remove"], dtype=object)
    names, codes = encoded(modality)
    assert list(names) == ["brain_mri", "chest_xray", "fundus"]
    assert list(codes) == [2, 1, 2, 0, 1]
    groups, which = grouped([encoded(modality), encoded(direction)])
    assert [groups[w] for w in which] == list(zip(modality, direction, strict=True))
    assert len(groups) == 4
