"""Every preview a study's readers will be shown, drawn when the study is made.

A preview drawn on first request took about 31 ms against 5 ms once cached, so a reader
could time an image and learn whether someone had opened it before (in another study, or as
the judge's revealed verdict). With all of a study's previews and difference maps drawn up
front, every first view is a cached one. A real-or-edited study's one blinded image per case is
drawn the same way (encoding it takes longer still).
"""

import logging
import time
from pathlib import Path

from sqlalchemy import select
from sqlalchemy.engine import Engine
from sqlmodel import Session, col

from app.images.files import ImageNotFound, ImageSize, sized_file
from app.studies.images import item_change_region, item_diff, item_image, shown_image
from app.studies.models import Design, Shows, Study, StudyItem

logger = logging.getLogger(__name__)


def warm_previews(engine: Engine, study_id: int, cache_dir: Path) -> int:
    """Draw the previews and difference maps of every item; returns how many items were
    done. A missing or unreadable image is logged and skipped (its screen says so)."""
    started, done = time.perf_counter(), 0
    with Session(engine) as session:
        study = session.get(Study, study_id)
        one_image = study is not None and study.design == Design.real_or_edited
        items = session.scalars(select(StudyItem).where(col(StudyItem.study_id) == study_id)).all()
        for item in items:
            try:
                if one_image:
                    shown_image(session, item, cache_dir)
                    if item.shows == Shows.edit:  # where a reader's click would find the change
                        item_change_region(session, item, cache_dir)
                    done += 1
                    continue
                for which in ("original", "edit"):
                    sized_file(item_image(session, item, which), ImageSize.preview, cache_dir)
                item_diff(session, item, ImageSize.preview, cache_dir)
                done += 1
            except ImageNotFound as error:
                logger.warning("study %s item %s: preview not drawn: %s", study_id, item.id, error)
    logger.info("study %s: previews of %d of %d items drawn in %.1f s", study_id, done,
                len(items), time.perf_counter() - started)
    return done
