"""The final edit's metrics mirrored on each task, for sorting and bounding /cases."""

from sqlalchemy.engine import Engine
from sqlmodel import Session, select

from app.images.final_metrics import clear_stale_final
from app.images.metrics_store import compute_pending
from app.models import AttemptMetric, Task


def test_each_task_carries_its_final_edits_metrics(demo_engine: Engine) -> None:
    """Copied onto the task for /cases; cleared when the final edit changes until it is
    measured (a pipeline run or a re-import), filled again by the next measurement."""
    while compute_pending(demo_engine, limit=200):
        pass
    with Session(demo_engine) as session:
        task = session.exec(select(Task).where(Task.outcome == "success", Task.n_rounds >= 2)).first()
        assert task is not None and task.thumb_attempt_id is not None
        metric = session.get(AttemptMetric, task.thumb_attempt_id)
        assert metric is not None and task.final_changed == metric.changed_fraction
        assert task.final_regions == metric.changed_regions and task.final_psnr == metric.psnr
        # A new final edit, not yet measured: its metrics row does not exist yet.
        session.delete(metric)
        session.commit()
        clear_stale_final(session)
        session.commit()
        session.refresh(task)
        assert task.final_changed is None and task.final_ssim_outside is None
        others = session.exec(select(Task).where(Task.final_changed != None)).all()  # noqa: E711
        assert others  # only the stale one was cleared
    assert compute_pending(demo_engine) == 1
    with Session(demo_engine) as session:
        assert session.get(Task, task.id).final_changed == metric.changed_fraction  # type: ignore[union-attr]
