"""A study's report: the reads it rests on, every count beside every figure, and a frozen judge."""

from pathlib import Path

from sqlalchemy.engine import Engine
from sqlmodel import Session, select

from app.agreement.reads import load
from app.agreement.report import Slice, study_report
from app.agreement.service import report_for
from app.jobs.options import JobOptions
from app.jobs.queue import create_job
from app.jobs.runner import claim, run_job
from app.models import JudgeVerdict
from app.studies.answers import AnswerIn, submit_answer, undo_last
from app.studies.models import Design, Study, StudyItem
from app.studies.versions import lock_study
from app.studies.worklist import get_assignment
from pipeline.loop import RetryPolicy
from pipeline.offline import OfflineBackend
from tests import aio
from tests.studies.conftest import StudySetup, make_study


def answer_all(engine: Engine, setup: StudySetup, pattern: dict[str, list[str]],
               skip: dict[str, set[int]] | None = None) -> None:
    """Reader i answers case k (in the study's item order) with pattern[name][k]; cases in
    skip[name] (by item order) are left unread."""
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
                n += 1
                if assignment.item_id not in order:  # a known-answer case: no figure's
                    continue
                index = order.index(assignment.item_id)
                if index in (skip or {}).get(reader.name, set()):
                    continue
                value = given[index]
                overall = {"yes": "accept", "no": "reject"}.get(value, "reject")
                submit_answer(session, setup.study, assignment, AnswerIn(
                    compliance=value, structure="yes", realism="yes", fidelity="yes",
                    overall=overall, confidence=3, submission_id=f"r-{reader.name}-{n:04d}"))


def test_counts_decisions_and_missing_fidelity(demo_engine: Engine) -> None:
    setup = make_study(demo_engine, readers=3)
    pattern = {"reader-0": ["yes"] * 6 + ["no", "cannot_assess"],
               "reader-1": ["yes"] * 5 + ["no", "no", "no"],
               "reader-2": ["yes"] * 4 + ["no"] * 4}
    answer_all(demo_engine, setup, pattern)
    with Session(demo_engine) as session:
        report = study_report(load(session, setup.study), resamples=200).as_dict()
    compliance = report["questions"]["compliance"]
    assert report["n_cases"] == 8 and compliance["n_cases"] == 8
    assert compliance["cannot_assess"] == {"reader-0": 1, "reader-1": 0, "reader-2": 0}
    assert compliance["reference"]["decided"] == {"unanimous": 6, "single_vote": 0, "majority": 2,
                                                  "adjudicated": 0, "tie": 0, "no_vote": 0}
    # The judge accepted every edit it passed on; imported verdicts never scored fidelity.
    assert report["questions"]["fidelity"]["judge_missing"] == 8
    versus = compliance["judge_vs_reference"]
    assert versus["n"] + versus["left_out"] == 8 and versus["agreement"]["clusters"] >= 1
    among = compliance["among_readers"]
    assert among["n_rated_twice"] == 8 and among["fleiss_kappa"]["value"] is not None
    # An accepted-only study: the judge passes everything, kappa is undefined, and it says so.
    assert versus["table"]["a_fail_b_pass"] == 0 and versus["kappa"]["value"] in (None, 0.0)
    assert report["multiplicity"]["primary"] == "overall"
    assert set(report["multiplicity"]["adjusted_p"]) == {"compliance", "structure", "realism", "fidelity"}


def test_a_withdrawn_answer_is_no_read_and_slices_filter(demo_engine: Engine) -> None:
    setup = make_study(demo_engine)
    answer_all(demo_engine, setup, {"reader-0": ["yes"] * 8, "reader-1": ["no"] * 8})
    with Session(demo_engine) as session:
        undo_last(session, setup.study, setup.readers[0].id or 0)
        data = load(session, setup.study)
        everything = study_report(data, resamples=200).as_dict()
        removals = study_report(data, Slice(direction=("remove",)), resamples=200).as_dict()
    assert everything["questions"]["compliance"]["missing"]["reader-0"] == 1
    # Every case but one is tied (two readers who disagree); the withdrawn one rests on one vote.
    decided = everything["questions"]["compliance"]["reference"]["decided"]
    assert decided["tie"] == 7 and decided["single_vote"] == 1
    assert removals["n_cases"] == 4 and removals["slice"]["direction"] == ["remove"]


def test_repeat_reads_give_intra_reader_agreement(demo_engine: Engine) -> None:
    setup = make_study(demo_engine, repeat_fraction=0.5)
    answer_all(demo_engine, setup, {"reader-0": ["yes"] * 8, "reader-1": ["no"] * 8})
    with Session(demo_engine) as session:
        report = study_report(load(session, setup.study), resamples=200).as_dict()
    intra = report["intra_reader"]
    assert set(intra) == {"reader-0", "reader-1"}
    same = intra["reader-0"]["compliance"]
    assert same["n"] == 4 and same["agreement"]["value"] == 1.0


