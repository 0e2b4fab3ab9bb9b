"""PostgreSQL: indexes on (disease, id) and (modality, id) for the case browser's pages

A page is "the first 51 matches by id". PostgreSQL answered it by walking the primary key and
dropping every task that did not match, which is quick for a common value but not for one
whose tasks sit together far down the ids: 43,000 tasks walked for Pneumothorax removals on
the 88K benchmark database (58 ms a page; 20 ms with the index, benchmarks/pages.py --url
postgres). Each index walks one value's tasks in id order, and the planner, which has the
columns' statistics, takes it only where it pays. SQLite keeps none: without statistics it
took a facet index even where the primary-key walk was four times faster (see app/models.py).
Built after the rows, the two take a tenth of a second on 88K tasks.

Revision ID: 0028
Revises: 0027
Create Date: 2026-11-26 11:30:00
"""
from collections.abc import Sequence

from alembic import op

revision: str = '0028'
down_revision: str | None = '0027'
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

INDEXES = {"ix_task_facet_disease": ["disease", "id"], "ix_task_facet_modality": ["modality", "id"]}


def upgrade() -> None:
    if op.get_bind().dialect.name != "postgresql":
        return
    for name, columns in INDEXES.items():
        op.create_index(name, "task", columns)


def downgrade() -> None:
    if op.get_bind().dialect.name != "postgresql":
        return
    for name in INDEXES:
        op.drop_index(name, table_name="task")
