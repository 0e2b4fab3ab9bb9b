"""Each reader's accuracy: exact intervals held to published values, scoring against settled
answers and the other readers' consensus, fatigue and calibration."""

from datetime import UTC, datetime

import pytest

from app.readers.accuracy import consensus_of_others, exact, reader_accuracy
from app.readers.reads import ReaderRead

ALL_PASS = {"compliance": "yes", "structure": "yes", "realism": "yes", "fidelity": "yes",
            "overall": "accept"}
ALL_FAIL = {"compliance": "no", "structure": "no", "realism": "no", "fidelity": "no",
            "overall": "reject"}


@pytest.mark.parametrize(("k", "n", "low", "high"), [
    # Newcombe, "Two-sided confidence intervals for the single proportion", Stat Med 1998,
    # Table II, method 5 (Clopper-Pearson "exact"), and the textbook limits for n = 10.
    (81, 263, 0.2527, 0.3676), (15, 148, 0.0578, 0.1617), (0, 20, 0.0, 0.1684),
    (1, 29, 0.0009, 0.1776), (0, 10, 0.0, 0.3085), (5, 10, 0.1871, 0.8129),
    (10, 10, 0.6915, 1.0)])
def test_the_exact_interval_matches_published_limits(k: int, n: int, low: float, high: float) -> None:
    found = exact(k, n)
    assert found.low == pytest.approx(low, abs=5e-5)
    assert found.high == pytest.approx(high, abs=5e-5)


def test_no_reads_no_interval() -> None:
    assert exact(0, 0).low is None and exact(0, 0).share is None


def read(reader: str, item: int, sequence: int, answers: dict[str, str], *,
         settled: dict[str, str] | None = None, confidence: int = 3, seconds: float = 20,
         repeat: bool = False) -> ReaderRead:
    return ReaderRead(reader=reader, user_id=ord(reader[0]), item_id=item, sequence=sequence,
                      answers=answers, confidence=confidence, time_ms=int(seconds * 1000),
                      answered_at=datetime(2026, 1, 1, tzinfo=UTC), repeat=repeat, settled=settled)


def test_known_answers_give_accuracy_sensitivity_and_specificity() -> None:
    reads = [
        # Settled fail: the reader fails it (a true positive for finding a bad edit).
        read("ann", 1, 1, ALL_FAIL, settled={"overall": "reject", "realism": "no"}),
        # Settled fail: the reader passes it (missed).
        read("ann", 2, 2, ALL_PASS, settled={"overall": "reject"}),
        # Settled pass, passed; and one "cannot assess", which is not right.
        read("ann", 3, 3, ALL_PASS, settled={"overall": "accept", "realism": "yes"}),
        read("ann", 4, 4, {**ALL_PASS, "realism": "cannot_assess"},
             settled={"overall": "accept", "realism": "yes"}),
    ]
    (ann,) = reader_accuracy(reads)
    overall = next(q for q in ann.questions if q.question == "overall")
    realism = next(q for q in ann.questions if q.question == "realism")
    assert (overall.known.k, overall.known.n) == (3, 4)
    assert (overall.sensitivity.k, overall.sensitivity.n) == (1, 2)
    assert (overall.specificity.k, overall.specificity.n) == (2, 2)
    assert (realism.known.k, realism.known.n) == (2, 3)
    assert (realism.specificity.k, realism.specificity.n) == (1, 2)
    assert (ann.known.k, ann.known.n) == (5, 7)
    assert ann.known_reads == 4
    structure = next(q for q in ann.questions if q.question == "structure")
    assert structure.known.n == 0 and structure.known.low is None  # nothing settled on it


def test_each_reader_is_compared_with_the_others_without_them() -> None:
    reads = [read("ann", 1, 1, ALL_PASS), read("bob", 1, 1, ALL_PASS), read("cat", 1, 1, ALL_FAIL),
             read("ann", 2, 2, ALL_PASS), read("bob", 2, 2, ALL_FAIL),  # two readers split
             read("ann", 3, 3, ALL_FAIL, settled={"overall": "reject"}),  # known: never here
             read("bob", 3, 3, ALL_PASS, settled={"overall": "reject"})]
    consensus = consensus_of_others(reads)
    assert consensus[("cat", 1)]["overall"] is True  # ann and bob passed it
    assert consensus[("ann", 1)] == {}  # bob passed, cat failed: no majority without ann
    assert consensus[("ann", 2)]["overall"] is False
    assert ("ann", 3) not in consensus
    by_name = {r.reader: r for r in reader_accuracy(reads)}
    overall = {name: next(q.consensus for q in r.questions if q.question == "overall")
               for name, r in by_name.items()}
    assert (overall["cat"].k, overall["cat"].n) == (0, 1)
    assert (overall["ann"].k, overall["ann"].n) == (0, 1)  # case 2: ann passed, bob failed
    assert (overall["bob"].k, overall["bob"].n) == (0, 1)  # case 1 tied without bob


def test_fatigue_shows_a_reader_who_tires() -> None:
    """A reader who agrees early and not late, and speeds up: the thirds and the trends say so."""
    reads = []
    for n in range(1, 61):
        late = n > 40
        reads.append(read("ann", n, n, ALL_FAIL if late and n % 2 else ALL_PASS, seconds=40 - n * 0.5))
        reads.append(read("bob", n, n, ALL_PASS, seconds=30))
        reads.append(read("cat", n, n, ALL_PASS, seconds=30))
    ann = next(r for r in reader_accuracy(reads) if r.reader == "ann")
    assert [(p.first, p.last) for p in ann.fatigue] == [(1, 20), (21, 40), (41, 60)]
    assert [p.consensus.k for p in ann.fatigue] == [20, 20, 10]
    assert ann.agreement_trend is not None and ann.agreement_trend.high < 1
    assert ann.time_trend is not None and ann.time_trend.high < 1
    bob = next(r for r in reader_accuracy(reads) if r.reader == "bob")
    assert bob.median_seconds == 30


def test_calibration_is_per_confidence() -> None:
    reads = [read("ann", i, i, ALL_PASS, settled={"overall": "accept" if i < 4 else "reject"},
                  confidence=5 if i < 4 else 1) for i in range(1, 7)]
    (ann,) = reader_accuracy(reads)
    assert (ann.calibration[5][0].k, ann.calibration[5][0].n) == (3, 3)
    assert (ann.calibration[1][0].k, ann.calibration[1][0].n) == (0, 3)


def test_a_trend_that_separates_perfectly_is_no_trend_and_no_warning() -> None:
    """Agreeing on every early read and on no late one: the logistic fit cannot be made, so
    no trend is claimed (statsmodels once warned on every page view instead)."""
    import warnings

    reads = []
    for n in range(1, 31):
        reads += [read("ann", n, n, ALL_PASS if n <= 15 else ALL_FAIL), read("bob", n, n, ALL_PASS),
                  read("cat", n, n, ALL_PASS)]
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        ann = next(r for r in reader_accuracy(reads) if r.reader == "ann")
    assert ann.agreement_trend is None
