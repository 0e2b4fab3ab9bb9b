"""The leaderboard: each candidate judge against the readers' settled reference, per question,
with cluster-bootstrap intervals over source images, paired with the judge of record.

Plain values in, plain values out (no ORM, no web): app/judges/scoring.py reads
a locked study's cases, its settled reference and the candidates' verdicts, and hands them here.

- Against the reference (app/agreement/two_raters.py): agreement, Cohen's kappa, too strict
  (the candidate fails what the readers pass) and too lenient, of all compared edits.
- The AUC of the candidate's weighted score (on two decimals) against the overall reference
  (app/agreement/roc.py).
- Self-consistency: agreement of its first two repeats on the same edits.
- Paired with the judge of record on the edits both answered: the difference in agreement
  with the reference, from one cluster-bootstrap resampling of both, and the clustered
  McNemar test of Durkalski et al. (2003) on the edits exactly one of them got right,
  Holm-adjusted across the candidates of a question; panels, made of those candidates, in a
  family of their own.
- Order bias: the candidate's verdicts with the original image shown first, against its
  verdicts in the usual order: the share that flips, and the change in pass rate.
- Ranks: a judge is placed above another only where the paired interval of their difference
  in agreement excludes zero. That relation is a partial order, not tiers: it is shown as a
  compact letter display and as the list of separated pairs.

A candidate's figures on a question read its first repeat in the usual order; an edit it could
not judge (an unreadable answer, a failed call) is left out of its comparisons and counted.
"""

from collections.abc import Hashable, Sequence
from dataclasses import dataclass, field, replace

import numpy as np

from app.agreement.multiplicity import holm_adjusted
from app.agreement.resample import ClusterBootstrap, Figure
from app.agreement.roc import area
from app.agreement.stats import Vote
from app.agreement.two_raters import cells, clustered_mcnemar, compare_many, ratio
from pipeline.vocabulary import QUESTIONS

__all__ = ["QUESTIONS", "RECORD", "Answers", "Board", "Figure", "Flips", "OrderBias", "Paired", "Row",
           "boards", "flips"]
RECORD = "judge of record"
SHOWN = ("agreement", "kappa", "a_stricter", "a_more_lenient")


@dataclass(frozen=True)
class Answers:
    """One judge's answers on the reference's edits, in the reference's order."""

    name: str
    # repeat -> per edit: question -> pass / fail / None (not answered or unreadable)
    usual: list[list[dict[str, Vote]]]
    scores: list[float | None] = field(default_factory=list)  # weighted score, first repeat
    original_first: list[dict[str, Vote]] | None = None  # the order-bias run, first repeat
    # A panel combines candidates already on the board: its test against the record is not
    # a further, independent hypothesis, so it is adjusted in a family of the panels' own.
    panel: bool = False


@dataclass(frozen=True)
class Paired:
    """A candidate against the judge of record on the edits both answered."""

    difference: Figure  # candidate's agreement minus the record's
    only_candidate_right: int
    only_record_right: int
    mcnemar_clustered_p: float | None
    holm_p: float | None = None


@dataclass(frozen=True)
class OrderBias:
    flipped: Figure  # share of edits whose verdict changes with the images' order
    pass_rate_change: Figure  # pass rate with the original first, minus in the usual order


@dataclass(frozen=True)
class Flips:
    """Where a candidate's verdict differs from the judge of record's, on the edits both
    answered and the readers settled, and whom the readers side with: the flip matrix."""

    to_fail_readers_agree: int  # the record passed, the candidate failed, the readers failed it
    to_fail_readers_disagree: int
    to_pass_readers_agree: int  # the record failed, the candidate passed, the readers passed it
    to_pass_readers_disagree: int
    edits: tuple[tuple[int, bool, bool], ...]  # (edit index, candidate passed, readers agree)

    @property
    def total(self) -> int:
        return len(self.edits)


