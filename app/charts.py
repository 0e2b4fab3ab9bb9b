"""Charts as SVG, drawn with matplotlib (the object API, no pyplot state, so it is safe in
worker threads). Colours follow the reading-room theme in static/app.css, and the print
stylesheet inverts them. Every feature draws with these (the agreement report's own charts
are app/agreement/charts.py); each chart is shown beside the table of its numbers."""

import io
from collections.abc import Sequence
from dataclasses import dataclass

import matplotlib as mpl
from matplotlib.axes import Axes
from matplotlib.colors import LinearSegmentedColormap
from matplotlib.figure import Figure

mpl.rcParams.update({"svg.fonttype": "none", "svg.hashsalt": "medbanana"})
TEXT, MUTED, LINE = "#d6d9dc", "#8b939b", "#2a2f35"
# From the page's panel colour to its accent: calm on a dark screen, unlike white-based maps.
HEAT = LinearSegmentedColormap.from_list("reading-room", ["#1e2226", "#7fb3e6"])
SERIES = {"judge": "#7fb3e6", "reader": "#6fbf8a", "readers": "#d9b36c"}


@dataclass(frozen=True)
class Point:
    label: str
    series: str  # "judge", "reader" or "readers"
    value: float | None
    low: float | None
    high: float | None
    n: int


def _figure(width: float, height: float) -> tuple[Figure, Axes]:
    figure = Figure(figsize=(width, height), facecolor="none")
    axes = figure.add_subplot()
    _style(axes)
    return figure, axes


def _style(axes: Axes) -> None:
    axes.set_facecolor("none")
    for side in ("top", "right"):
        axes.spines[side].set_visible(False)
    for side in ("left", "bottom"):
        axes.spines[side].set_color(LINE)
    axes.tick_params(colors=MUTED, labelcolor=TEXT, labelsize=9)


def _draw(axes: Axes, point: Point, y: float, colour: str, alpha: float = 0.8) -> None:
    """One estimate at height ``y``: its interval as a bar, when it has one, and its value
    (the callers say in words when there is no value)."""
    if point.value is None:
        return
    if point.low is not None and point.high is not None:
        axes.plot([point.low, point.high], [y, y], color=colour, linewidth=2, alpha=alpha)
    axes.plot([point.value], [y], "o", color=colour, markersize=5)


def _svg(figure: Figure) -> str:
    buffer = io.StringIO()
    figure.savefig(buffer, format="svg", bbox_inches="tight", transparent=True)
    text = buffer.getvalue()
    return text[text.index("<svg"):]  # inline in the page: no XML prolog


def interval_chart(points: Sequence[Point], title: str, axis_label: str,
                   lower: float = 0.0) -> str:
    """Horizontal points with interval bars, one row per label, n written beside each. A row
    with no case behind it is left out; one whose figure cannot be estimated says so."""
    points = [p for p in points if p.n > 0]
    figure, axes = _figure(7.5, 0.32 * max(len(points), 1) + 1.1)
    if not points:
        axes.text(0.5, 0.5, "nothing to draw yet: no case in this slice has been read",
                  ha="center", va="center", color=MUTED, fontsize=9, transform=axes.transAxes)
        axes.set_yticks([])
    for row, point in enumerate(reversed(points)):
        colour = SERIES.get(point.series, TEXT)
        if point.value is None:
            axes.text(lower, row, f"  cannot be estimated here (n={point.n})", va="center",
                      color=MUTED, fontsize=8)
            continue
        _draw(axes, point, row, colour, alpha=0.7)
        axes.text(1.02, row, f"n={point.n}", va="center", color=MUTED, fontsize=8,
                  transform=axes.get_yaxis_transform())
    axes.set_yticks(range(len(points)), [p.label for p in reversed(points)])
    axes.set_xlim(lower, 1.0)
    axes.set_xlabel(axis_label, color=MUTED, fontsize=9)
    axes.set_title(title, color=TEXT, fontsize=10, loc="left")
    axes.grid(axis="x", color=LINE, linewidth=0.6)
    return _svg(figure)


def heat_table(table: dict[str, int], a_label: str, b_label: str, title: str) -> str:
    """The 2x2 table as a heat map with the counts written in."""
    figure, axes = _figure(3.4, 2.9)
    grid = [[table["both_pass"], table["a_pass_b_fail"]], [table["a_fail_b_pass"], table["both_fail"]]]
    top = max(1, max(max(row) for row in grid))
    axes.imshow(grid, cmap=HEAT, vmin=0, vmax=top)
    for i in range(2):
        for j in range(2):
            # Dark text on the light (large) cells, light text on the dark ones.
            axes.text(j, i, str(grid[i][j]), ha="center", va="center", fontsize=13,
                      color="#0f1113" if grid[i][j] > top / 2 else TEXT)
    axes.set_xticks([0, 1], [f"{b_label}\npass", f"{b_label}\nfail"])
    axes.set_yticks([0, 1], [f"{a_label} pass", f"{a_label} fail"])
    axes.set_title(title, color=TEXT, fontsize=10, loc="left")
    return _svg(figure)


