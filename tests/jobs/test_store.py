"""The task row after a run: the importer and the pipeline's store sum a run up by one rule."""

from pathlib import Path

from sqlalchemy.engine import Engine
from sqlmodel import Session

from app.cases.summary import task_summary
from app.jobs import store
from app.models import Task
from pipeline.ports import Round
from pipeline.vocabulary import DIMENSION_BITS, Dimension, Outcome
from tests.pipeline.test_loop import a_task


def _round(number: int) -> Round:
    return Round(number=number, instruction="make it plain", instruction_thinking="",
                 image=None, edit_error="No image in response", verdict=None,
                 verdict_error=None, judge_thinking="", judge_model=None, prompt_version=None,
                 raw="", calls={})


def test_a_run_without_an_image_leaves_its_task_without_a_thumbnail(demo_engine: Engine,
                                                                     tmp_path: Path) -> None:
    # Before one rule, the store kept the previous run's thumbnail (and so its metrics and a
    # place in study pools) for a task whose latest run drew nothing; the importer did not.
    task_id = a_task(demo_engine)
    with Session(demo_engine) as session:
        task = session.get(Task, task_id)
        assert task is not None and task.thumb_attempt_id is not None
    root = tmp_path / "out"
    root_id = store.output_root(demo_engine, root)
    run_id = store.start_run(demo_engine, task_id)
    store.save_round(demo_engine, run_id, root_id, root, _round(1))
    store.finish_run(demo_engine, run_id, Outcome.failed)
    with Session(demo_engine) as session:
        task = session.get(Task, task_id)
        assert task is not None
        assert (task.latest_run_id, task.outcome, task.n_rounds) == (run_id, "failed", 1)
        assert task.thumb_attempt_id is None and task.accepted_attempt_id is None


def test_the_summary_names_the_latest_run_s_edits_and_failed_dimensions() -> None:
    verdicts = [{"compliance": False, "structure": True, "realism": None, "fidelity": True},
                {"compliance": True, "structure": True, "realism": False, "fidelity": True}]
    summary = task_summary(7, Outcome.success, [(11, True), (12, False), (13, True)], verdicts)
    assert summary == {
        "latest_run_id": 7, "outcome": "success", "n_rounds": 3,
        "failed_mask": DIMENSION_BITS[Dimension.compliance] | DIMENSION_BITS[Dimension.realism],
        "accepted_attempt_id": 13, "thumb_attempt_id": 13}
    failed = task_summary(8, Outcome.failed, [(21, True), (22, False)], [])
    assert (failed["accepted_attempt_id"], failed["thumb_attempt_id"]) == (None, 21)
