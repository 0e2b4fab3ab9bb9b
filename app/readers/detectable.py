"""What the known-answer pause can see in a planned study, for the new-study form: how many
known-answer cases each reader gets, whether that many can pause anyone at the study's rate,
and how often a reader whose accuracy drops is paused (simulated by benchmarks/reader_drift.py
--table into app/readers/detectable_table.py, read here)."""

from dataclasses import dataclass

from app.readers.changepoint import threshold
from app.readers.detectable_table import DROP, STUDIES, TABLE
from app.readers.pause import reader_alpha

PAUSES_BY = 50  # known-answer cases that can pause a reader among up to 1,000 (14 for 50)


@dataclass(frozen=True)
class Outlook:
    known: int  # known-answer cases per reader
    readers: int
    can_pause: bool  # False: no order of that many answers reaches the bar
    drop: float  # the drop the figures are for
    caught: float | None  # share of dropping readers paused before their list ends
    steady: float | None  # share of steady readers paused
    simulated_known: int | None  # the table's row the figures come from (at most ``known``)
    simulated_readers: int | None  # its column (at least ``readers``)
    studies: int = STUDIES

    @property
    def too_few(self) -> bool:
        """Too few to expect a pause: a dropping reader is caught less than one time in four."""
        return not self.can_pause or (self.caught is not None and self.caught < 0.25)


def outlook(known: int, readers: int) -> Outlook:
    """The figures for ``known`` cases per reader among ``readers``, read from the simulated
    table on the side that claims less: its nearest list at most as long, and its nearest
    count of readers at least as large (more readers share the rate, so each is held to a
    stricter bar)."""
    readers = max(1, readers)
    alpha = reader_alpha(readers)
    # A longer list only adds splits: once PAUSES_BY cases can pause, any more can, and the
    # bar of a long list is seconds of simulation the form need not wait for.
    can_pause = known > 0 and threshold(min(known, PAUSES_BY), alpha) != float("inf")
    columns = [r for r in sorted(TABLE) if r >= readers]
    column = columns[0] if columns else None
    rows = [k for k in sorted(TABLE[column]) if k <= known] if column is not None else []
    if not can_pause or not rows or column is None:
        return Outlook(known, readers, can_pause, DROP, None, None, None, None)
    steady, caught = TABLE[column][rows[-1]]
    return Outlook(known, readers, can_pause, DROP, caught, steady, rows[-1], column)
