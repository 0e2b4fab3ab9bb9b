"""A locked validation study on the demo data whose readers answer as the fair offline judge
would: so each offline candidate's fault shows on the leaderboard as its bias implies."""

from dataclasses import dataclass

import pytest
from sqlalchemy.engine import Engine
from sqlmodel import Session

from app.agreement.reads import load
from app.cases.filters import CaseFilter
from app.judges.candidates import CandidatePlan, create_candidate
from app.judges.models import JudgeCandidate
from app.judges.reference import Ref
from app.judges.reference import Reference as Loaded
from app.judges.scoring import _images, offline_judge, reference_edits
from app.models import User
from app.studies.answers import AnswerIn, submit_answer
from app.studies.design import StudyPlan, create_study
from app.studies.models import Design, Study
from app.studies.versions import lock_study
from app.studies.worklist import get_assignment
from pipeline.judge_spec import default_template
from tests import aio
from tests.studies.conftest import StudySetup, make_study


@dataclass
class Reference:
    setup: StudySetup
    study_id: int


def candidate(engine: Engine, name: str, bias: str | None = None, repeats: int = 1) -> JudgeCandidate:
    with Session(engine) as session:
        return create_candidate(session, CandidatePlan(
            name=name, backend="offline", model="offline-heuristic-1", template=default_template(),
            repeats=repeats, bias=bias), created_by=None)


def fair_answers(engine: Engine, study_id: int) -> dict[int, AnswerIn]:
    """Item id -> the answer the fair offline judge gives, as a reader would enter it."""
    fair = candidate(engine, f"readers rule {study_id}")
    from app.judges.candidates import spec_of

    found = {}
    with Session(engine) as session:
        study = session.get(Study, study_id)
        assert study is not None
        data = load(session, study)
        # Every edit, before any is read: what the readers will answer is being made here.
        every: Loaded = Loaded(Ref("study", study_id), study.name, (study_id,), data,
                               {c.item_id: {} for c in data.cases})
        for edit in reference_edits(session, every):
            info, original, edited = _images(session, edit)
            verdict = aio.run(offline_judge(spec_of(fair), info, original, edited,
                                            edit.instruction, 0))
            assert verdict.fields is not None
            words = {d: "yes" if verdict.fields[d] else "no"
                     for d in ("compliance", "structure", "realism", "fidelity")}
            found[edit.item_id] = AnswerIn(**words, overall="accept" if verdict.fields["qualified"]
                                           else "reject", confidence=3,
                                           submission_id=f"fair-{edit.item_id:06d}-x")
    return found


def answer_and_lock(engine: Engine, study_id: int, readers: list[User]) -> None:
    """Every reader answers every case as the fair offline judge would; the study is locked."""
    answers = fair_answers(engine, study_id)
    with Session(engine) as session:
        study = session.get(Study, study_id)
        assert study is not None
        for reader in readers:
            n = 1
            while True:
                try:
                    assignment = get_assignment(session, study, reader, n)
                except LookupError:
                    break
                n += 1
                given = answers[assignment.item_id]
                submit_answer(session, study, assignment, given.model_copy(
                    update={"submission_id": f"{reader.name}-{assignment.item_id:06d}-x"}))
        lock_study(session, study)


@pytest.fixture
def reference(demo_engine: Engine) -> Reference:
    setup = make_study(demo_engine, readers=2, design=Design.validation)
    answer_and_lock(demo_engine, setup.study.id or 0, setup.readers)
    return Reference(setup, setup.study.id or 0)


def second_study(engine: Engine, first: Reference, locked: bool = True) -> int:
    """Another validation study of chest X-ray edits (another seed: some edits may be the
    first's too), read by the same readers as the first, locked unless told."""
    plan = StudyPlan(name="second look", case_filter=CaseFilter(modality=("chest_xray",)),
                     design=Design.validation, reader_ids=[r.id or 0 for r in first.setup.readers],
                     seed=7, strata_facets=("verdict", "direction"),
                     per_stratum={f"{v}/{d}": 3 for v in ("pass", "fail") for d in ("add", "remove")})
    with Session(engine) as session:
        study = create_study(session=session, plan=plan, created_by=first.setup.admin)
        study_id = study.id or 0
    if locked:
        answer_and_lock(engine, study_id, first.setup.readers)
    return study_id
