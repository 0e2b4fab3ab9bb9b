"""The one in-memory store behind every cache: least recently used goes first."""

import threading

from app.memo import Memo


def test_the_least_recently_used_value_goes_first() -> None:
    memo: Memo[int] = Memo(2)
    memo.put("a", 1)
    memo.put("b", 2)
    assert memo.get("a") == 1  # "a" is now the most recent
    memo.put("c", 3)
    assert (memo.get("a"), memo.get("b"), memo.get("c")) == (1, None, 3)


def test_get_or_make_makes_once_and_is_safe_across_threads() -> None:
    memo: Memo[int] = Memo(100)
    made: list[int] = []

    def make(n: int) -> int:
        made.append(n)
        return n * n

    threads = [threading.Thread(target=lambda n=n: memo.get_or_make(n % 10, lambda: make(n % 10)))
               for n in range(200)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert {memo.get(k) for k in range(10)} == {k * k for k in range(10)}
    assert set(made) == set(range(10))
    memo.clear()
    assert memo.get(3) is None
