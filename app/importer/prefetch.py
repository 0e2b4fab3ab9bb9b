"""Parse the next batch while the database writes this one.

Only for PostgreSQL: the server does its own share of the work (text-search vectors,
indexes, constraint checks) on its own process, and the client waits for it outside the
GIL, so parsing in a second thread overlaps the two. SQLite writes inside this process,
under the GIL, so there a second thread only adds switching (measured slower).
"""

import queue
import threading
from collections.abc import Iterator
from typing import TypeVar

T = TypeVar("T")
_DONE = object()


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