def rounds_chart(ours: dict[int, int], paper: dict[str, float]) -> str:
    """Rounds to success as shares of successful tasks, ours beside the paper's buckets."""
    figure, axes = _figure(6.0, 2.8)
    total = sum(ours.values()) or 1
    buckets = {"1": ours.get(1, 0), "2": ours.get(2, 0),
               "3-5": sum(n for r, n in ours.items() if r >= 3)}
    x = range(len(buckets))
    axes.bar([i - 0.2 for i in x], [n / total for n in buckets.values()], width=0.4,
             color=SERIES["judge"], label=f"imported (n={sum(ours.values())})")
    axes.bar([i + 0.2 for i in x], [paper[k] for k in buckets], width=0.4, color=MUTED,
             label="paper")
    axes.set_xticks(list(x), [f"round {k}" for k in buckets])
    axes.set_ylabel("share of successful tasks", color=MUTED, fontsize=9)
    axes.set_ylim(0, 1)
    axes.legend(frameon=False, labelcolor=TEXT, fontsize=8)
    axes.set_title("Rounds to success", color=TEXT, fontsize=10, loc="left")
    return _svg(figure)


def roc_chart(points: Sequence[tuple[float, float]], marks: Sequence[tuple[str, float, float]],
              title: str) -> str:
    """An ROC curve: (false positive rate, true positive rate) points, the chance diagonal,
    and labelled operating points (a threshold's rates)."""
    figure, axes = _figure(3.9, 3.6)
    axes.plot([0, 1], [0, 1], color=LINE, linewidth=1, linestyle="--")
    axes.plot([p[0] for p in points], [p[1] for p in points], color=SERIES["judge"],
              linewidth=1.8, drawstyle="default")
    for (label, fpr, tpr), marker in zip(marks, ("o", "s", "^", "D"), strict=False):
        axes.plot([fpr], [tpr], marker, color=SERIES["readers"], markersize=6, label=label)
    axes.set_xlim(0, 1)
    axes.set_ylim(0, 1.02)
    axes.set_aspect("equal")
    axes.set_xlabel("1 - specificity (edits readers failed, passed by the score)", color=MUTED,
                    fontsize=8)
    axes.set_ylabel("sensitivity", color=MUTED, fontsize=8)
    axes.grid(color=LINE, linewidth=0.5)
    if marks:
        axes.legend(frameon=False, labelcolor=TEXT, fontsize=7, loc="lower right")
    axes.set_title(title, color=TEXT, fontsize=9, loc="left")
    return _svg(figure)


def reliability_chart(bins: Sequence[tuple[float, float, int]], title: str) -> str:
    """Mean score against the share readers passed, one point per score bin (size by n), with
    the diagonal a calibrated score would follow."""
    figure, axes = _figure(3.9, 3.6)
    axes.plot([0, 1], [0, 1], color=LINE, linewidth=1, linestyle="--")
    if bins:
        top = max(n for _, _, n in bins)
        axes.plot([b[0] for b in bins], [b[1] for b in bins], color=SERIES["readers"], linewidth=1)
        axes.scatter([b[0] for b in bins], [b[1] for b in bins],
                     s=[20 + 80 * n / top for _, _, n in bins], color=SERIES["readers"], zorder=3)
        for x, y, n in bins:
            axes.annotate(f"n={n}", (x, y), textcoords="offset points", xytext=(5, -10),
                          color=MUTED, fontsize=7)
    axes.set_xlim(0, 1)
    axes.set_ylim(-0.02, 1.02)
    axes.set_aspect("equal")
    axes.set_xlabel("judge's score (bin mean)", color=MUTED, fontsize=8)
    axes.set_ylabel("share the readers passed", color=MUTED, fontsize=8)
    axes.grid(color=LINE, linewidth=0.5)
    axes.set_title(title, color=TEXT, fontsize=9, loc="left")
    return _svg(figure)


def readers_and_judge_chart(points: Sequence[Point], title: str, axis_label: str) -> str:
    """Readers, their mean and the judge on one axis, each with its interval: the plot of
    "can the judge stand in for a reader" (app/agreement/judge_as_reader.py). The axis spans
    the values drawn, not 0-1, so close figures stay apart."""
    drawn = [v for p in points for v in (p.value, p.low, p.high) if v is not None]
    lower = max(0.0, min(drawn) - 0.05) if drawn else 0.0
    return interval_chart(points, title, axis_label, lower=round(lower, 1) if lower >= 0.1 else 0.0)


