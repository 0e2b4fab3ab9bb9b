"""The change-point bars of the lists the database holds, simulated when the server starts,
so that no reader's check and no agreement page waits for them (app/readers/changepoint.py)."""

import logging

from sqlalchemy import func, select
from sqlalchemy.engine import Engine
from sqlmodel import Session, col

from app.readers.changepoint import prepare
from app.studies.models import Assignment

logger = logging.getLogger(__name__)


def warm_bars(engine: Engine) -> None:
    """Logged and dropped on failure: a bar not simulated now is simulated when first asked."""
    try:
        with Session(engine) as session:
            longest = session.scalar(select(func.max(col(Assignment.sequence))))
        if longest:
            prepare(int(longest))
            logger.info("change-point bars simulated for lists of up to %d reads", longest)
    except Exception:
        logger.exception("the change-point bars could not be simulated in advance")