def flips(candidate: Sequence[Vote], record: Sequence[Vote], truth: Sequence[Vote]) -> Flips:
    edits = tuple((i, bool(c), c == t) for i, (c, r, t) in enumerate(zip(candidate, record, truth,
                                                                        strict=True))
                  if c is not None and r is not None and t is not None and c != r)
    return Flips(sum(1 for _, p, a in edits if not p and a), sum(1 for _, p, a in edits if not p and not a),
                 sum(1 for _, p, a in edits if p and a), sum(1 for _, p, a in edits if p and not a), edits)


@dataclass(frozen=True)
class Row:
    """One judge on one question."""

    name: str
    figures: dict[str, Figure]
    n: int  # edits compared with the reference
    unanswered: int  # reference edits it gave no readable answer on
    auc: Figure | None = None
    consistency: Figure | None = None
    paired: Paired | None = None  # None for the record itself
    order: OrderBias | None = None
    above: tuple[str, ...] = ()  # judges it is shown to beat (paired interval above zero)
    flips: Flips | None = None  # against the judge of record; None for the record itself
    panel: bool = False

    @property
    def chance_flips(self) -> Figure | None:
        """The order-bias flip share's chance level: how often the judge's verdict changes
        between two repeats in the same order (1 - its self-consistency). A flip share near
        it is the judge's own noise, not the images' order."""
        c = self.consistency
        if c is None or c.value is None:
            return None
        return replace(c, value=1 - c.value, low=None if c.high is None else 1 - c.high,
                       high=None if c.low is None else 1 - c.low)


@dataclass(frozen=True)
class Board:
    question: str
    rows: list[Row]  # by agreement, best first
    # Each edit's task (id, key), in the reference's order, for the flipped edits' links.
    edits: tuple[tuple[int, str], ...] = ()

    def letters(self) -> dict[str, str]:
        """A compact letter display (Piepho 2004, insert and absorb): judges that share a letter
        are not shown to differ, and two judges shown to differ never share one. Unlike tiers
        chained through "indistinguishable" pairs, it stays true when A beats C while B beats
        neither. Letters run from the best-agreeing judge down."""
        names = [r.name for r in self.rows]
        columns: list[set[str]] = [set(names)]
        for row in self.rows:
            for lower in row.above:
                split: list[set[str]] = []
                for column in columns:
                    if row.name in column and lower in column:
                        split += [column - {row.name}, column - {lower}]
                    else:
                        split.append(column)
                # absorb: a column inside another says nothing the bigger one does not
                columns = [c for i, c in enumerate(split) if c and not any(
                    c < o or (c == o and j < i) for j, o in enumerate(split) if j != i)]
        order = {n: i for i, n in enumerate(names)}
        columns.sort(key=lambda c: sorted(order[n] for n in c))
        return {n: "".join(_letter(i) for i, c in enumerate(columns) if n in c) for n in names}

    def separations(self) -> list[tuple[str, str]]:
        """Every pair (better, worse) whose paired interval excludes zero, best first."""
        return [(r.name, lower) for r in self.rows for lower in r.above]

    def ranks_line(self) -> str:
        """The partial order in words: who is shown above whom, and who is not separated."""
        pairs = self.separations()
        if len(self.rows) < 2:
            return "one judge, nothing to rank"
        if not pairs:
            return "no judge is shown to differ from another"
        shown = "; ".join(f"{a} > {b}" for a, b in pairs)
        apart = {n for pair in pairs for n in pair}
        loose = [r.name for r in self.rows if r.name not in apart]
        if loose:
            shown += "; not separated from any judge: " + ", ".join(loose)
        return shown


