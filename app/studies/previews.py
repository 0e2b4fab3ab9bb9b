"""Every image a study's readers will be shown, drawn when the study is made, before any
reader may open it.

A preview drawn on first request took about 31 ms against 5 ms once cached, so a reader
could time an image and learn whether someone had opened it before (in another study, or as
the judge's revealed verdict). So a new study is marked as preparing; its previews,
difference maps (a real-or-edited study: its one blinded image per case, and each edit's
change region) are drawn; only then is it opened to its readers, and every first view is a
cached one. The study page shows "preparing images (n of N)" meanwhile. Every way a study is
made leaves it preparing (app/studies/design.py); the page or command that made it starts
the drawing, and the web app looks for studies still preparing every few seconds (one made
by a command, or one a restart cut short) and draws them.
"""

import logging
import threading
import time
from dataclasses import dataclass
from pathlib import Path

from sqlalchemy import func, select, update
from sqlalchemy.engine import Engine
from sqlmodel import Session, col

from app.claims import claimed
from app.errors import Conflict
from app.images.files import ImageKind, ImageNotFound, ImageSize, resolve_image, sized_file
from app.studies.design_traits import default_design
from app.studies.images import item_change_region, item_diff, item_image, shown_image
from app.studies.models import Design, Shows, Study, StudyItem, StudyPair

logger = logging.getLogger(__name__)
# How often the count of drawn items is written: often enough for a live progress bar,
# rarely enough not to add a write per item.
PROGRESS_EVERY = 1.0
# How often the web app looks for studies still preparing.
PREPARE_EVERY = 3.0


@dataclass(frozen=True)
class Preparation:
    drawn: int
    total: int

    @property
    def text(self) -> str:
        return f"preparing images ({self.drawn} of {self.total})"


def preparation(session: Session, study: Study) -> Preparation | None:
    """None when the study's images are all drawn; else how far the drawing is."""
    if study.images_ready:
        return None
    total = session.scalar(select(func.count()).select_from(StudyItem).where(
        col(StudyItem.study_id) == study.id)) or 0
    return Preparation(min(study.images_drawn, total), total)


def require_prepared(session: Session, study: Study) -> None:
    """Readers wait until every image of the study is drawn (409 until then)."""
    found = preparation(session, study)
    if found is not None:
        raise Conflict(f"This study opens once its images are drawn: {found.text}. "
                       "Try again in a moment.")


def mark_preparing(session: Session, study: Study) -> None:
    study.images_ready, study.images_drawn = False, 0
    session.add(study)
    session.commit()


def unprepared(engine: Engine) -> list[int]:
    with Session(engine) as session:
        return [i for i in session.scalars(select(col(Study.id)).where(
            col(Study.images_ready).is_(False))).all() if i is not None]


def warm_previews(engine: Engine, study_id: int, cache_dir: Path) -> int:
    """Draw the images of every item, then open the study to its readers; returns how many
    items were drawn (0 when it is being drawn already, by this process or another). An
    image that is missing or cannot be drawn is logged and skipped (its screen says so); a
    failure of the database leaves the study preparing, to be taken up again."""
    # Once, whichever process asks (app/claims.py): the preparer loop of every server
    # process and the request that made the study all ask.
    with claimed(engine, ("prepare", study_id)) as mine:
        return _warm(engine, study_id, cache_dir) if mine else 0


def _warm(engine: Engine, study_id: int, cache_dir: Path) -> int:
    started, done, last = time.perf_counter(), 0, time.monotonic()
    # Items stay loaded across commits: each item's reads end their own transaction, so the
    # drawing never holds one open while readers write (PostgreSQL's snapshot, SQLite's WAL
    # end mark), and it gives up the interpreter between items, so a reader's submit in
    # another thread is not held behind a thousand images' decoding.
    with Session(engine, expire_on_commit=False) as session:
        study = session.get(Study, study_id)
        design = Design(study.design) if study is not None else default_design()  # no items
        items = session.scalars(select(StudyItem).where(col(StudyItem.study_id) == study_id)
                                .order_by(col(StudyItem.id))).all()
        session.commit()
        for n, item in enumerate(items, start=1):
            done += _draw_item(session, item, design, cache_dir)
            session.commit()
            time.sleep(0)
            if time.monotonic() - last >= PROGRESS_EVERY:
                _drawn(engine, study_id, n)
                last = time.monotonic()
    with Session(engine) as session:
        session.execute(update(Study).where(col(Study.id) == study_id).values(
            images_ready=True, images_drawn=len(items)))
        session.commit()
    logger.info("study %s: previews of %d of %d items drawn in %.1f s; open to its readers",
                study_id, done, len(items), time.perf_counter() - started)
    return done


def _draw_item(session: Session, item: StudyItem, design: Design, cache_dir: Path) -> int:
    """Draw one item's images; 1 when drawn, 0 when it could not be (logged)."""
    try:
        if design.single_image:
            shown_image(session, item, cache_dir)
            if item.shows == Shows.edit:  # where a reader's click would find the change
                item_change_region(session, item, cache_dir)
        else:
            for which in ("original", "edit"):
                sized_file(item_image(session, item, which), ImageSize.preview, cache_dir)
            item_diff(session, item, ImageSize.preview, cache_dir)
            pair = session.get(StudyPair, item.id) if design.pairs else None
            if pair is not None:  # a pair's other edit is shown too, beside the item's own
                sized_file(resolve_image(session, ImageKind.attempt, pair.first_attempt_id),
                           ImageSize.preview, cache_dir)
        return 1
    except ImageNotFound as error:
        logger.warning("study %s item %s: preview not drawn: %s", item.study_id, item.id, error)
    except Exception:
        # One image that cannot be drawn must not keep the whole study closed: its screen
        # says it cannot be shown, and the rest are drawn.
        logger.exception("study %s item %s: preview not drawn", item.study_id, item.id)
    return 0


def draw_items(session: Session, study: Study, items: list[StudyItem], cache_dir: Path) -> int:
    """Draw the images of items added to an open study (an adaptive study's new batch) before
    any reader has them in their list; returns how many were drawn."""
    return sum(_draw_item(session, item, Design(study.design), cache_dir) for item in items)


def prepare_unfinished(engine: Engine, cache_dir: Path) -> None:
    """Draw every study still preparing (one a stopped process left, or a command made)."""
    for study_id in unprepared(engine):
        try:
            warm_previews(engine, study_id, cache_dir)
        except Exception:  # a background thread: logged, and the next study still drawn
            logger.exception("study %s: its images could not be prepared", study_id)


def keep_prepared(engine: Engine, cache_dir: Path, stop: threading.Event) -> None:
    """The web app's preparer: every PREPARE_EVERY seconds, draw what is still preparing.
    It logs and carries on: a failed look (the database away) is tried again."""
    while not stop.is_set():
        try:
            prepare_unfinished(engine, cache_dir)
        except Exception:
            logger.exception("looking for studies to prepare failed; trying again")
        stop.wait(PREPARE_EVERY)


def _drawn(engine: Engine, study_id: int, n: int) -> None:
    with Session(engine) as session:
        session.execute(update(Study).where(col(Study.id) == study_id).values(images_drawn=n))
        session.commit()
