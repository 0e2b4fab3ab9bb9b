"""The leaderboard's figures on made-up judges whose faults are known."""

import random

from app.agreement.resample import Figure
from app.judges.leaderboard import RECORD, Answers, Board, Row, boards
from pipeline.vocabulary import QUESTIONS

N = 240  # edits, two per source image


def _answers(values: list[bool | None]) -> list[dict[str, bool | None]]:
    return [dict.fromkeys(QUESTIONS, v) for v in values]


def _world() -> tuple[list[int], list[bool | None], list[bool | None]]:
    rng = random.Random(3)
    truth: list[bool | None] = [rng.random() < 0.6 for _ in range(N)]
    # The record is right four times in five, wrong either way.
    record: list[bool | None] = [t if rng.random() < 0.8 else not t for t in truth]
    return [i // 2 for i in range(N)], truth, record


def test_a_perfect_judge_beats_the_record_and_a_copy_is_indistinguishable() -> None:
    clusters, truth, record = _world()
    judges = [Answers("perfect", [_answers(truth)]), Answers("copy", [_answers(record)])]
    board = boards(clusters, _answers(truth), Answers(RECORD, [_answers(record)]), judges,
                   resamples=400)["overall"]
    rows = {r.name: r for r in board.rows}
    assert board.rows[0].name == "perfect"
    assert rows["perfect"].figures["agreement"].value == 1.0
    assert set(rows["perfect"].above) == {RECORD, "copy"}
    assert rows["perfect"].paired is not None and rows["perfect"].paired.difference.low > 0
    assert rows["perfect"].paired.holm_p is not None and rows["perfect"].paired.holm_p < 0.001
    copy = rows["copy"].paired
    assert copy is not None and copy.difference.value == 0.0
    assert copy.only_candidate_right == copy.only_record_right == 0 and copy.mcnemar_clustered_p is None
    letters = board.letters()
    assert letters["perfect"] == "a" and letters[RECORD] == letters["copy"] == "b"


def test_lenient_and_strict_judges_err_their_own_way() -> None:
    clusters, truth, record = _world()
    lenient: list[bool | None] = [True if r is False and i % 2 == 0 else r for i, r in enumerate(record)]
    strict: list[bool | None] = [False if r is True and i % 3 == 0 else r for i, r in enumerate(record)]
    board = boards(clusters, _answers(truth), Answers(RECORD, [_answers(record)]),
                   [Answers("lenient", [_answers(lenient)]), Answers("strict", [_answers(strict)])],
                   resamples=400)["compliance"]
    rows = {r.name: r.figures for r in board.rows}
    assert rows["lenient"]["a_more_lenient"].value > rows[RECORD]["a_more_lenient"].value
    assert rows["lenient"]["a_stricter"].value < rows[RECORD]["a_stricter"].value
    assert rows["strict"]["a_stricter"].value > rows[RECORD]["a_stricter"].value
    for figures in rows.values():
        for name in ("agreement", "a_stricter", "a_more_lenient"):
            f = figures[name]
            assert f.low is not None and f.high is not None and 0 <= f.low < f.high <= 1
            assert f.n == N and f.clusters == N // 2


def test_unanswered_edits_are_left_out_and_counted() -> None:
    clusters, truth, record = _world()
    patchy: list[bool | None] = [None if i < 40 else t for i, t in enumerate(truth)]
    row = next(r for r in boards(clusters, _answers(truth), Answers(RECORD, [_answers(record)]),
                                 [Answers("patchy", [_answers(patchy)])], resamples=200)["overall"].rows
               if r.name == "patchy")
    assert row.n == N - 40 and row.unanswered == 40
    assert row.paired is not None and row.paired.difference.n == N - 40


def test_order_bias_and_self_consistency() -> None:
    clusters, truth, record = _world()
    swapped: list[bool | None] = [True] * N  # passes everything with the original first
    second: list[bool | None] = [not r if i % 10 == 0 else r for i, r in enumerate(record)]
    judge = Answers("biased", [_answers(record), _answers(second)],
                    original_first=_answers(swapped))
    row = next(r for r in boards(clusters, _answers(truth), Answers(RECORD, [_answers(record)]),
                                 [judge], resamples=400)["realism"].rows if r.name == "biased")
    failed = sum(r is False for r in record) / N
    assert row.order is not None
    assert abs(row.order.flipped.value - failed) < 1e-12
    assert abs(row.order.pass_rate_change.value - failed) < 1e-12
    assert row.order.pass_rate_change.low > 0  # detected: the interval excludes no change
    assert row.consistency is not None and abs(row.consistency.value - 0.9) < 1e-12
    assert row.consistency.low < 0.9 < row.consistency.high
    # the flip share's chance level is how often its own repeats disagree
    chance = row.chance_flips
    assert chance is not None and abs(chance.value - 0.1) < 1e-12
    assert abs(chance.low - (1 - row.consistency.high)) < 1e-12
    assert abs(chance.high - (1 - row.consistency.low)) < 1e-12


def test_panels_are_a_holm_family_of_their_own() -> None:
    clusters, truth, record = _world()
    rng = random.Random(8)
    better = [[t if rng.random() < 0.9 else not t for t in truth] for _ in range(3)]
    singles = [Answers(f"c{i}", [_answers(b)]) for i, b in enumerate(better)]
    panel = Answers("panel", [_answers(truth)], panel=True)
    rows = {r.name: r for r in boards(clusters, _answers(truth), Answers(RECORD, [_answers(record)]),
                                      [*singles, panel], resamples=200)["overall"].rows}
    alone = {r.name: r for r in boards(clusters, _answers(truth), Answers(RECORD, [_answers(record)]),
                                       singles, resamples=200)["overall"].rows}
    for single in singles:  # adding a panel does not change the candidates' adjustment
        assert rows[single.name].paired.holm_p == alone[single.name].paired.holm_p
    assert rows["panel"].panel and rows["panel"].paired.holm_p == rows["panel"].paired.mcnemar_clustered_p


def test_the_auc_reads_the_weighted_score_on_the_overall_question_only() -> None:
    clusters, truth, record = _world()
    scores = [0.9 if t else 0.1 for t in truth]
    board = boards(clusters, _answers(truth), Answers(RECORD, [_answers(record)]),
                   [Answers("scored", [_answers(record)], scores=scores)], resamples=200)
    row = next(r for r in board["overall"].rows if r.name == "scored")
    assert row.auc is not None and row.auc.value == 1.0
    assert all(r.auc is None for r in board["realism"].rows)


def test_the_flip_matrix_counts_each_change_and_whom_the_readers_side_with() -> None:
    from app.judges.leaderboard import flips

    truth = [True, True, False, False, True, None]
    record = [True, False, True, False, True, False]
    candidate = [False, True, False, True, True, True]
    found = flips(candidate, record, truth)
    # edit 0: record pass -> candidate fail, readers pass (side with the record)
    # edit 1: record fail -> candidate pass, readers pass (agree)
    # edit 2: record pass -> candidate fail, readers fail (agree)
    # edit 3: record fail -> candidate pass, readers fail (side with the record)
    # edit 5: not settled, left out
    assert (found.to_fail_readers_agree, found.to_fail_readers_disagree,
            found.to_pass_readers_agree, found.to_pass_readers_disagree) == (1, 1, 1, 1)
    assert found.total == 4 and [e[0] for e in found.edits] == [0, 1, 2, 3]


def _board(above: dict[str, tuple[str, ...]]) -> Board:
    figure = Figure(0.5, 0.4, 0.6, 10, 5)
    return Board("overall", [Row(name, {"agreement": figure}, 10, 0, above=beats)
                             for name, beats in above.items()])


def test_a_judge_not_separated_from_two_that_differ_is_grouped_with_neither_alone() -> None:
    # A beats C; B beats neither and neither beats B. Chained tiers said "A = B = C".
    board = _board({"A": ("C",), "B": (), "C": ()})
    letters = board.letters()
    assert set(letters["A"]) & set(letters["C"]) == set()
    assert set(letters["B"]) & set(letters["A"]) and set(letters["B"]) & set(letters["C"])
    assert board.ranks_line() == "A > C; not separated from any judge: B"


def test_letters_never_join_two_judges_shown_to_differ() -> None:
    rng = random.Random(5)
    for _ in range(300):
        names = [f"j{i}" for i in range(rng.randint(2, 7))]
        above = {n: tuple(m for m in names[i + 1:] if rng.random() < 0.4)
                 for i, n in enumerate(names)}
        letters = _board(above).letters()
        for a, beaten in above.items():
            for b in beaten:
                assert not set(letters[a]) & set(letters[b]), (above, letters)
        # two judges not separated share a letter
        for i, a in enumerate(names):
            for b in names[i + 1:]:
                if b not in above[a]:
                    assert set(letters[a]) & set(letters[b]), (above, letters)
    assert _board({"A": (), "B": ()}).ranks_line() == "no judge is shown to differ from another"


def test_the_cli_table_names_every_judge_whole() -> None:
    """Names were cut at 27 characters: two candidates differing at the end read the same."""
    from app.cli.judges import board_text

    clusters, truth, record = _world()
    names = ["gemini-2.5-flash strict rubric, v2", "gemini-2.5-flash strict rubric, v3"]
    board = boards(clusters, _answers(truth), Answers(RECORD, [_answers(record)]),
                   [Answers(n, [_answers(record)]) for n in names], resamples=100)["overall"]
    lines = board_text(board).splitlines()
    for name in names:
        assert any(line.startswith(name + " ") for line in lines), name
