"""The importer's read-ahead thread (used on PostgreSQL)."""

import threading
from collections.abc import Iterator

import pytest

from app.importer.prefetch import prefetched


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
