"""Recent results kept in memory: one small least-recently-used store (cachetools), safe
for the thread pool's concurrent requests, for every cache of the app."""

import contextlib
import gc
import logging
import threading
import weakref
from collections.abc import Callable, Hashable, Iterator
from typing import Generic, TypeVar

from cachetools import LRUCache

V = TypeVar("V")
logger = logging.getLogger(__name__)
MOST = 4096  # no cache of the app keeps more values than this (the difference maps: paths)


@contextlib.contextmanager
def paused_collection() -> Iterator[None]:
    """The cyclic garbage collector waits while a large result is built. Building one
    allocates hundreds of thousands of objects, which set the collector off over and over,
    each pass walking every object of the process: 0.3 s of the 1.9 s /quality report in a
    web worker. Cycles made meanwhile are collected at the next pass after it. Safe across
    threads: the first caller to pause is the one that resumes."""
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()


def settle_heap() -> None:
    """What a start has built (modules, templates, the warmed pool and figures: half a million
    objects) moved out of the cyclic collector's way. Each full collection walked all of
    them, about 0.14 s after every report a page computes; it now walks what was made since.
    They are still freed by reference counting when let go; only a cycle among them would
    stay, and a start builds them once."""
    gc.collect()
    gc.freeze()
    logger.info("the heap after the start settled: %d objects left out of collections",
                gc.get_freeze_count())


# Every cache made, so that each can be found and checked (tests/test_memo.py holds each to a
# size limit) and all forgotten at once (a benchmark's "first view after a start").
_every: "weakref.WeakSet[Memo[object]]" = weakref.WeakSet()


class Memo(Generic[V]):
    def __init__(self, size: int) -> None:
        if not 0 < size <= MOST:
            raise ValueError(f"a cache keeps 1 to {MOST} values, not {size}")
        self._store: LRUCache[Hashable, V] = LRUCache(maxsize=size)
        self._lock = threading.Lock()
        _every.add(self)  # type: ignore[arg-type]

    @property
    def size(self) -> int:
        return int(self._store.maxsize)

    def __len__(self) -> int:
        return len(self._store)

    def get(self, key: Hashable) -> V | None:
        with self._lock:
            return self._store.get(key)

    def put(self, key: Hashable, value: V) -> None:
        with self._lock:
            self._store[key] = value

    def get_or_make(self, key: Hashable, make: Callable[[], V]) -> V:
        """The kept value, else ``make()`` kept. Made outside the lock: two requests may both
        make it once, which is cheaper than holding every other request back meanwhile."""
        found = self.get(key)
        if found is None:
            with paused_collection():
                found = make()
            self.put(key, found)
        return found

    def clear(self) -> None:
        with self._lock:
            self._store.clear()


def every_memo() -> list["Memo[object]"]:
    return list(_every)


def forget_all() -> None:
    """Every cache emptied: the state of a server just started."""
    for memo in every_memo():
        memo.clear()
