"""Work done ahead in a second thread: the next file's content hash, and (PostgreSQL only)
the next batch's parsing.

Hashing runs outside the GIL (hashlib releases it for large updates, as the file reads do),
so the next file is hashed on the second core while this one is parsed and written, on
either engine: 0.7-2 s of a 1.1 GB run. Parsing needs the GIL, so it is prefetched only for
PostgreSQL: the server does its own share of the work (text-search vectors,
indexes, constraint checks) on its own process, and the client waits for it outside the
GIL, so parsing in a second thread overlaps the two. SQLite writes inside this process,
under the GIL, so there a second thread only adds switching (measured slower).
"""

import queue
import threading
from collections.abc import Callable, Generator, Iterator, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from typing import TypeVar

T = TypeVar("T")
R = TypeVar("R")
_DONE = object()


def one_ahead(items: Sequence[T], work: Callable[[T], R]) -> Generator[tuple[T, R], None, None]:
    """Each item with ``work(item)``, in order, the next item's work started in a second
    thread when this one is handed out. One ahead, not all: a file hashed long before it is
    read could change in between. An error in ``work`` is raised when its item's turn comes,
    as it would have been without the thread."""
    if not items:
        return
    with ThreadPoolExecutor(max_workers=1, thread_name_prefix="import-ahead") as worker:
        ahead: Future[R] = worker.submit(work, items[0])
        try:
            for i, item in enumerate(items):
                found = ahead.result()
                if i + 1 < len(items):
                    ahead = worker.submit(work, items[i + 1])
                yield item, found
        finally:
            ahead.cancel()


def prefetched(items: Iterator[T], depth: int = 2) -> Iterator[T]:
    """``items``, produced by a worker thread up to ``depth`` ahead of the consumer.

    An error in the producer is raised in the consumer. When the consumer stops early (an
    error in its own loop, or a ``close``), the producer is told to stop and is joined.
    """
    slots: queue.Queue[object] = queue.Queue(maxsize=depth)
    stop = threading.Event()

    def offer(item: object) -> bool:
        while not stop.is_set():
            try:
                slots.put(item, timeout=0.1)
                return True
            except queue.Full:
                continue
        return False

    def produce() -> None:
        try:
            for item in items:
                if not offer(item):
                    return
            offer(_DONE)
        except BaseException as error:  # handed to the consumer, which raises it
            offer(error)

    worker = threading.Thread(target=produce, name="import-prefetch", daemon=True)
    worker.start()
    try:
        while True:
            item = slots.get()
            if item is _DONE:
                return
            if isinstance(item, BaseException):
                raise item
            yield item  # type: ignore[misc]
    finally:
        stop.set()
        worker.join()
