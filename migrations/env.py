"""Alembic environment. The connection comes from app.db.migrate, or from the settings
when run as `alembic upgrade head` from the shell."""

from alembic import context
from sqlmodel import SQLModel

import app.job_models
import app.judges.models
import app.models
import app.studies.models  # noqa: F401
from app.db import include_object, make_engine
from app.settings import get_settings

target_metadata = SQLModel.metadata


def run_migrations() -> None:
    connection = context.config.attributes.get("connection")
    if connection is not None:
        context.configure(connection=connection, target_metadata=target_metadata,
                          render_as_batch=True, include_object=include_object)
        with context.begin_transaction():
            context.run_migrations()
        return
    engine = make_engine(get_settings().resolved_database_url())
    with engine.begin() as conn:
        context.configure(connection=conn, target_metadata=target_metadata,
                          render_as_batch=True, include_object=include_object)
        with context.begin_transaction():
            context.run_migrations()


run_migrations()
