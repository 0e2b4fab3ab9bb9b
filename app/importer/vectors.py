"""PostgreSQL's text-search vectors, filled from a second connection while the import
writes the next file.

Computing a vector is most of the server's work in an import (about a quarter of a
millisecond per task document). Done inside the file's own transaction, it ran on the
same server process as the file's rows, one after the other; from a second connection it
runs beside them on the other core. A document whose vector is not filled yet is still
found by a search (app/cases/search.py reads its body), so nothing is ever missing from
the results, only slower to find until the vector is there.
"""

import logging
import queue
import threading
from collections.abc import Iterator
from contextlib import contextmanager

from sqlalchemy.engine import Engine

from app.cases import search

log = logging.getLogger(__name__)
# Rows per UPDATE: short transactions, so a search never waits long on one.
CHUNK = 5000
_DONE: list[int] = []


class VectorFiller:
    def __init__(self, engine: Engine) -> None:
        self.engine = engine
        self._work: queue.Queue[list[int]] = queue.Queue()
        self._thread = threading.Thread(target=self._run, name="search-vectors", daemon=True)
        self._thread.start()

    def add(self, task_ids: list[int]) -> None:
        """Fill these committed documents' vectors (soon, on the filler's connection)."""
        for start in range(0, len(task_ids), CHUNK):
            self._work.put(task_ids[start:start + CHUNK])

    def finish(self) -> None:
        """Wait for every vector asked for, then fill any left empty before (an import cut
        short, a chunk that failed)."""
        self._work.put(_DONE)
        self._thread.join()
        with self.engine.begin() as conn:
            search.fill_vectors(conn)

    def _run(self) -> None:
        while (ids := self._work.get()) is not _DONE:
            try:
                with self.engine.begin() as conn:
                    search.fill_vectors(conn, ids)
            except Exception:
                # Searches still find these documents by their body; finish() tries again.
                log.exception("could not fill the search vectors of %d documents; retried at the "
                              "end of the import", len(ids))


@contextmanager
def filling_vectors(engine: Engine) -> Iterator[VectorFiller | None]:
    """A filler on PostgreSQL, None on SQLite (FTS5 indexes as rows are inserted)."""
    if engine.dialect.name != "postgresql":
        yield None
        return
    filler = VectorFiller(engine)
    try:
        yield filler
    finally:
        filler.finish()
