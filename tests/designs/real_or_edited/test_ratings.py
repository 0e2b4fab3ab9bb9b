"""A real-or-edited answer as one rating, and the iMRMC file: counts, truth rows, ratings,
and the area it gives back through the ROC code (Hanley and McNeil's CT ratings)."""

import pytest

from app.agreement.roc import area
from app.designs.real_or_edited.ratings import imrmc_lines, rating


def test_ratings_run_from_certainly_real_to_certainly_edited() -> None:
    assert [rating(False, c) for c in (5, 4, 3, 2, 1)] == [1, 2, 3, 4, 5]
    assert [rating(True, c) for c in (1, 2, 3, 4, 5)] == [6, 7, 8, 9, 10]
    with pytest.raises(ValueError, match="not 6"):
        rating(True, 6)


def test_the_imrmc_file() -> None:
    truth = {1: False, 2: True, 3: True}
    lines = list(imrmc_lines(truth, [("dr-b", 2, 9), ("dr-a", 1, 2), ("dr-a", 2, 7), ("dr-a", 3, 4)],
                             description="real-or-edited study 7"))
    assert lines[:8] == ["real-or-edited study 7", "", "NR: 2", "N0: 1", "N1: 2", "NM: 1", "",
                         "BEGIN DATA:"]
    assert lines[8:11] == ["-1,1,0,0", "-1,2,0,1", "-1,3,0,1"]
    assert lines[11:] == ["dr-a,1,1,2", "dr-a,2,1,7", "dr-a,3,1,4", "dr-b,2,1,9"]
    with pytest.raises(ValueError, match="no truth"):
        list(imrmc_lines(truth, [("dr-a", 9, 3)], description="x"))
    with pytest.raises(ValueError, match="comma"):
        list(imrmc_lines(truth, [("a,b", 1, 3)], description="x"))


def test_the_ratings_give_the_published_area() -> None:
    """Hanley and McNeil's five-point CT ratings, read as one reader's ratings of 109 cases
    through the file's rows: the area is their 0.893."""
    normal, abnormal = [33, 6, 6, 11, 2], [3, 2, 2, 11, 33]
    truth, ratings, case = {}, [], 0
    for edited, counts in ((False, normal), (True, abnormal)):
        for score, n in enumerate(counts, start=1):
            for _ in range(n):
                case += 1
                truth[case] = edited
                ratings.append(("reader", case, score))
    rows = [line.split(",") for line in imrmc_lines(truth, ratings, description="ct")
            if line.startswith("reader,")]
    scores = {int(c): int(s) for _, c, _, s in rows}
    figure = area([truth[c] for c in sorted(scores)], [scores[c] for c in sorted(scores)])
    assert round(figure.value or 0, 3) == 0.893
