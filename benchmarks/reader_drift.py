"""The pause on the readers (app/readers/pause.py) under the conditions of real studies: seeded
simulated studies, each reader's known-answer cases run through the app's own test
(app/readers/changepoint.py `test`, what `known_test` calls after every answer, at the rate
`reader_alpha` gives for the study's readers). Not part of the tests.

Every study has R readers who read the same K known-answer cases, each in their own random
order (as the app places them). A case's questions share the case's difficulty, a normal
effect on the logit the same for every reader; each question has its settled answer. A
steady reader keeps their accuracy; a dropping one (reader 0) loses DROP points on every
question (or on one) from their BEFORE-th known-answer case on.

For each model the script reports: steady readers paused (per reader and per study: goal at
most 5 % of studies); the share of dropping readers paused within 20 known-answer cases of
the drop; and the same for an oracle told the reader's true accuracy per question and the
model (a Bernoulli CUSUM, its threshold simulated under the model at the same rate).

    .venv/bin/python benchmarks/reader_drift.py [--studies 1000]

With --table it writes instead what the new-study form says the test can see
(app/readers/detectable_table.py): for each number of known-answer cases per reader and of
readers, the share of steady readers paused and of readers who drop DROP points halfway
through their list paused before it ends (case difficulty sd 1.0, accuracy 0.9).

    .venv/bin/python benchmarks/reader_drift.py --table [--studies 400]

With --difficulty it compares the app's test with one whose case difficulty is set by the
other readers (a design the app does not have, built here only to measure it: the app's
test stays its own `test`) (each case's score less the others' mean on it). To keep the rate, that score
may enter only once every other reader has answered the case and can never change after, so
the cases enter in the order they complete; readers read in their own random orders at their
own paces. Both are scored on the dropping reader paused at any point after the drop.

    .venv/bin/python benchmarks/reader_drift.py --difficulty [--studies 300]
"""

import argparse
import sys
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from app.readers.changepoint import test
from app.readers.pause import STUDY_ALPHA, reader_alpha

QUESTIONS = 5
DROP = 0.15
WITHIN = 20


@dataclass(frozen=True)
class Model:
    name: str
    readers: int = 3
    known: int = 60
    before: int = 20
    difficulty: float = 0.5  # sd of a case's effect on the logit
    accuracy: tuple[float, ...] = (0.9,) * QUESTIONS  # per question
    strict: bool = False  # reader 1 says "no" more: lower on settled yes, higher on settled no
    shared_hard: float = 0.0  # share of cases every reader finds DROP points harder
    drop_questions: tuple[int, ...] = tuple(range(QUESTIONS))
    all_drop: bool = False  # every reader drops at BEFORE, not reader 0 alone
    notes: list[str] = field(default_factory=list)


MODELS = [
    Model("3 readers in parallel, same pace"),
    # The known-answer test reads one reader's own known-answer cases: the others' pace, and
    # what they make of the ordinary cases, change nothing in it; the rows say so by number.
    Model("3 readers at paces 3x, 1x, 0.6x"),
    Model("2 readers", readers=2),
    Model("skill differs by question", accuracy=(0.97, 0.9, 0.8, 0.85, 0.92)),
    Model("case difficulty sd 0.5", difficulty=0.5),
    Model("case difficulty sd 1.0", difficulty=1.0),
    Model("case difficulty sd 1.5", difficulty=1.5),
    Model("one reader stricter", strict=True),
    Model("long study: 200 known-answer cases, 8,000 reads", known=200, before=100),
    Model("the majority shares an error on 30 % of cases"),
    Model("every reader harder on the same 30 % of cases", shared_hard=0.3),
    Model("all readers drop together", all_drop=True),
    Model("a drop in one question only", drop_questions=(4,)),
]


def _logit(p: np.ndarray) -> np.ndarray:
    p = np.clip(p, 1e-6, 1 - 1e-6)
    return np.log(p / (1 - p))


def study(rng: np.random.Generator, m: Model, drop: bool) -> np.ndarray:
    """Right answers per reader, case (in the reader's order) and question: R x K x Q."""
    effect = rng.normal(0.0, m.difficulty, m.known)
    settled_yes = rng.random((m.known, QUESTIONS)) < 0.6
    hard = rng.random(m.known) < m.shared_hard
    out = np.zeros((m.readers, m.known, QUESTIONS), dtype=bool)
    for r in range(m.readers):
        order = rng.permutation(m.known)
        level = np.tile(np.array(m.accuracy), (m.known, 1))
        level[hard[order]] -= DROP
        if m.strict and r == 1:  # says no more often: a bias, not a drop
            level = np.where(settled_yes[order], level - 0.1, np.minimum(level + 0.05, 0.99))
        if drop and (r == 0 or m.all_drop):
            level[m.before:, list(m.drop_questions)] -= DROP
        p = 1 / (1 + np.exp(-(_logit(level) + effect[order][:, None])))
        out[r] = rng.random(p.shape) < p
    return out


