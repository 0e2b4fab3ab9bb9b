"""Each task carries its final edit's metrics, so /cases can sort and bound them by index.

Kept in step in three places: when metrics are stored (app/images/metrics_store.py), when a
pipeline run ends (app/jobs/store.py) and after an import (app/importer/tree.py).
"""

from typing import Any

from sqlalchemy import ColumnElement, exists, select, update
from sqlalchemy.engine import Connection
from sqlmodel import Session, col

from app.models import AttemptMetric, Task

# Task column -> AttemptMetric column it mirrors.
FINAL = {"final_changed": "changed_fraction", "final_ssim_outside": "ssim_outside",
         "final_regions": "changed_regions", "final_psnr": "psnr"}


def sync_final(db: Session | Connection, where: ColumnElement[bool] | None = None) -> None:
    """Copy each task's final-edit metrics onto it (None while unmeasured or unreadable)."""
    values: dict[str, Any] = {
        task_column: select(getattr(AttemptMetric, metric_column)).where(
            col(AttemptMetric.attempt_id) == Task.thumb_attempt_id,
            col(AttemptMetric.error).is_(None)).scalar_subquery()
        for task_column, metric_column in FINAL.items()}
    statement = update(Task).values(values)
    db.execute(statement if where is None else statement.where(where))


def clear_stale_final(db: Session | Connection) -> None:
    """After an import or a new run changed some tasks' final edit: figures that belong to
    an edit no longer final are cleared (the new edit is measured in the background)."""
    measured = exists().where(col(AttemptMetric.attempt_id) == Task.thumb_attempt_id)
    db.execute(update(Task).where(col(Task.final_changed).is_not(None), ~measured)
               .values(dict.fromkeys(FINAL)))
