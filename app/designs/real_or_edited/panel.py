"""Can radiologists in general tell an edit from a real image? The readers of a real-or-edited
study as a random sample: the single-modality Obuchowski-Rockette analysis of their ROC areas
(app/mrmc/orh.py, held to the Iowa OR-DBM MRMC software), readers and cases random first,
readers fixed beside, and how many readers and cases the study's margin calls for.

The analysis is fully crossed: it takes the cases every reader has read (first reads), and
says how many others it leaves out while the study is open.

The judge is not one more reader here, and the page says why (JUDGE_REASON): it has no score
for an original, and most of its weighted score has no meaning for one.
"""

import math
from dataclasses import dataclass, field

import numpy as np

from app.agreement.random_reader_words import alike_sentence, fixed_width, precision_sentence
from app.charts import Point, readers_and_judge_chart
from app.designs.real_or_edited.figures import Read, RealOrEditedResults
from app.mrmc.auc import auc_and_jackknife
from app.mrmc.data import MrmcData, MrmcInputError
from app.mrmc.orh import OrResult, Single, analyse
from app.mrmc.sample_size import Pilot, Power, cases_for_width, power, table

MODALITY = "real or edited"
RANDOM = "radiologists in general, and cases like these"
FIXED = "these readers only, and cases like these"
JUDGE_REASON = ("The judge is not drawn: it has no score for an original. The pipeline asks it "
                "only about edits, and most of its weighted score is compliance with an "
                "instruction (40 %) and fidelity to the image before the edit (15 %), which "
                "mean nothing for an image nobody edited, so a score given to one would "
                "measure something else. Its realism answer alone could be asked of an "
                "original, but it is a yes or no: an area from it is two points, not a "
                "curve, and the app has not asked it.")


@dataclass
class PanelRoc:
    readers: tuple[str, ...] = ()
    cases: int = 0  # read by every reader
    left_out: int = 0  # read by some readers only
    result: OrResult | None = None
    reason: str | None = None
    margin: float = 0.05
    sizes: list[tuple[int, Power | None]] = field(default_factory=list)
    judge_reason: str = JUDGE_REASON
    at_these_readers: Power | None = None  # cases for the margin with these readers
    expected_now: float = float("nan")  # the half-width the components predict as things are

    @property
    def readers_alike(self) -> bool:
        """Every reader's area is the same: the readers' spread is estimated as zero, and
        Hillis's df (a t with df = infinity: the normal) has no bound, as in the Iowa
        software; the interval then allows nothing for how other radiologists differ."""
        return self.result is not None and self.result.ms_r_single[0] == 0

    @property
    def random_df(self) -> str:
        if self.result is None:
            return ""
        df = self.result.rrrc.single[0].df
        return "unbounded (a normal interval)" if df is None or math.isinf(df) else f"{df:.1f}"

    @property
    def sentence_random(self) -> str | None:
        if self.result is None:
            return None
        s = self.result.rrrc.single[0]
        found = (f"For {RANDOM}: mean ROC area {s.auc:.3f}, 95 % CI ({s.ci[0]:.3f}, "
                 f"{s.ci[1]:.3f}){_beyond(s.ci)}; {_verdict(s.ci)}.")
        if self.readers_alike:
            found += " " + alike_sentence(len(self.readers), "area")
        return found

    @property
    def sentence_fixed(self) -> str | None:
        if self.result is None:
            return None
        s = self.result.frrc.single[0]
        return (f"For {FIXED}: {s.auc:.3f}, 95 % CI ({s.ci[0]:.3f}, {s.ci[1]:.3f}){_beyond(s.ci)}; "
                f"{fixed_width(s.ci, self.result.rrrc.single[0].ci)}.")

    @property
    def precision(self) -> str | None:
        if self.result is None:
            return None
        return precision_sentence(len(self.readers), self.result.rrrc.single[0].ci, self.margin,
                                  self.expected_now, self.at_these_readers, self.readers_needed,
                                  self.cases, "cases", alike=self.readers_alike)

    @property
    def readers_needed(self) -> int | None:
        return next((j for j, found in self.sizes if found is not None), None)

    def points(self, results: RealOrEditedResults) -> list[Point]:
        """Each reader's area with the results page's own interval (all their first reads),
        then the readers' mean, readers random and readers fixed."""
        found = [Point(row.name, "reader", row.area.value, row.area.low, row.area.high, row.reads)
                 for row in results.rows if row.name in self.readers]
        if self.result is not None:
            n = self.cases * len(self.readers)
            for label, single in (("readers' mean (readers random)", self.result.rrrc.single[0]),
                                  ("readers' mean (readers fixed)", self.result.frrc.single[0])):
                low, high = max(single.ci[0], 0.0), min(single.ci[1], 1.0)
                found.append(Point(label, "readers", single.auc, low, high, n))
        return found

    def chart(self, results: RealOrEditedResults) -> str:
        return readers_and_judge_chart(
            self.points(results), "ROC area for \u201cedited\u201d: each reader (cluster bootstrap "
            "95 % CI) and the readers' mean (Obuchowski\u2013Rockette)", "ROC area (0.5: chance)")

    def as_dict(self) -> dict[str, object]:
        r = self.result
        return {"method": "single-modality Obuchowski-Rockette analysis of the readers' "
                          "trapezoidal ROC areas, jackknife over cases (Obuchowski & Rockette "
                          "1995; Hillis 2007)",
                "readers": list(self.readers), "cases": self.cases, "left_out": self.left_out,
                "reason": self.reason, "judge": self.judge_reason,
                "rrrc": None if r is None else {**_single(r.rrrc.single[0]), "generalises": RANDOM},
                "frrc": None if r is None else {**_single(r.frrc.single[0]), "generalises": FIXED},
                "or": None if r is None else {"var_error": r.single_covariances[0][0],
                                              "cov2": r.single_covariances[0][1],
                                              "ms_r": r.ms_r_single[0]},
                "sample_size": {"half_width": self.margin,
                                "rows": [{"readers": j, "cases": None if p is None else p.cases}
                                         for j, p in self.sizes]}}