def rejudge(engine: Engine, study: Study, tmp_path: Path) -> None:
    """A real re-judge job (offline backend) on the study's tasks: new verdicts on their edits."""
    with Session(engine) as session:
        tasks = sorted({i.task_id for i in session.exec(select(StudyItem).where(
            StudyItem.study_id == study.id))})
    job_id = create_job(engine, tasks, JobOptions(kind="rejudge", rejudge_times=1))
    lease = claim(engine, job_id)
    assert lease is not None
    aio.run(run_job(engine, lease, lambda _: OfflineBackend(), tmp_path / "out",
                    policy=RetryPolicy(attempts=2, base_seconds=0.0)))


def test_a_locked_studys_figures_never_move(demo_engine: Engine, tmp_path: Path) -> None:
    """Validation design, both verdicts, three readers, one reader who skipped cases, ties;
    then the lock and a re-judge. Once, the newest verdict of any model was used."""
    setup = make_study(demo_engine, readers=3, design=Design.validation)
    with Session(demo_engine) as session:
        cases = load(session, setup.study).cases
    n = len(cases)
    judge = [c.judge["overall"] for c in cases]
    # Every reader differs from the judge where i % 5 == 1 (so the judge errs both ways: the
    # items come stratum by stratum, fail strata first); readers 0 and 1 split where
    # i % 5 == 2, and reader 2, who skipped every fourth case, leaves some of those tied.
    def reads(differ: set[int]) -> list[str]:
        return ["yes" if (j != (i % 5 in differ)) else "no" for i, j in enumerate(judge)]
    pattern = {"reader-0": reads({1}), "reader-1": reads({1, 2}), "reader-2": reads({1, 3})}
    answer_all(demo_engine, setup, pattern, skip={"reader-2": set(range(0, n, 4))})
    with Session(demo_engine) as session:
        study = session.get(Study, setup.study.id)
        assert study is not None
        lock_study(session, study)
        before = report_for(session, study, Slice())[1].as_dict()
        verdicts_before = len(session.exec(select(JudgeVerdict)).all())
    overall = before["questions"]["overall"]
    table = overall["judge_vs_reference"]["table"]
    assert min(table.values()) > 0  # a non-degenerate 2x2: too strict and too lenient estimable
    assert overall["judge_vs_reference"]["kappa"]["low"] is not None
    assert overall["reference"]["decided"]["tie"] > 0  # reader 2's gaps leave 1-1 splits
    assert before["facts"]["reader_details"][2]["read"] < before["facts"]["reader_details"][2]["assigned"]
    assert "reader-2 read" in before["facts"]["design"]["sentence"]
    assert before["judge_b"] == {}

    rejudge(demo_engine, setup.study, tmp_path)
    with Session(demo_engine) as session:
        assert len(session.exec(select(JudgeVerdict)).all()) > verdicts_before
        study = session.get(Study, setup.study.id)
        assert study is not None
        after = report_for(session, study, Slice())[1].as_dict()
    assert after["questions"] == before["questions"]
    assert list(after["judge_b"]) and all(j["n_cases"] > 0 for j in after["judge_b"].values())


def test_the_by_disease_figures_wait_for_a_look_and_are_the_same_then(demo_engine: Engine) -> None:
    """The agreement page shows no by-disease figure: they are computed on first look (the
    charts, tables, JSON, report), to exactly the figures computed at once."""
    import json

    from app.agreement.report import _by_disease, first_reads, question_data, subgroups

    setup = make_study(demo_engine, readers=2, design=Design.validation)
    answer_all(demo_engine, setup, {"reader-0": ["yes", "no"] * 8, "reader-1": ["yes"] * 16})
    with Session(demo_engine) as session:
        data = load(session, setup.study)
    report = study_report(data, resamples=200)
    lazy = report.questions["overall"].by_disease
    assert lazy._pending is not None  # type: ignore[attr-defined]  # nothing computed yet
    tables = {q: question_data(data.cases, data.readers, first_reads(data.reads), data.decisions, q)
              for q in report.questions}
    eager = _by_disease(tables, subgroups(data.cases, 200))
    assert json.dumps(report.as_dict()["questions"]["overall"]["by_disease"], sort_keys=True) \
        == json.dumps(eager["overall"], sort_keys=True)
    assert dict(report.questions["compliance"].by_disease.items()) == eager["compliance"]
    assert lazy._pending is None  # type: ignore[attr-defined]
