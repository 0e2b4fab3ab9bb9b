"""The figures of a real-or-edited study: can readers tell an accepted edit from a real image?

Each read is one rating from 1 (certainly real) to 10 (certainly edited)
(app/designs/real_or_edited/ratings.py). Per reader and over the readers: the ROC area of the ratings
against the truth, with a cluster-bootstrap interval over source images (app/agreement/roc.py;
a study draws one image per source image, so each case is its own cluster); sensitivity
(edits called edited) and specificity (originals called real) at the middle of the scale, the
reader's own call; and localisation, the share of the clicks on called edits that fall on the
changed region (app/images/metrics.py). An area near 0.5 means readers could not tell.

Only first reads count: a hidden repeat is the same reader on the same image again.
"""

import logging
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import date
from pathlib import Path

import numpy as np
from sqlalchemy import func, select
from sqlmodel import Session, col
from statsmodels.stats.proportion import proportion_confint

from app.agreement.roc import Figure, area, rates, reader_areas
from app.designs.real_or_edited.ratings import MIDDLE, imrmc_lines, rating
from app.errors import Conflict
from app.images.files import ImageNotFound
from app.images.metrics import click_in
from app.models import Task, User
from app.studies.images import item_change_region
from app.studies.models import Assignment, Design, RealOrEditedAnswer, Shows, Study, StudyItem

logger = logging.getLogger(__name__)
POOLED = "all reads"
MEAN = "readers' mean"


@dataclass(frozen=True)
class Read:
    reader: str
    item_id: int
    source_image_id: int
    modality: str
    direction: str  # of the task the image comes from (an original's is its task's, unshown)
    is_edit: bool  # the truth: the case showed the edit
    rating: int
    answer_id: int
    click: tuple[float, float] | None
    assignment_id: int
    repeat_of: int | None  # the first read this hidden repeat repeats
    time_on_case_ms: int | None = None


@dataclass(frozen=True)
class Localisation:
    clicks: int  # clicks on edits the reader called edited
    found: int  # of them, on the changed region
    unmeasured: int  # edits with no measurable change, or whose images could not be read
    low: float | None
    high: float | None

    @property
    def share(self) -> float | None:
        return self.found / self.clicks if self.clicks else None


@dataclass
class ReaderRow:
    name: str
    reads: int
    area: Figure
    sensitivity: Figure
    specificity: Figure
    accuracy: Figure
    localisation: Localisation


@dataclass(frozen=True)
class GroupRow:
    """Every reader's reads of one part of the sample, pooled."""

    label: str
    reads: int
    area: Figure | None  # None where the part holds only edits or only originals
    sensitivity: Figure
    specificity: Figure


@dataclass(frozen=True)
class Repeats:
    """A reader's hidden second reads: how often the call was the same as the first time."""

    reader: str
    pairs: int
    same_call: int
    same_rating: int


@dataclass
class RealOrEditedResults:
    study: Study
    cases: int  # cases read at least once
    edits: int
    originals: int
    rows: list[ReaderRow] = field(default_factory=list)
    by_modality: list[GroupRow] = field(default_factory=list)
    by_direction: list[GroupRow] = field(default_factory=list)  # edits only: sensitivity
    repeats: list[Repeats] = field(default_factory=list)
    reason: str | None = None  # why there are no figures yet
    first_reads: list[Read] = field(default_factory=list)  # what the figures rest on

    def as_dict(self) -> dict[str, object]:
        def figures(row: ReaderRow | GroupRow) -> dict[str, object]:
            out = {name: getattr(row, name).as_dict() for name in ("sensitivity", "specificity")}
            return {"reads": row.reads, "area": row.area.as_dict() if row.area else None, **out}

        return {
            "study": {"id": self.study.id, "name": self.study.name},
            "cases": self.cases, "edits": self.edits, "originals": self.originals,
            "reason": self.reason,
            "scale": "1 certainly real ... 10 certainly edited; edited above 5.5",
            "readers": [{"reader": r.name, **figures(r), "accuracy": r.accuracy.as_dict(),
                         "localisation": {"clicks": r.localisation.clicks,
                                          "found": r.localisation.found,
                                          "unmeasured": r.localisation.unmeasured,
                                          "share": r.localisation.share,
                                          "low": r.localisation.low, "high": r.localisation.high}}
                        for r in self.rows],
            "by_modality": [{"modality": g.label, **figures(g)} for g in self.by_modality],
            "by_direction": [{"direction": g.label, **figures(g)} for g in self.by_direction],
            "repeats": [{"reader": r.reader, "pairs": r.pairs, "same_call": r.same_call,
                         "same_rating": r.same_rating} for r in self.repeats],
        }