def paused_at(right: np.ndarray, alpha: float, rng: np.random.Generator) -> int | None:
    """The known-answer case after which the app's test pauses this reader, or None."""
    shares = right.mean(axis=1)
    return test(shares, rng.random(len(shares)), len(shares), alpha).flagged_at


def oracle_rate(rng: np.random.Generator, m: Model, alpha: float, runs: int) -> float:
    """Told the true accuracy per question: a Bernoulli CUSUM per answer, its threshold
    simulated under the model itself; the share flagged within WITHIN cases of the drop."""
    p0 = np.array(m.accuracy)
    p1 = p0.copy()
    p1[list(m.drop_questions)] -= DROP
    win, lose = np.log(p1 / p0), np.log((1 - p1) / (1 - p0))

    def statistic(drop: bool) -> np.ndarray:
        right = np.stack([study(rng, m, drop)[0] for _ in range(runs)])  # runs x K x Q
        step = (right * win + (~right) * lose).sum(axis=2)
        s, out = np.zeros(runs), np.zeros(step.shape)
        for t in range(step.shape[1]):
            s = np.maximum(0.0, s + step[:, t])
            out[:, t] = s
        return out

    null = statistic(False)
    h = np.quantile(null[:, 4:].max(axis=1), 1 - alpha)  # from the 5th case, as the app
    found = statistic(True)
    early = (found[:, 4:m.before] >= h).any(axis=1)
    return float(np.mean(~early & (found[:, m.before:m.before + WITHIN] >= h).any(axis=1)))


TABLE_KNOWN = (6, 8, 10, 12, 15, 20, 25, 30, 40, 50, 60, 80, 100, 150, 200, 300)
TABLE_READERS = (1, 2, 3, 4, 5, 6, 8, 10, 15, 20)
TABLE = Path(__file__).resolve().parents[1] / "app" / "readers" / "detectable_table.py"


def write_table(rows: dict[int, dict[int, tuple[float, float]]], studies: int) -> None:
    body = "".join(f"    {r}: {{\n" + "".join(f"        {k}: {v},\n" for k, v in cells.items())
                   + "    },\n" for r, cells in rows.items())
    TABLE.write_text(
        '"""What the known-answer test can see: written by benchmarks/reader_drift.py --table '
        f'({studies}\nsimulated studies a cell); read by app/readers/detectable.py. Do not edit."""\n\n'
        f"DROP = {DROP}\nSTUDIES = {studies}\n"
        "# readers -> known-answer cases per reader -> (share of steady readers paused, share\n"
        "# of readers dropping DROP halfway through their list paused before it ends)\n"
        "TABLE: dict[int, dict[int, tuple[float, float]]] = {\n" + body + "}\n")


