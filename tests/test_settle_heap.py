"""A served app takes what its start built out of the cyclic collector's way; an app made
with an engine of its own (the tests' many apps) does not."""

import gc
import threading
import weakref
from collections.abc import Iterator

import pytest
from fastapi.testclient import TestClient
from sqlalchemy.engine import Engine

from app.memo import settle_heap
from app.settings import Settings
from app.web.main import create_app


@pytest.fixture
def unfrozen() -> Iterator[None]:
    gc.unfreeze()
    yield
    gc.unfreeze()  # the rest of this worker's tests collect as before


def _settled(settle: bool | None, engine: Engine, settings: Settings) -> int:
    with TestClient(create_app(settings, engine, settle=settle)):
        for thread in threading.enumerate():
            if thread.name in ("settle-heap", "judged-pool", "warm-figures", "compile-templates"):
                thread.join(timeout=120)
    return gc.get_freeze_count()


def test_a_served_app_settles_its_heap_once_its_start_has_warmed(unfrozen: None, demo_engine: Engine,
                                                                  settings: Settings) -> None:
    assert _settled(True, demo_engine, settings) > 10_000  # modules, templates, the warmed pool


def test_an_app_given_its_engine_leaves_the_collector_alone(unfrozen: None, demo_engine: Engine,
                                                            settings: Settings) -> None:
    assert _settled(None, demo_engine, settings) == 0


class _Held:
    pass


def test_settling_leaves_what_is_let_go_later_to_reference_counting(unfrozen: None) -> None:
    kept = [_Held() for _ in range(1000)]
    watched = weakref.ref(kept[0])
    settle_heap()
    assert gc.get_freeze_count() >= 1000
    del kept
    assert watched() is None  # freed at once, with no collection