def forest_chart(rows: Sequence[tuple[str, int, Sequence[Point]]], panels: Sequence[str],
                 marked: str | None, title: str) -> str:
    """A forest plot: one row per rater (label, n), one panel per figure, each point with its
    interval; the row named ``marked`` (the judge of record) is drawn in its own colour,
    banded and its name in bold. Each row's figures are shares of the same n edits, written
    beside its name."""
    height = 0.34 * max(len(rows), 1) + 1.2
    figure = Figure(figsize=(2.6 * len(panels) + 2.2, height), facecolor="none")
    every = figure.subplots(1, len(panels), sharey=True, squeeze=False)[0]
    labels = [f"{label} · n={n}" for label, n, _ in rows]
    for column, (axes, panel) in enumerate(zip(every, panels, strict=True)):
        _style(axes)
        for y, (label, _, points) in enumerate(reversed(rows)):
            point = points[column]
            colour = SERIES["readers"] if label == marked else SERIES["judge"]
            if label == marked:
                axes.axhspan(y - 0.45, y + 0.45, color=LINE, zorder=0)
            if point.value is None:
                axes.text(0.02, y, "no estimate", va="center", color=MUTED, fontsize=8)
                continue
            _draw(axes, point, y, colour)
        axes.set_xlim(0.0, 1.0)
        axes.set_ylim(-0.6, len(rows) - 0.4)
        axes.set_title(panel, color=TEXT, fontsize=9, loc="left")
        axes.grid(axis="x", color=LINE, linewidth=0.6)
        axes.set_xlabel("share of edits", color=MUTED, fontsize=8)
        if column:
            axes.tick_params(axis="y", left=False)
    every[0].set_yticks(range(len(rows)), list(reversed(labels)))
    for tick, (label, _, _) in zip(every[0].get_yticklabels(), reversed(rows), strict=True):
        if label == marked:
            tick.set_fontweight("bold")
    figure.suptitle(title, color=TEXT, fontsize=10, x=0.01, y=1.0, ha="left", va="bottom")
    return _svg(figure)


def strength_chart(points: Sequence[Point], title: str, axis_label: str) -> str:
    """Log-strengths against the first point's item, each with its interval: the first is the
    reference, drawn at 0 with a line through it; an item that cannot be estimated says so.
    The axis spans the intervals drawn."""
    figure, axes = _figure(7.5, 0.34 * max(len(points), 1) + 1.1)
    drawn = [v for p in points for v in (p.value, p.low, p.high) if v is not None] + [0.0]
    pad = max(0.25, (max(drawn) - min(drawn)) * 0.08)
    axes.axvline(0.0, color=MUTED, linewidth=0.8, linestyle="--")
    for row, point in enumerate(reversed(points)):
        if point.value is None:
            axes.text(min(drawn) - pad, row, "  not estimable", va="center", color=MUTED, fontsize=8)
            continue
        _draw(axes, point, row, SERIES["judge"])
    axes.set_yticks(range(len(points)), [p.label for p in reversed(points)])
    axes.set_xlim(min(drawn) - pad, max(drawn) + pad)
    axes.set_ylim(-0.6, len(points) - 0.4)
    axes.set_xlabel(axis_label, color=MUTED, fontsize=9)
    axes.set_title(title, color=TEXT, fontsize=10, loc="left")
    axes.grid(axis="x", color=LINE, linewidth=0.6)
    return _svg(figure)


# Line styles for the endpoints of one plot, in order: told apart without colour alone.
_STYLES = ("-", "--", ":", "-.")


def narrowing_chart(lines: Sequence[tuple[str, Sequence[tuple[int, float]], float | None]],
                    title: str, x_label: str) -> str:
    """Each endpoint's interval half-width against the cases in its figures, with its
    target as a dashed level of the same colour: how far the interval has narrowed, and
    how far it has still to go."""
    figure, axes = _figure(7.5, 3.0)
    colours = list(SERIES.values())
    for k, (label, path, target) in enumerate(lines):
        colour = colours[k % len(colours)]
        if path:
            xs, ys = zip(*path, strict=True)
            # Each later line thinner, drawn over the ones before: two endpoints that narrow
            # alike (too strict beside agreement) stay visible, one inside the other.
            axes.plot(xs, ys, _STYLES[k % len(_STYLES)], color=colour,
                      linewidth=max(1.2, 3.0 - 0.8 * k), zorder=2 + k,
                      label=f"{label} (n={xs[-1]}: ± {ys[-1]:.3f})")
        if target is not None:
            axes.axhline(target, color=colour, linewidth=0.9, linestyle=(0, (4, 3)), alpha=0.8)
            axes.text(1.0, target, f" target ± {target:g}", color=colour, fontsize=8, va="center",
                      transform=axes.get_yaxis_transform())
    if not any(path for _, path, _ in lines):
        axes.text(0.5, 0.5, "nothing to draw yet: no image is in these figures", ha="center",
                  va="center", color=MUTED, fontsize=9, transform=axes.transAxes)
    else:
        # Below the axes, where no line runs.
        legend = axes.legend(loc="upper left", bbox_to_anchor=(0.0, -0.22), fontsize=8, frameon=False)
        for text in legend.get_texts():
            text.set_color(TEXT)
    axes.set_ylim(bottom=0)
    axes.set_xlim(left=0)
    axes.set_xlabel(x_label, color=MUTED, fontsize=9)
    axes.set_ylabel("± half-width", color=MUTED, fontsize=9)
    axes.set_title(title, color=TEXT, fontsize=10, loc="left")
    axes.grid(color=LINE, linewidth=0.6)
    return _svg(figure)
