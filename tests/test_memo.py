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


def test_every_cache_of_the_app_has_a_size_limit_and_stops_there() -> None:
    """No cache grows without bound: every Memo the app's modules make keeps at most its
    size, and filling one past it leaves it at its size."""
    import importlib
    import pkgutil

    import app
    from app.memo import MOST, every_memo

    for module in pkgutil.walk_packages(app.__path__, "app."):
        if not module.name.startswith(("app.cli", "app.web.main")):
            importlib.import_module(module.name)
    found = [m for m in every_memo() if m.size > 0]
    assert len(found) >= 20  # the app's caches were all made on import
    for memo in found:
        assert 0 < memo.size <= MOST
    probe: Memo[int] = Memo(3)
    for n in range(50):
        probe.put(n, n)
    assert len(probe) == 3


def test_a_cache_without_a_limit_is_refused() -> None:
    import pytest

    from app.memo import MOST, forget_all

    for size in (0, -1, MOST + 1):
        with pytest.raises(ValueError, match="keeps 1 to"):
            Memo(size)
    memo: Memo[int] = Memo(4)
    memo.put("a", 1)
    forget_all()
    assert memo.get("a") is None