def reads(session: Session, study: Study) -> list[Read]:
    """Every first read's answer in force."""
    return [r for r in _in_force(session, study) if r.repeat_of is None]


def _in_force(session: Session, study: Study) -> list[Read]:
    """Every read's answer in force, hidden repeats included."""
    newest = (select(col(RealOrEditedAnswer.assignment_id),
                     func.max(RealOrEditedAnswer.version).label("version"))
              .join(Assignment, col(Assignment.id) == RealOrEditedAnswer.assignment_id)
              .where(col(Assignment.study_id) == study.id)
              .group_by(col(RealOrEditedAnswer.assignment_id)).subquery())
    query = (select(RealOrEditedAnswer, col(User.name), col(StudyItem.id), col(StudyItem.shows),
                    col(Task.source_image_id), col(Task.modality), col(Task.direction),
                    col(Assignment.repeat_of))
             .join(newest, (col(RealOrEditedAnswer.assignment_id) == newest.c.assignment_id)
                   & (col(RealOrEditedAnswer.version) == newest.c.version))
             .join(Assignment, col(Assignment.id) == RealOrEditedAnswer.assignment_id)
             .join(StudyItem, col(StudyItem.id) == Assignment.item_id)
             .join(Task, col(Task.id) == StudyItem.task_id)
             .join(User, col(User.id) == Assignment.user_id)
             .where(col(Assignment.study_id) == study.id,
                    col(RealOrEditedAnswer.retracted).is_(False))
             .order_by(col(StudyItem.id), col(User.name)))
    found = []
    for answer, reader, item_id, shows, source, modality, direction, repeat_of in session.execute(query):
        click = (answer.click_x, answer.click_y) if answer.click_x is not None else None
        found.append(Read(reader, item_id, source, modality, direction, shows == Shows.edit,
                          rating(answer.edited, answer.confidence), answer.id or 0, click,
                          answer.assignment_id, repeat_of, answer.time_on_case_ms))
    return found


def results(session: Session, study: Study, cache_dir: Path) -> RealOrEditedResults:
    """``cache_dir`` keeps each edit's change region (app/studies/images.py)."""
    _require(study)
    every = _in_force(session, study)
    found = [r for r in every if r.repeat_of is None]
    truth = {r.item_id: r.is_edit for r in found}
    out = RealOrEditedResults(study, len(truth), sum(truth.values()),
                              sum(1 for e in truth.values() if not e), first_reads=found)
    if not found:
        out.reason = "no answers yet"
        return out
    if not out.edits or not out.originals:
        out.reason = "the answers so far are all on edits or all on originals: an area needs both"
        return out
    items = sorted(truth)
    at = {item: i for i, item in enumerate(items)}
    source = {r.item_id: r.source_image_id for r in found}
    clusters = np.array([source[i] for i in items])
    y = np.array([truth[i] for i in items])
    names = sorted({r.reader for r in found})
    scores = {name: np.full(len(items), np.nan) for name in names}
    for r in found:
        scores[r.reader][at[r.item_id]] = r.rating
    areas = reader_areas(y, scores, clusters=clusters)
    hits = _clicks_found(session, study, cache_dir, found)
    for name in names:
        own = [r for r in found if r.reader == name]
        out.rows.append(_row(name, own, areas[name], hits))
    if len(names) > 1:
        out.rows.append(_row(MEAN, found, areas[MEAN], hits))
    pooled = area([r.is_edit for r in found], [r.rating for r in found],
                  clusters=[r.source_image_id for r in found])
    out.rows.append(_row(POOLED, found, pooled, hits))
    out.by_modality = [_group(m, [r for r in found if r.modality == m])
                       for m in sorted({r.modality for r in found})]
    out.by_direction = [_group(d, [r for r in found if r.is_edit and r.direction == d])
                        for d in sorted({r.direction for r in found if r.is_edit})]
    out.repeats = _repeats(every)
    return out


def _group(label: str, part: list[Read]) -> GroupRow:
    truth = [r.is_edit for r in part]
    clusters = [r.source_image_id for r in part]
    both = any(truth) and not all(truth)
    called = rates(truth, [r.rating > MIDDLE for r in part], clusters=clusters)
    return GroupRow(label, len(part),
                    area(truth, [r.rating for r in part], clusters=clusters) if both else None,
                    called["sensitivity"], called["specificity"])