def _letter(i: int) -> str:
    # past 26 groups (ten judges rarely make five) the letters take a number
    return chr(ord("a") + i % 26) + (str(i // 26) if i >= 26 else "")


def boards(clusters: Sequence[Hashable], reference: list[dict[str, Vote]], record: Answers,
           candidates: list[Answers], *, resamples: int | None = None,
           questions: Sequence[str] = QUESTIONS) -> dict[str, Board]:
    """Per question (every one, or those asked for), the record and every candidate against
    the reference (all lists in the reference's order; ``clusters`` names each edit's source
    image)."""
    boot = (ClusterBootstrap(list(clusters)) if resamples is None
            else ClusterBootstrap(list(clusters), resamples=resamples))
    judges = [record, *candidates]
    found: dict[str, Board] = {}
    for question in questions:
        truth = [r.get(question) for r in reference]
        votes = {j.name: [a.get(question) for a in j.usual[0]] for j in judges}
        pairs = compare_many([(votes[j.name], truth) for j in judges], boot, SHOWN)
        paired = dict(zip((c.name for c in candidates), _paired_many(
            [(votes[c.name], votes[record.name]) for c in candidates], truth, boot), strict=True))
        is_panel = {c.name: c.panel for c in candidates}
        adjusted = {**holm_adjusted({n: p.mcnemar_clustered_p for n, p in paired.items()
                                     if not is_panel[n]}),
                    **holm_adjusted({n: p.mcnemar_clustered_p for n, p in paired.items()
                                     if is_panel[n]})}
        consistency = _consistency(judges, question, boot)
        order = _order_bias(judges, question, boot)
        rows = []
        for judge, pair in zip(judges, pairs, strict=True):
            answered = sum(v is not None for v, t in zip(votes[judge.name], truth, strict=True)
                           if t is not None)
            settled = sum(t is not None for t in truth)
            test = paired.get(judge.name)
            rows.append(Row(
                name=judge.name, figures=pair.figures, n=pair.table.n,
                unanswered=settled - answered,
                auc=_auc(judge, truth, clusters) if question == "overall" else None,
                consistency=consistency.get(judge.name),
                paired=None if test is None else Paired(
                    test.difference, test.only_candidate_right, test.only_record_right,
                    test.mcnemar_clustered_p, adjusted[judge.name]),
                order=order.get(judge.name), panel=judge.panel,
                flips=None if test is None else flips(votes[judge.name], votes[record.name], truth)))
        found[question] = Board(question, _ranked(rows, votes, truth, boot))
    return found


def _correct(votes: Sequence[Vote], truth: Sequence[Vote]) -> tuple[np.ndarray, np.ndarray]:
    """Whether each edit was answered (and settled), and whether the answer matched."""
    answered = np.array([v is not None and t is not None for v, t in zip(votes, truth, strict=True)])
    right = np.array([v is not None and v == t for v, t in zip(votes, truth, strict=True)])
    return answered, right & answered


def _paired(candidate: Sequence[Vote], record: Sequence[Vote], truth: Sequence[Vote],
            boot: ClusterBootstrap) -> Paired:
    """The difference in agreement on the edits both judges answered, resampled together."""
    return _paired_many([(candidate, record)], truth, boot)[0]


def _difference(sums: np.ndarray) -> np.ndarray:
    return ratio(sums[..., 0] - sums[..., 1], sums[..., 2])


def _paired_many(pairs: Sequence[tuple[Sequence[Vote], Sequence[Vote]]], truth: Sequence[Vote],
                 boot: ClusterBootstrap) -> list[Paired]:
    """``_paired`` of several pairs of judges over the same edits, from one resampling: the
    leaderboard compares every judge with every other (55 pairs for ten candidates)."""
    if not pairs:
        return []
    right: dict[int, tuple[np.ndarray, np.ndarray]] = {}
    for votes in (v for pair in pairs for v in pair):
        if id(votes) not in right:
            right[id(votes)] = _correct(votes, truth)
    stacked, only = [], []
    for a, b in pairs:
        (a_answered, a_right), (b_answered, b_right) = right[id(a)], right[id(b)]
        both = a_answered & b_answered
        stacked.append(np.stack([a_right & both, b_right & both, both], axis=1))
        only.append((a_right & ~b_right & both, b_right & ~a_right & both))
    features = np.stack(stacked, axis=1).astype(float)  # edits x pairs x 3
    figures = boot.figures_of_many(features, {"difference": _difference},
                                   ns=[int(f[:, 2].sum()) for f in stacked],
                                   bounds={"difference": (-1.0, 1.0)})
    per_cluster = boot.cluster_sums(np.concatenate(
        [np.stack(o, axis=1) for o in only], axis=1).astype(float))
    found = []
    for p, (only_a, only_b) in enumerate(only):
        discordant = per_cluster[:, 2 * p] - per_cluster[:, 2 * p + 1]
        test = clustered_mcnemar(discordant) if (only_a | only_b).any() else None
        found.append(Paired(figures[p]["difference"], int(only_a.sum()), int(only_b.sum()), test))
    return found


def _ranked(rows: list[Row], votes: dict[str, list[Vote]], truth: list[Vote],
            boot: ClusterBootstrap) -> list[Row]:
    """Rows by agreement, each naming the judges its paired interval shows it beats."""
    beaten: dict[str, list[str]] = {r.name: [] for r in rows}
    pairs = [(a.name, b.name) for i, a in enumerate(rows) for b in rows[i + 1:]]
    tests = _paired_many([(votes[a], votes[b]) for a, b in pairs], truth, boot)
    for (a, b), test in zip(pairs, tests, strict=True):
        difference = test.difference
        if difference.low is not None and difference.low > 0:
            beaten[a].append(b)
        elif difference.high is not None and difference.high < 0:
            beaten[b].append(a)

    def key(row: Row) -> tuple[float, str]:
        value = row.figures["agreement"].value
        return (-(value if value is not None else -1.0), row.name)

    return [replace(r, above=tuple(beaten[r.name])) for r in sorted(rows, key=key)]


def _auc(judge: Answers, truth: list[Vote], clusters: Sequence[Hashable]) -> Figure | None:
    keep = [i for i, (t, s) in enumerate(zip(truth, judge.scores, strict=False))
            if t is not None and s is not None]
    if not keep or len({truth[i] for i in keep}) < 2:
        return None
    # On two decimals, as judges give them: the resampling works level by level, and a
    # thousand distinct levels made one AUC a tenth of a second.
    return area([bool(truth[i]) for i in keep],
                [round(float(judge.scores[i] or 0.0), 2) for i in keep],
                clusters=[clusters[i] for i in keep])


def _consistency(judges: Sequence[Answers], question: str,
                 boot: ClusterBootstrap) -> dict[str, Figure]:
    """Agreement of each judge's first two repeats on the same edits; judges with one
    repeat are left out. All from one resampling."""
    repeated = [j for j in judges if len(j.usual) >= 2]
    pairs = [([a.get(question) for a in j.usual[0]], [a.get(question) for a in j.usual[1]])
             for j in repeated]
    found = compare_many(pairs, boot, ("agreement",))
    return {j.name: f.figures["agreement"] for j, f in zip(repeated, found, strict=True)}


def _flipped(sums: np.ndarray) -> np.ndarray:
    # cells of (original first, usual): PP, PF, FP, FF; a flip is PF or FP
    return ratio(sums[..., 1] + sums[..., 2],
                 sums[..., 0] + sums[..., 1] + sums[..., 2] + sums[..., 3])


def _change(sums: np.ndarray) -> np.ndarray:
    # pass rate with the original first, (PP + PF), minus in the usual order, (PP + FP)
    return ratio(sums[..., 1] - sums[..., 2],
                 sums[..., 0] + sums[..., 1] + sums[..., 2] + sums[..., 3])


def _order_bias(judges: Sequence[Answers], question: str,
                boot: ClusterBootstrap) -> dict[str, OrderBias]:
    """Each judge's verdicts with the original first against its usual ones: the share that
    flips and the change in pass rate, for every judge run both ways, from one resampling."""
    run = [j for j in judges if j.original_first is not None]
    if not run:
        return {}
    one_hot = np.stack([cells([a.get(question) for a in j.original_first or []],
                              [a.get(question) for a in j.usual[0]]) for j in run], axis=1)
    found = boot.figures_of_many(one_hot, {"flipped": _flipped, "change": _change},
                                 ns=[int(one_hot[:, i].sum()) for i in range(len(run))],
                                 bounds={"flipped": (0.0, 1.0), "change": (-1.0, 1.0)})
    return {j.name: OrderBias(f["flipped"], f["change"]) for j, f in zip(run, found, strict=True)}
