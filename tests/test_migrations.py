"""The Alembic migrations build exactly the tables the models describe."""

from pathlib import Path

from alembic.autogenerate import compare_metadata
from alembic.migration import MigrationContext
from sqlmodel import SQLModel

import app.study_models  # noqa: F401  (its tables must be compared too)
from app.db import include_object, make_engine


def test_models_and_migrations_agree(template_db: Path) -> None:
    engine = make_engine(f"sqlite:///{template_db}")
    with engine.connect() as conn:
        context = MigrationContext.configure(conn, opts={"include_object": include_object})
        assert compare_metadata(context, SQLModel.metadata) == []
    engine.dispose()
