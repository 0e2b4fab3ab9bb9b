"""The bars of the longest list in the database are simulated before anyone asks."""

from sqlalchemy.engine import Engine

from app.readers import changepoint
from app.readers.warm import warm_bars
from tests.studies.conftest import make_study


def test_the_longest_list_s_bars_are_simulated_at_the_start(demo_engine: Engine) -> None:
    make_study(demo_engine)
    changepoint._tails.cache_clear()
    warm_bars(demo_engine)
    assert changepoint._tails.cache_info().currsize == 1


def test_an_empty_database_simulates_nothing(engine: Engine) -> None:
    changepoint._tails.cache_clear()
    warm_bars(engine)
    assert changepoint._tails.cache_info().currsize == 0
