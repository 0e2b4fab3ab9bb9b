"""A study's checks on its readers, as its page, its report and its export show them."""

import json
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field

from sqlalchemy import func, select
from sqlmodel import Session, col

from app.csv_cells import CsvRows
from app.fingerprints import study_state
from app.memo import Memo
from app.models import User
from app.readers.accuracy import Rate, ReaderAccuracy, no_reads, reader_accuracy
from app.readers.detectable import Outlook, outlook
from app.readers.flags import ReaderFlags, reader_flags
from app.readers.pause import STUDY_ALPHA, pauses_of
from app.readers.reads import assigned_readers, listed_reads, study_reads
from app.studies.models import Design, Study, StudyItem, StudyReader
from app.studies.reader_models import ReaderPause


@dataclass(frozen=True)
class ReaderChecks:
    known_cases: int  # known-answer cases the study mixed in
    share: float | None  # the share of each reader's reads asked for
    readers: list[ReaderAccuracy]
    paused: dict[int, ReaderPause]  # user id -> the pause in force
    pauses: list[ReaderPause]  # every pause, newest first
    names: dict[int, str]  # user id -> name (who resumed)
    flags: dict[int, ReaderFlags] = field(default_factory=dict)  # user id -> agreement, pace
    study_alpha: float = STUDY_ALPHA  # a steady reader paused in a study, at most
    outlook: Outlook | None = None  # what the known-answer pause can see with these cases


_kept: Memo[ReaderChecks] = Memo(32)


def reader_checks(session: Session, study: Study) -> ReaderChecks | None:
    """None for a design whose readers answer no rubric (nothing settled to score them on).
    Kept until the study's answers, readers, pauses or items change: the study page, its
    figures and its readers' page each show them."""
    if not Design(study.design).rubric:
        return None
    return _kept.get_or_make(study_state(session, study.id or 0), lambda: _checks(session, study))


def _checks(session: Session, study: Study) -> ReaderChecks:
    known = int(session.scalar(select(func.count()).select_from(StudyItem).where(
        col(StudyItem.study_id) == study.id, col(StudyItem.known_answer_id).is_not(None))) or 0)
    share = json.loads(study.selection).get("known_answers", {}).get("share")
    reads = study_reads(session, study)
    assigned = assigned_readers(session, study)
    accuracy = reader_accuracy(reads, assigned)
    flags = reader_flags(reads, assigned, listed_reads(session, study), study.order_secret)
    read = {r.user_id for r in accuracy}
    readers = session.execute(select(col(User.id), col(User.name)).join(
        StudyReader, col(StudyReader.user_id) == User.id).where(
        col(StudyReader.study_id) == study.id)).all()
    accuracy = sorted([*accuracy, *(no_reads(name, uid) for uid, name in readers if uid not in read)],
                      key=lambda r: r.reader)
    pauses = pauses_of(session, study.id or 0)
    # Newest first: the first open pause met for a reader is the one in force.
    paused: dict[int, ReaderPause] = {}
    for p in pauses:
        if p.resumed_at is None:
            paused.setdefault(p.user_id, p)
    ids = {p.resumed_by for p in pauses if p.resumed_by} | {p.user_id for p in pauses}
    found: Iterable[User] = session.scalars(select(User).where(col(User.id).in_(ids))) if ids else ()
    names = {u.id or 0: u.name for u in found}
    # Copies belonging to no session: kept between requests, they must not expire with one.
    copies = {p.id: ReaderPause.model_validate(p.model_dump()) for p in pauses}
    return ReaderChecks(known, share, accuracy, {u: copies[p.id] for u, p in paused.items()},
                        [copies[p.id] for p in pauses], names, flags,
                        outlook=outlook(known, len(readers)) if known else None)


READERS_HEADER = ("study", "reader", "reads", "known_answer_cases", "known_right",
                  "known_asked", "known_accuracy", "known_low", "known_high",
                  "overall_sensitivity", "overall_sensitivity_n", "overall_specificity",
                  "overall_specificity_n", "overall_consensus_agreement", "overall_consensus_n",
                  "median_seconds_per_case", "timed_reads", "paused_now", "pauses", "pause_reasons")


def _cell(value: float | None) -> str:
    return "" if value is None else f"{value:.4f}"


def iter_readers_csv(session: Session, study: Study) -> Iterator[str]:
    """One row per reader: reads, known-answer accuracy with its exact interval, the overall
    question's sensitivity, specificity and agreement with the others, time per case, and
    every pause (in force or resumed) with its reason."""
    checks = reader_checks(session, study)
    rows = CsvRows()
    rows.writerow(READERS_HEADER)
    for reader in checks.readers if checks else []:
        overall = next(q for q in reader.questions if q.question == "overall")
        own = [p for p in (checks.pauses if checks else []) if p.user_id == reader.user_id]

        def share(rate: Rate) -> str:
            return _cell(rate.share)

        rows.writerow((study.name, reader.reader, reader.reads, reader.known_reads, reader.known.k,
                       reader.known.n, share(reader.known), _cell(reader.known.low),
                       _cell(reader.known.high), share(overall.sensitivity), overall.sensitivity.n,
                       share(overall.specificity), overall.specificity.n, share(overall.consensus),
                       overall.consensus.n, _cell(reader.median_seconds), reader.timed,
                       "yes" if checks and reader.user_id in checks.paused else "no", len(own),
                       " | ".join(f"{p.paused_at:%Y-%m-%d %H:%M} {p.cause}: {p.reason}"
                                  + (f" (resumed {p.resumed_at:%Y-%m-%d %H:%M})" if p.resumed_at else "")
                                  for p in reversed(own))))
    yield rows.take()