def _repeats(every: list[Read]) -> list[Repeats]:
    first = {r.assignment_id: r for r in every if r.repeat_of is None}
    pairs: dict[str, list[tuple[Read, Read]]] = {}
    for again in every:
        if again.repeat_of is not None and again.repeat_of in first:
            pairs.setdefault(again.reader, []).append((first[again.repeat_of], again))
    return [Repeats(reader, len(both),
                    sum((a.rating > MIDDLE) == (b.rating > MIDDLE) for a, b in both),
                    sum(a.rating == b.rating for a, b in both))
            for reader, both in sorted(pairs.items())]


def _row(name: str, own: list[Read], auc: Figure, hits: dict[int, bool | None]) -> ReaderRow:
    called = rates([r.is_edit for r in own], [r.rating > MIDDLE for r in own],
                   clusters=[r.source_image_id for r in own])
    clicked = [hits[r.answer_id] for r in own if r.answer_id in hits]
    return ReaderRow(name, len(own), auc, called["sensitivity"], called["specificity"],
                     called["agreement"], _localisation(clicked))


def _localisation(hits: list[bool | None]) -> Localisation:
    measured = [h for h in hits if h is not None]
    found = sum(measured)
    low, high = (proportion_confint(found, len(measured), method="wilson") if measured
                 else (None, None))
    return Localisation(len(measured), found, len(hits) - len(measured),
                        None if low is None else float(low), None if high is None else float(high))


def _clicks_found(session: Session, study: Study, cache_dir: Path,
                  found: list[Read]) -> dict[int, bool | None]:
    """Answer id -> whether its click found the change (None: nothing to find, or the images
    could not be read), for every click on an edit its reader called edited. Each item's
    region is looked up once, however many readers clicked on it."""
    regions: dict[int, np.ndarray | None] = {}
    hits: dict[int, bool | None] = {}
    for read in found:
        if not (read.is_edit and read.rating > MIDDLE and read.click is not None):
            continue
        if read.item_id not in regions:
            regions[read.item_id] = _region(session, study, cache_dir, read.item_id)
        region = regions[read.item_id]
        hits[read.answer_id] = None if region is None else click_in(region, *read.click)
    return hits


def _region(session: Session, study: Study, cache_dir: Path, item_id: int) -> np.ndarray | None:
    item = session.get(StudyItem, item_id)
    assert item is not None
    try:
        return item_change_region(session, item, cache_dir)
    except ImageNotFound as error:
        logger.warning("study %s, item %s: clicks on it could not be checked (%s)",
                       study.id, item_id, error)
        return None


def imrmc(session: Session, study: Study) -> Iterator[str]:
    """The study's first reads in the iMRMC input format, in chunks of lines. Checked and read
    before the first chunk: a refusal must come before a response starts streaming."""
    _require(study)
    return _imrmc_chunks(study, reads(session, study))


def _imrmc_chunks(study: Study, found: list[Read]) -> Iterator[str]:
    truth = {r.item_id: r.is_edit for r in found}
    description = (f"MedBanana Review real-or-edited study {study.name!r}, exported "
                   f"{date.today().isoformat()}; truth 1 = edited; score 1 certainly real to "
                   "10 certainly edited; first reads only")
    chunk: list[str] = []
    for line in imrmc_lines(truth, [(r.reader, r.item_id, r.rating) for r in found],
                            description=description):
        chunk.append(line + "\n")
        if len(chunk) == 1000:  # a line at a time costs a send each
            yield "".join(chunk)
            chunk = []
    yield "".join(chunk)


def _require(study: Study) -> None:
    if study.design != Design.real_or_edited:
        raise Conflict(f"study {study.name!r} is not a real-or-edited study")


def long_rows(session: Session, study: Study) -> list[dict[str, object]]:
    """One row per first read, in the long format MRMC analyses start from: reader, case,
    truth (1 = edited), score (1-10), then what the score is made of and where it was made.
    The case ids are those of the iMRMC file."""
    _require(study)
    return [{"reader": r.reader, "case": r.item_id, "truth": int(r.is_edit), "score": r.rating,
             "call": "edited" if r.rating > MIDDLE else "real",
             "confidence": r.rating - 5 if r.rating > MIDDLE else 6 - r.rating,
             "modality": r.modality, "source_image": r.source_image_id,
             "click_x": r.click[0] if r.click else None, "click_y": r.click[1] if r.click else None,
             "time_on_case_ms": r.time_on_case_ms}
            for r in sorted(reads(session, study), key=lambda r: (r.reader, r.item_id))]