def _single(s: Single) -> dict[str, object]:
    """``df`` null: a normal interval (readers fixed, or Hillis's df unbounded)."""
    df = None if s.df is None or math.isinf(s.df) else s.df
    return {"auc": s.auc, "se": s.se, "df": df, "ci": list(s.ci)}


def _beyond(ci: tuple[float, float]) -> str:
    """An interval past an area's bounds is shown as computed, and said to be."""
    if ci[1] > 1 or ci[0] < 0:
        return " (past the bounds of an area: the normal approximation strains this close to the edge)"
    return ""


def _verdict(ci: tuple[float, float]) -> str:
    if ci[0] > 0.5:
        return "readers tell edits from real images better than chance"
    if ci[1] < 0.5:
        return "readers call real images edited more than edits: worse than chance"
    return "the interval holds 0.5, so readers are not shown to tell them apart"


def panel_roc(found: list[Read], margin: float = 0.05) -> PanelRoc:
    """``found``: the study's first reads (figures.py ``reads``)."""
    out = PanelRoc(margin=margin)
    readers = tuple(sorted({r.reader for r in found}))
    out.readers = readers
    by_item: dict[int, dict[str, int]] = {}
    truth: dict[int, bool] = {}
    for r in found:
        by_item.setdefault(r.item_id, {})[r.reader] = r.rating
        truth[r.item_id] = r.is_edit
    crossed = sorted(i for i, who in by_item.items() if len(who) == len(readers))
    out.cases, out.left_out = len(crossed), len(by_item) - len(crossed)
    edits = sum(truth[i] for i in crossed)
    if len(readers) < 2:
        out.reason = ("Needs two readers or more: with one, how differently other radiologists "
                      "would read cannot be estimated.")
        return out
    if edits < 2 or len(crossed) - edits < 2:
        out.reason = (f"The cases every reader has read hold {edits} edit(s) and "
                      f"{len(crossed) - edits} original(s): the jackknife needs two of each.")
        return out
    ratings = np.array([[[float(by_item[i][name]) for i in crossed] for name in readers]])
    data = MrmcData((MODALITY,), readers, tuple(map(str, crossed)),
                    np.array([truth[i] for i in crossed]), ratings)
    auc, jack = auc_and_jackknife(data.ratings, data.truth)
    try:
        result = analyse(data)
    except MrmcInputError as error:  # no case moves any area: said, not raised
        out.reason = f"The readers-random analysis cannot be computed: {error}."
        return out
    if not (result.rrrc.single[0].se > 0 and result.frrc.single[0].se > 0):
        out.reason = ("No interval can be right: the readers' areas do not vary, and no case "
                      "left out moves them.")
        return out
    out.result = result
    if out.readers_alike:  # a zero spread would promise the margin with too few readers
        return out
    pilot = Pilot.single(auc[0], jack[0])
    out.sizes = table(pilot, half_width=margin)
    if out.sizes:  # else the pilot has no variance to predict from
        out.at_these_readers = cases_for_width(pilot, len(readers), margin)
        out.expected_now = power(pilot, len(readers), out.cases, 0.0).half_width
    return out



def panel_roc_for(results: RealOrEditedResults) -> PanelRoc:
    """From the results page's own first reads: the study is read once."""
    return panel_roc(results.first_reads, margin=results.study.margin)
