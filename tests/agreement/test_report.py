"""A study's report: the reads it rests on, and every count beside every figure."""

from sqlalchemy.engine import Engine
from sqlmodel import Session

from app.agreement.reads import load
from app.agreement.report import Slice, study_report
from app.answers import AnswerIn, submit_answer, undo_last
from app.worklist import get_assignment
from tests.studies.conftest import StudySetup, make_study


def answer_all(engine: Engine, setup: StudySetup, pattern: dict[str, list[str]]) -> None:
    """Reader i answers case k (in the study's item order) with pattern[name][k]."""
    with Session(engine) as session:
        data = load(session, setup.study)
        order = [c.item_id for c in data.cases]
        for reader in setup.readers:
            given = pattern[reader.name]
            n = 1
            while True:
                try:
                    assignment = get_assignment(session, setup.study, reader, n)
                except LookupError:
                    break
                value = given[order.index(assignment.item_id)]
                overall = {"yes": "accept", "no": "reject"}.get(value, "reject")
                submit_answer(session, setup.study, assignment, AnswerIn(
                    compliance=value, structure="yes", realism="yes", fidelity="yes",
                    overall=overall, confidence=3, submission_id=f"r-{reader.name}-{n:04d}"))
                n += 1


def test_counts_decisions_and_missing_fidelity(demo_engine: Engine) -> None:
    setup = make_study(demo_engine, readers=3)
    pattern = {"reader-0": ["yes"] * 6 + ["no", "cannot_assess"],
               "reader-1": ["yes"] * 5 + ["no", "no", "no"],
               "reader-2": ["yes"] * 4 + ["no"] * 4}
    answer_all(demo_engine, setup, pattern)
    with Session(demo_engine) as session:
        report = study_report(load(session, setup.study), resamples=200)
    compliance = report["questions"]["compliance"]  # type: ignore[index]
    assert report["n_cases"] == 8 and compliance["n_cases"] == 8
    assert compliance["cannot_assess"] == {"reader-0": 1, "reader-1": 0, "reader-2": 0}
    assert compliance["reference"]["decided"] == {"unanimous": 6, "majority": 2,
                                                  "adjudicated": 0, "unresolved": 0}
    # The judge accepted every edit it passed on; imported verdicts never scored fidelity.
    assert report["questions"]["fidelity"]["judge_missing"] == 8  # type: ignore[index]
    versus = compliance["judge_vs_reference"]
    assert versus["n"] + versus["left_out"] == 8
    assert versus["bootstrap"]["agreement"]["resamples"] in (0, 200)
    among = compliance["among_readers"]
    assert among["fleiss_kappa"]["n"] == 7 and among["krippendorff_alpha"]["n"] == 8


def test_a_withdrawn_answer_is_no_read_and_slices_filter(demo_engine: Engine) -> None:
    setup = make_study(demo_engine)
    answer_all(demo_engine, setup, {"reader-0": ["yes"] * 8, "reader-1": ["no"] * 8})
    with Session(demo_engine) as session:
        undo_last(session, setup.study, setup.readers[0].id or 0)
        data = load(session, setup.study)
        everything = study_report(data, resamples=200)
        removals = study_report(data, Slice(direction=("remove",)), resamples=200)
    assert everything["questions"]["compliance"]["missing"]["reader-0"] == 1  # type: ignore[index]
    assert removals["n_cases"] == 4 and removals["slice"]["direction"] == ["remove"]  # type: ignore[index]


def test_repeat_reads_give_intra_reader_agreement(demo_engine: Engine) -> None:
    setup = make_study(demo_engine, repeat_fraction=0.5)
    answer_all(demo_engine, setup, {"reader-0": ["yes"] * 8, "reader-1": ["no"] * 8})
    with Session(demo_engine) as session:
        report = study_report(load(session, setup.study), resamples=200)
    intra = report["intra_reader"]
    assert set(intra) == {"reader-0", "reader-1"}  # type: ignore[arg-type]
    same = intra["reader-0"]["compliance"]  # type: ignore[index]
    assert same["n"] == 4 and same["agreement"]["value"] == 1.0
