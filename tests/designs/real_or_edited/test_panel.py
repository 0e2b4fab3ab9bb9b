"""The readers-random panel when every reader has the same area: the Iowa software's answer
(Hillis's df unbounded, a normal interval) with what it cannot say, and strict JSON."""

import json

from app.designs.real_or_edited.figures import Read
from app.designs.real_or_edited.panel import panel_roc

TRUTH = [True, True, True, True, False, False, False, False, True, False]
# Two ratings of the same cases that reach the same area by different ways.
ONE = [9, 8, 3, 7, 2, 4, 1, 5, 6, 2]
TWO = [8, 9, 3, 7, 2, 5, 1, 4, 6, 2]


def _reads(by_reader: dict[str, list[int]]) -> list[Read]:
    return [Read(name, item, item, "chest_xray", "add", TRUTH[item], rating, n * 100 + item,
                 None, n * 100 + item, None)
            for n, (name, ratings) in enumerate(by_reader.items())
            for item, rating in enumerate(ratings)]


def test_readers_with_the_same_area_get_the_normal_interval_and_no_size_table() -> None:
    panel = panel_roc(_reads({"a": ONE, "b": TWO, "c": ONE}))
    assert panel.result is not None and panel.reason is None
    assert panel.readers_alike and panel.result.ms_r_single[0] == 0
    single = panel.result.rrrc.single[0]
    assert single.ci[0] < single.auc < single.ci[1]
    assert panel.random_df == "unbounded (a normal interval)"
    assert "exactly the same area" in (panel.sentence_random or "")
    assert "cannot be predicted" in (panel.precision or "") and panel.sizes == []
    found = json.loads(json.dumps(panel.as_dict(), allow_nan=False))
    assert found["rrrc"]["df"] is None and found["frrc"]["df"] is None


def test_readers_who_differ_keep_hillis_df_and_the_size_table() -> None:
    panel = panel_roc(_reads({"a": ONE, "b": [5, 8, 3, 7, 2, 4, 1, 9, 6, 2], "c": TWO}))
    assert panel.result is not None and not panel.readers_alike
    assert panel.random_df.replace(".", "").isdigit()
    assert panel.sizes and "exactly the same" not in (panel.sentence_random or "")
