"""The importer's read-ahead threads: the next batch parsed (PostgreSQL), the next file hashed."""

import threading
from collections.abc import Iterator

import pytest

from app.importer.prefetch import one_ahead, prefetched


def test_items_arrive_in_order() -> None:
    assert list(prefetched(iter(range(50)), depth=3)) == list(range(50))


def test_an_error_in_the_producer_is_raised_in_the_consumer_after_the_items_before_it() -> None:
    def items() -> Iterator[int]:
        yield 1
        yield 2
        raise ValueError("file 3 is broken")

    seen = []
    with pytest.raises(ValueError, match="file 3 is broken"):
        for item in prefetched(items()):
            seen.append(item)
    assert seen == [1, 2]


def test_a_consumer_that_stops_early_stops_and_joins_the_producer() -> None:
    produced = []

    def endless() -> Iterator[int]:
        n = 0
        while True:
            produced.append(n)
            yield n
            n += 1

    before = threading.active_count()
    stream = prefetched(endless(), depth=2)
    assert next(stream) == 0
    stream.close()
    assert threading.active_count() == before
    assert len(produced) <= 4  # one taken, two waiting, one held when told to stop


def test_each_item_comes_with_its_work_in_order_and_only_one_ahead() -> None:
    started: list[int] = []
    handed: list[tuple[int, int]] = []

    def work(n: int) -> int:
        started.append(n)
        return n * n

    for item, found in one_ahead(list(range(6)), work):
        handed.append((item, found))
        assert len(started) <= item + 2  # this item's work and the next one's, no more
    assert handed == [(n, n * n) for n in range(6)]
    assert list(one_ahead([], work)) == []


def test_an_error_in_the_work_is_raised_at_its_item_s_turn() -> None:
    def work(n: int) -> int:
        if n == 2:
            raise OSError("file 2 cannot be opened")
        return n

    seen = []
    with pytest.raises(OSError, match="file 2"):
        for item, _ in one_ahead([0, 1, 2, 3], work):
            seen.append(item)
    assert seen == [0, 1]


def test_a_consumer_that_stops_early_leaves_no_thread_and_starts_no_more_work() -> None:
    started: list[int] = []
    before = threading.active_count()
    stream = one_ahead(list(range(10)), started.append)
    next(stream)
    stream.close()
    assert threading.active_count() == before
    assert started in ([0], [0, 1])  # the next one's work, if it began before it was cancelled