def table(studies: int, rng: np.random.Generator) -> None:
    """The form's table: (steady paused, drop paused before the list ends) per cell."""
    rows: dict[int, dict[int, tuple[float, float]]] = {}
    for readers in TABLE_READERS:
        alpha = reader_alpha(readers)
        rows[readers] = {}
        for known in TABLE_KNOWN:
            m = Model("table", readers=1, known=known, before=known // 2, difficulty=1.0)
            steady = sum(paused_at(study(rng, m, False)[0], alpha, rng) is not None
                         for _ in range(studies)) / studies
            caught = 0
            for _ in range(studies):
                at = paused_at(study(rng, m, True)[0], alpha, rng)
                caught += at is not None and at > m.before
            rows[readers][known] = (round(steady, 3), round(caught / studies, 3))
            print(f"readers {readers:>2} known {known:>3}: steady {steady:.1%}, "
                  f"drop {caught / studies:.1%}", flush=True)
    write_table(rows, studies)
    print(f"written {TABLE}")


def timed_study(rng: np.random.Generator, m: Model, drop: bool,
                paces: tuple[float, ...]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Case-id space: right answers R x K x Q, each reader's order R x K, and the time each
    reader answers each case R x K (their position in their own order over their pace)."""
    effect = rng.normal(0.0, m.difficulty, m.known)
    settled_yes = rng.random((m.known, QUESTIONS)) < 0.6
    hard = rng.random(m.known) < m.shared_hard
    right = np.zeros((m.readers, m.known, QUESTIONS), dtype=bool)
    orders = np.zeros((m.readers, m.known), dtype=np.int64)
    times = np.zeros((m.readers, m.known))
    for r in range(m.readers):
        orders[r] = rng.permutation(m.known)
        position = np.empty(m.known, dtype=np.int64)
        position[orders[r]] = np.arange(m.known)
        level = np.tile(np.array(m.accuracy), (m.known, 1))
        level[hard] -= DROP
        if m.strict and r == 1:
            level = np.where(settled_yes, level - 0.1, np.minimum(level + 0.05, 0.99))
        if drop and (r == 0 or m.all_drop):
            level[np.ix_(position >= m.before, list(m.drop_questions))] -= DROP
        p = 1 / (1 + np.exp(-(_logit(level) + effect[:, None])))
        right[r] = rng.random(p.shape) < p
        times[r] = (position + rng.random(m.known)) / paces[r]
    return right, orders, times


def flagged_time(right: np.ndarray, orders: np.ndarray, times: np.ndarray, reader: int,
                 alpha: float, rng: np.random.Generator, by_others: bool) -> float | None:
    """When the reader is flagged: the app's test in their own order, or the test of the
    score less the others' mean, the cases in the order they complete."""
    own = right[reader].mean(axis=1)
    if not by_others:
        order = orders[reader]
        at = test(own[order], rng.random(len(order)), len(order), alpha).flagged_at
        return None if at is None else float(times[reader][order[at - 1]])
    others = np.delete(right, reader, axis=0).mean(axis=(0, 2))
    complete = times.max(axis=0)
    order = np.argsort(complete)
    at = test((own - others)[order], rng.random(len(order)), len(order), alpha).flagged_at
    return None if at is None else float(complete[order[at - 1]])


def difficulty(studies: int, rng: np.random.Generator) -> None:
    cases = [("3 readers, same pace", Model("a"), (1.0, 1.0, 1.0)),
             ("case difficulty sd 1.5", Model("b", difficulty=1.5), (1.0, 1.0, 1.0)),
             ("paces 3x, 1x, 0.6x, the fast one drops", Model("c"), (3.0, 1.0, 0.6)),
             ("paces 0.6x, 1x, 3x, the slow one drops", Model("d"), (0.6, 1.0, 3.0)),
             ("2 readers", Model("e", readers=2), (1.0, 1.0)),
             ("one reader stricter", Model("f", strict=True), (1.0, 1.0, 1.0)),
             ("every reader harder on the same 30 %", Model("g", shared_hard=0.3), (1.0, 1.0, 1.0))]
    print(f"{studies} simulated studies per model, 60 known-answer cases, a drop of {DROP:.0%} "
          "from case 20")
    print("| model | app's test: steady studies paused | drop paused | difficulty from the "
          "others: steady studies paused | drop paused |")
    print("|---|---|---|---|---|")
    for name, m, paces in cases:
        alpha = reader_alpha(m.readers)
        cells = []
        for by_others in (False, True):
            steady = caught = 0
            for _ in range(studies):
                right, orders, times = timed_study(rng, m, False, paces)
                steady += any(flagged_time(right, orders, times, r, alpha, rng, by_others)
                              is not None for r in range(m.readers))
                right, orders, times = timed_study(rng, m, True, paces)
                at = flagged_time(right, orders, times, 0, alpha, rng, by_others)
                caught += at is not None and at >= times[0][orders[0][m.before]]
            cells += [f"{steady / studies:.1%}", f"{caught / studies:.1%}"]
        print(f"| {name} | " + " | ".join(cells) + " |", flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--studies", type=int, default=1000)
    parser.add_argument("--seed", type=int, default=53)
    parser.add_argument("--table", action="store_true",
                        help="write the form's table of what the test can see")
    parser.add_argument("--difficulty", action="store_true",
                        help="compare with case difficulty set by the other readers")
    args = parser.parse_args()
    rng = np.random.default_rng(args.seed)
    if args.table:
        table(args.studies, rng)
        return
    if args.difficulty:
        difficulty(args.studies, rng)
        return
    print(f"{args.studies} simulated studies per model; {QUESTIONS} questions a case; a drop of "
          f"{DROP:.0%} from the reader's known-answer case 20 (100 in the long study); the "
          f"study's rate {STUDY_ALPHA:.0%}, shared by its readers")
    print("| model | steady readers paused, per reader | studies with a steady reader paused "
          "(goal <= 5 %) | drop paused within 20 cases | oracle told the baseline | ratio |")
    print("|---|---|---|---|---|---|")
    for m in MODELS:
        alpha = reader_alpha(m.readers)
        readers_paused = studies_paused = 0
        for _ in range(args.studies):
            right = study(rng, m, drop=False)
            hits = [paused_at(right[r], alpha, rng) is not None for r in range(m.readers)]
            readers_paused += sum(hits)
            studies_paused += any(hits)
        caught = 0
        for _ in range(args.studies):
            right = study(rng, m, drop=True)
            at = paused_at(right[0], alpha, rng)
            caught += at is not None and m.before < at <= m.before + WITHIN
        oracle = oracle_rate(rng, m, alpha, args.studies)
        share = caught / args.studies
        print(f"| {m.name} | {readers_paused / (args.studies * m.readers):.1%} | "
              f"{studies_paused / args.studies:.1%} | {share:.1%} | {oracle:.1%} | "
              f"{share / oracle if oracle else float('nan'):.2f} |", flush=True)


if __name__ == "__main__":
    main()
