"""The report's charts, drawn with matplotlib as inline SVG (text stays text; no script, no network).

Each ``*_figure`` function takes a table of :class:`plugin.report.tables.Report`
and returns a :class:`Chart`: the matplotlib figure (which tests read), the
caption that says what it draws (computed from the same data), and the hover
texts of its cells. Each ``*_chart`` function returns that figure as one
``<svg>`` element. Heatmap cells carry a ``<title>``, which browsers show on
hover: the pair's kappa and how many tasks it rests on.

The rules every chart keeps (tests/plugin/report/test_report.py checks them on the figures):

* count axes are linear from 0, unless the counts span more than three orders of magnitude
  (:func:`log_needed`): then the axis is log and its label ends in "(log scale)";
* a heatmap of counts or probabilities has one linear colour scale per figure, from 0 to the figure's
  largest value, and writes each cell's value where the matrix has at most :data:`MAX_WRITTEN` labels a side;
* axis limits come from the data (:func:`limits`) with a margin, so markers and error bars lie inside the
  plot; agreement axes also hold 0 and 1;
* a bar's count is written above it where a panel has at most :data:`MAX_LABELLED_BARS` bars.

It is past 600 lines: one figure function per chart of the report, each with its caption from the same data,
and the few rules they share (axis limits, when a count axis goes log, one colour scale per figure).
"""

from __future__ import annotations

import io
import math
import re
from collections.abc import Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from html import escape
from typing import Any, cast

import matplotlib
import numpy as np
import pandas as pd
from matplotlib import rc_context
from matplotlib.axes import Axes
from matplotlib.colors import LinearSegmentedColormap, Normalize, to_rgba
from matplotlib.dates import AutoDateLocator, ConciseDateFormatter
from matplotlib.figure import Figure
from matplotlib.patches import Rectangle

__all__ = ["LOG_SPAN", "MAX_LABELLED_BARS", "MAX_WRITTEN", "Chart", "confusion_chart", "confusion_figure",
           "distribution_chart", "distribution_figure", "heatmap_chart", "heatmap_figure", "limits", "log_needed",
           "offset_chart", "offset_figure", "ordered", "probability_chart", "probability_figure", "readable_text",
           "reference_chart", "reference_figure", "short_name", "sweep_caption", "sweep_chart", "sweep_figure",
           "timeline_chart", "timeline_figure", "trust_chart", "trust_figure"]

STYLE: dict[str, Any] = {"svg.fonttype": "none", "svg.hashsalt": "ls-agreement", "font.size": 9,
                         "axes.spines.top": False, "axes.spines.right": False, "font.family": "sans-serif"}
SPA_COLOUR, ALPHA_COLOUR, FLAG_COLOUR = "#1f6fb2", "#c2571a", "#b8312f"
# Diverging from disagreement (red) through chance (white) to agreement (blue): kappa's own scale.
KAPPA_MAP = LinearSegmentedColormap.from_list("kappa", ["#b8312f", "#f7f7f7", "#1f6fb2"])
LOG_SPAN = 1000.0  # a count axis is log only where its largest count is over 1000 times its smallest non-zero one
MAX_WRITTEN = 15  # a heatmap of counts writes each cell's count up to 15 x 15 cells (kappa's: 12, probabilities': 12)
MAX_LABELLED_BARS = 25  # a histogram writes each bar's count above it up to 25 bars a panel
MARGIN = 0.05  # of an axis's range, on each side: the largest marker (8 pt) stays inside a 1.5-inch axis


@dataclass(frozen=True)
class Chart:
    """One drawn chart: its figure, the caption that says what it draws, and hover texts by the gid of a group."""

    figure: Figure
    caption: str
    titles: Mapping[str, str] = field(default_factory=dict)

    def svg(self) -> str:
        """The figure as one ``<svg>`` element."""
        return _svg(self.figure, dict(self.titles))

    def html(self) -> str:
        """The chart and its caption as a ``<figure>`` (the caption escaped)."""
        return (f'<figure class="chart">{self.svg()}<figcaption class="note">{escape(self.caption)}'
                "</figcaption></figure>")


@contextmanager
def _figure(width: float, height: float) -> Iterator[Figure]:
    with rc_context(cast(Any, STYLE)):
        yield Figure(figsize=(width, height), layout="constrained")


def _svg(figure: Figure, titles: dict[str, str] | None = None) -> str:
    """The figure as one ``<svg>`` element; ``titles`` adds a hover text to the group of each gid."""
    buffer = io.StringIO()
    with rc_context(cast(Any, STYLE)):
        figure.savefig(buffer, format="svg", metadata={"Date": None, "Creator": None})
    svg = buffer.getvalue()
    svg = svg[svg.index("<svg"):]
    for gid, text in (titles or {}).items():
        svg = re.sub(rf'(<g id="{re.escape(gid)}">)', rf"\1<title>{escape(text)}</title>", svg, count=1)
    return svg


def _finite(values: Any) -> np.ndarray:
    array = np.asarray(values, dtype=float).ravel()
    return array[np.isfinite(array)]


def log_needed(counts: Any) -> bool:
    """Whether counts need a log axis: their largest is more than :data:`LOG_SPAN` (1000) times the smallest
    non-zero one, over three orders of magnitude. Below that a linear axis shows each count in proportion.

    >>> log_needed([1, 10, 460]), log_needed([0, 1, 1001]), log_needed([]), log_needed([0, 0])
    (False, True, False, False)
    """
    positive = _finite(counts)
    positive = positive[positive > 0]
    return bool(positive.size) and float(positive.max()) > LOG_SPAN * float(positive.min())


def limits(values: Any, *, include: Iterable[float] = (), margin: float = MARGIN) -> tuple[float, float]:
    """Axis limits that hold every finite value and each of ``include``, widened by ``margin`` of their range.

    >>> [round(v, 3) for v in limits([0.29, 0.51], include=(0.0, 1.0))]
    [-0.05, 1.05]
    >>> [round(v, 3) for v in limits([float("nan"), -0.2, 0.4], include=(0.0, 1.0))]
    [-0.26, 1.06]
    >>> limits([])
    (-0.5, 0.5)
    """
    finite = np.concatenate([_finite(values), _finite(list(include))])
    if not finite.size:
        return -0.5, 0.5
    low, high = float(finite.min()), float(finite.max())
    pad = margin * (high - low) if high > low else max(abs(high) * margin, 0.5)
    return low - pad, high + pad


def _count_axis(ax: Axes, tops: Any, label: str) -> bool:
    """A count axis for bars of heights ``tops``: linear from 0 with room above the tallest bar for its count,
    or log where :func:`log_needed` says so (its label then ends in "(log scale)"). True where log."""
    heights = _finite(tops)
    tallest = float(heights.max()) if heights.size and heights.max() > 0 else 1.0
    if log_needed(heights):
        lowest = float(heights[heights > 0].min())
        ax.set_yscale("log")
        ax.set_ylim(lowest / 2, tallest * (tallest / lowest) ** 0.15)
        ax.set_ylabel(f"{label} (log scale)")
        return True
    ax.set_ylim(0, tallest * 1.15)
    ax.set_ylabel(label)
    return False


def _label_bars(ax: Axes, container: Any, tops: Sequence[float]) -> None:
    """Each non-empty bar's count above it (a panel of at most :data:`MAX_LABELLED_BARS` bars)."""
    if len(tops) > MAX_LABELLED_BARS:
        return
    ax.bar_label(container, labels=[f"{t:,.0f}" if t > 0 else "" for t in tops], padding=1, fontsize=7,
                 bbox={"facecolor": "white", "edgecolor": "none", "pad": 0.4})  # over a dotted line, still read


def _count(value: float) -> str:
    """A count as a cell shows it: whole counts as integers, fractional coincidences with one decimal below 10.

    >>> _count(320.0), _count(28.208), _count(0.5), _count(1234.0), _count(float("nan"))
    ('320', '28', '0.5', '1,234', '')
    """
    if not math.isfinite(value):
        return ""
    if value == round(value) or value >= 10:
        return f"{value:,.0f}"
    return f"{value:.1f}"


def short_name(name: str, limit: int = 24) -> str:
    """An annotator's name as an axis shows it: the name before its email (else the email), at most ``limit`` long.

    Tables and hover texts keep the whole name; an axis of long emails would take the chart's width.

    >>> short_name("Ann Lee <ann.lee@example.com>"), short_name("<a.very.long.address@cs.arizona.edu>", 16)
    ('Ann Lee', 'a.very.long.add…')
    """
    head, _, email = str(name).partition(" <")
    text = head.strip() if head.strip() and not head.startswith("<") else (email or head).strip("<> ")
    return text if len(text) <= limit else text[: limit - 1] + "…"


def ordered(labels: Sequence[Any]) -> list[Any]:
    """Labels in a reader's order: by value where every one reads as a number (a rating's 1..5), else as given.

    >>> ordered(["2", "3", "1", "5", "4"]), ordered(["neg", "pos"])
    (['1', '2', '3', '4', '5'], ['neg', 'pos'])
    """
    distinct = list(dict.fromkeys(labels))
    numbers = pd.to_numeric(pd.Series(distinct, dtype=object), errors="coerce")
    if len(distinct) and numbers.notna().all():
        return [distinct[i] for i in np.argsort(numbers.to_numpy(dtype=float), kind="stable")]
    return distinct


def _over_time(values: np.ndarray) -> str:
    """A series as a caption says it: its range and where it ends."""
    finite = _finite(values)
    if not finite.size:
        return "undefined"
    if float(finite.max() - finite.min()) < 0.005:
        return f"{finite[-1]:.2f} throughout"
    return f"{finite.min():.2f} to {finite.max():.2f}, {finite[-1]:.2f} at the end"


def timeline_figure(timeline: pd.DataFrame, *, controls: Sequence[str]) -> Chart | None:
    """SPA with its interval as a band, and alpha, against annotation time; one panel per control.

    Each panel's y axis holds 0, 1 and every value drawn (the band's ends too) with a margin, so no marker is
    clipped; the legend sits under the panels, off the lines.
    """
    panels = [c for c in controls if (timeline["control"] == c).any()]
    if not panels:
        return None
    columns = 2 if len(panels) > 1 else 1
    rows = math.ceil(len(panels) / columns)
    described = []
    with _figure(9.0, 2.6 * rows + 0.3) as figure:
        axes = np.atleast_1d(figure.subplots(rows, columns, squeeze=False).ravel())
        for ax, name in zip(axes, panels, strict=False):
            part = timeline[timeline["control"] == name]
            when = pd.to_datetime(part["time"], utc=True).dt.tz_localize(None)
            spa, low, high, alpha = (part[c].to_numpy(dtype=float) for c in ("spa", "spa_low", "spa_high", "alpha"))
            ax.fill_between(when, low, high, color=SPA_COLOUR, alpha=0.18, linewidth=0, label="SPA interval")
            ax.plot(when, spa, color=SPA_COLOUR, marker="o", markersize=3, label="SPA")
            ax.plot(when, alpha, color=ALPHA_COLOUR, linestyle="--", marker="s", markersize=3, label="alpha")
            ax.set_title(name, loc="left", fontweight="bold")
            ax.set_ylim(*limits(np.concatenate([spa, low, high, alpha]), include=(0.0, 1.0)))
            locator = AutoDateLocator()  # "22:29" and the day once beside the axis, not "27 22:29" on each tick
            ax.xaxis.set_major_locator(locator)
            ax.xaxis.set_major_formatter(ConciseDateFormatter(locator))
            ax.grid(axis="y", alpha=0.3)
            described.append(f"{name}: SPA {_over_time(spa)}; alpha {_over_time(alpha)}.")
        for ax in axes[len(panels):]:
            ax.set_visible(False)
        handles, labels = axes[0].get_legend_handles_labels()
        figure.legend(handles, labels, loc="outside lower center", frameon=False, ncols=3)
    moments = int(timeline[timeline["control"].isin(panels)].groupby("control").size().max())
    return Chart(figure, f"Over {moments} moments; each panel's y axis holds 0, 1 and every value drawn. "
                 + " ".join(described))


def timeline_chart(timeline: pd.DataFrame, *, controls: Sequence[str]) -> str:
    """:func:`timeline_figure` as an ``<svg>`` element ("" when there is nothing to draw)."""
    chart = timeline_figure(timeline, controls=controls)
    return chart.svg() if chart else ""


def heatmap_figure(pairwise: pd.DataFrame, annotators: Sequence[str], *, control: str) -> Chart | None:
    """The annotator x annotator matrix of Cohen's kappa; hovering a cell shows its kappa and shared tasks.

    Colours are on kappa's own fixed scale, -1 (red) through 0 (chance, white) to 1 (blue), the same for every
    control; each cell's kappa is written in it up to 12 annotators.
    """
    size = len(annotators)
    if size < 2:
        return None
    position = {name: i for i, name in enumerate(annotators)}
    side = min(6.0, 1.4 + 0.35 * size)
    titles = {}
    with _figure(side + 1.2, side) as figure:
        ax = figure.subplots()
        for row in pairwise.itertuples(index=False):
            for a, b in ((row.first, row.second), (row.second, row.first)):
                i, j = position[a], position[b]
                kappa = float(row.kappa)
                colour = "#dddddd" if math.isnan(kappa) else KAPPA_MAP((max(-1.0, min(1.0, kappa)) + 1) / 2)
                gid = f"cell-{control}-{i}-{j}"
                patch = Rectangle((j, i), 1, 1, facecolor=colour, edgecolor="white", linewidth=1)
                patch.set_gid(gid)
                ax.add_patch(patch)
                shown = "undefined" if math.isnan(kappa) else f"{kappa:.3f}"
                titles[gid] = f"{a} and {b}: kappa {shown} over {row.n_items} shared items"
                if size <= 12:
                    ax.text(j + 0.5, i + 0.5, "-" if math.isnan(kappa) else f"{kappa:.2f}", ha="center",
                            va="center", fontsize=8, color=readable_text(to_rgba(colour)))
        ax.set_xlim(0, size)
        ax.set_ylim(size, 0)
        ticks = np.arange(size) + 0.5
        names = [short_name(a) for a in annotators]  # the whole names are in each cell's hover text
        ax.set_xticks(ticks, labels=names, rotation=45, ha="right")
        ax.set_yticks(ticks, labels=names)
        ax.set_aspect("equal")
        ax.spines[:].set_visible(False)
        mappable = ax.scatter([], [], c=[], cmap=KAPPA_MAP, vmin=-1, vmax=1)
        figure.colorbar(mappable, ax=ax, shrink=0.7, label="Cohen's kappa")
        ax.set_title(control, loc="left", fontweight="bold")
    kappas = pairwise["kappa"].to_numpy(dtype=float)
    defined = _finite(kappas)
    caption = f"{control}: {len(kappas):,} pairs of {size} annotators"
    if defined.size:
        caption += f", kappa from {defined.min():.2f} to {defined.max():.2f}"
    if defined.size < len(kappas):
        caption += f", {len(kappas) - defined.size:,} undefined (grey)"
    caption += ("; colour from -1 (red) through 0 (chance, white) to 1 (blue)"
                + ("; each kappa written in its cell." if size <= 12 else "; hover a cell for its kappa."))
    return Chart(figure, caption, titles)


def heatmap_chart(pairwise: pd.DataFrame, annotators: Sequence[str], *, control: str) -> str:
    """:func:`heatmap_figure` as an ``<svg>`` element with a hover text per cell ("" under two annotators)."""
    chart = heatmap_figure(pairwise, annotators, control=control)
    return chart.svg() if chart else ""


def confusion_figure(confusion: pd.DataFrame, *, control: str, counts: str = "coincidences") -> Chart | None:
    """A matrix of counts between one control's labels: Krippendorff's coincidences, or rows against columns.

    One linear colour scale from 0 (white) to the matrix's largest count, so a cell's colour is in proportion
    to its count; each cell's count is written in it up to :data:`MAX_WRITTEN` labels a side. ``counts`` names
    what is counted (the colour bar's label).
    """
    if confusion.empty:
        return None
    matrix = confusion.pivot(index="first", columns="second", values="coincidences")
    order = ordered(list(confusion["first"]) + list(confusion["second"]))
    matrix = matrix.reindex(index=order, columns=order)
    size = len(order)
    values = matrix.to_numpy(dtype=float)
    finite = _finite(values)
    top = float(finite.max()) if finite.size and finite.max() > 0 else 1.0
    side = min(6.0, 1.6 + 0.4 * size)
    with _figure(side + 1.0, side) as figure:
        ax = figure.subplots()
        shown = ax.imshow(values, cmap="Blues", norm=Normalize(vmin=0.0, vmax=top))
        if size <= MAX_WRITTEN:
            for i in range(size):
                for j in range(size):  # black or white by the cell's own colour (WCAG contrast)
                    if math.isfinite(values[i, j]):
                        ax.text(j, i, _count(values[i, j]), ha="center", va="center",
                                fontsize=8 if size <= 10 else 7,
                                color=readable_text(shown.cmap(shown.norm(values[i, j]))))
        labels = [str(label) for label in order]
        ax.set_xticks(range(size), labels=labels, rotation=45, ha="right")
        ax.set_yticks(range(size), labels=labels)
        ax.spines[:].set_visible(False)
        figure.colorbar(shown, ax=ax, shrink=0.7, label=counts)
        ax.set_title(control, loc="left", fontweight="bold", fontsize=9)
    total = float(np.nansum(values))
    caption = f"{control.replace(chr(10), ', ')}: {_count(total)} {counts} over {size} labels"
    if total > 0:
        caption += f", {np.nansum(np.diag(values)) / total:.0%} on the diagonal"
        off = np.where(np.eye(size, dtype=bool) | ~np.isfinite(values), -np.inf, values)
        if size > 1 and off.max() > 0:
            i, j = np.unravel_index(int(np.argmax(off)), off.shape)
            caption += f"; the largest off it: {order[i]} (row) with {order[j]} (column), {_count(off[i, j])}"
    caption += (f". Colour linear from 0 (white) to {_count(top)} (darkest)"
                + ("; each cell's count written in it." if size <= MAX_WRITTEN else "."))
    return Chart(figure, caption)


def confusion_chart(confusion: pd.DataFrame, *, control: str, counts: str = "coincidences") -> str:
    """:func:`confusion_figure` as an ``<svg>`` element."""
    chart = confusion_figure(confusion, control=control, counts=counts)
    return chart.svg() if chart else ""


def distribution_figure(tasks: pd.DataFrame, *, threshold: float) -> Chart | None:
    """How the tasks' scores are spread, flagged tasks in red, with the threshold.

    A task's score is the value the flag compares with the threshold: its
    lowest control's (:func:`plugin.state.flags.task_score_of`; a span control's
    overlap F1 unless ``--span-flag-on`` says otherwise, an ordered control's
    weighted agreement, else SPA). A task left of the line is red; a red task
    right of it was flagged by another rule (a control's own threshold,
    "constant low", the lowest tenth), which its reasons name. The count axis
    is linear from 0 unless :func:`log_needed`; each bar's count is above it.
    """
    scored = tasks[tasks["score"].notna()]
    if scored.empty:
        return None
    scores = scored["score"].to_numpy(dtype=float)
    flagged = scored["flagged"].astype(bool).to_numpy()
    low, high = min(0.0, float(scores.min())), max(1.0, float(scores.max()))  # every score in a bar
    with _figure(9.0, 2.6) as figure:
        ax = figure.subplots()
        bins = np.linspace(low, high, 21).tolist()
        heights, _, bars = ax.hist([scores[~flagged], scores[flagged]], bins=bins, color=[SPA_COLOUR, FLAG_COLOUR],
                                   stacked=True, label=["not flagged", "flagged"])
        tops = np.asarray(heights, dtype=float)[-1]  # stacked: the last row is each bar's whole height
        log = _count_axis(ax, tops, "tasks")
        _label_bars(ax, bars[-1], tops.tolist())
        ax.axvline(threshold, color="black", linestyle=":", linewidth=1)
        ax.set_xlim(*limits([low, high, threshold], margin=0.02))
        ax.set_xlabel("task score (its lowest control's agreement, as the flag compares it)")
        ax.legend(frameon=False, loc="best")
    below = int((scores < threshold).sum())
    caption = (f"{len(scores):,} tasks scored: {below:,} below the threshold {threshold:.2f} (dotted), "
               f"{int(flagged.sum()):,} flagged in all; the tallest bar holds {tops.max():,.0f} tasks. "
               f"Counts on a {'log axis (they span over three orders of magnitude)' if log else 'linear axis'}"
               + (", each bar's count written above it." if len(tops) <= MAX_LABELLED_BARS else "."))
    return Chart(figure, caption)


def distribution_chart(tasks: pd.DataFrame, *, threshold: float) -> str:
    """:func:`distribution_figure` as an ``<svg>`` element ("" when no task is scored)."""
    chart = distribution_figure(tasks, threshold=threshold)
    return chart.svg() if chart else ""


def _p(p: float) -> str:
    return f"{p:.1f}" if round(p, 1) == p else f"{p:.2f}"


def _course(ps: np.ndarray, kappas: np.ndarray) -> str:
    """Where a curve rises and falls over ascending ``ps``: "rises from 0.29 at p = 0.5 to 0.51 at p = 1.0".

    >>> _course(np.array([0.5, 0.6, 0.7]), np.array([0.3, 0.6, 0.4]))
    'rises from 0.30 at p = 0.5 to 0.60 at p = 0.6, then falls to 0.40 at p = 0.7 (range 0.30 to 0.60)'
    >>> _course(np.array([0.5, 1.0]), np.array([0.7, 0.702]))
    'flat at 0.70 from p = 0.5 to 1.0'
    """
    keep = np.isfinite(kappas)
    ps, kappas = ps[keep], kappas[keep]
    if not len(kappas):
        return "undefined at every p"
    if len(kappas) == 1:
        return f"{kappas[0]:.2f} at p = {_p(ps[0])} only"
    if float(kappas.max() - kappas.min()) < 0.01:
        return f"flat at {kappas.mean():.2f} from p = {_p(ps[0])} to {_p(ps[-1])}"
    steps = np.sign(np.where(np.abs(np.diff(kappas)) < 0.005, 0.0, np.diff(kappas)))
    turns, direction = [], 0.0  # the indices where the curve changes direction, and the last
    for i, step in enumerate(steps):
        if step and step != direction:
            if direction:
                turns.append(i)
            direction = step
    ends = [0, *turns, len(kappas) - 1]
    first = kappas[ends[1]] > kappas[0]
    text = (f"{'rises' if first else 'falls'} from {kappas[0]:.2f} at p = {_p(ps[0])} to {kappas[ends[1]]:.2f} at "
            f"p = {_p(ps[ends[1]])}")
    for a, b in zip(ends[1:], ends[2:], strict=False):
        text += f", then {'rises' if kappas[b] > kappas[a] else 'falls'} to {kappas[b]:.2f} at p = {_p(ps[b])}"
    if len(ends) > 2:
        text += f" (range {kappas.min():.2f} to {kappas.max():.2f})"
    return text


def sweep_caption(sweep: pd.DataFrame) -> str:
    """What the sweep chart draws, from its data: each control's curve, where it rises or falls, and what it means.

    At p = 1 the augmented kappa is Cohen's on the first choices alone; at p = 0.5 first and second count alike.
    A curve higher at p = 1 than at p = 0.5: annotators agree more on their first choice than on the set of
    choices; higher at p = 0.5: they agree on the set more than on which comes first.
    """
    parts = []
    for name, part in sweep.groupby("control", sort=False):
        part = part.sort_values("p")
        ps, kappas = part["p"].to_numpy(dtype=float), part["kappa"].to_numpy(dtype=float)
        text = f"{name}: the augmented kappa {_course(ps, kappas)}"
        defined = np.isfinite(kappas)
        if defined.sum() >= 2:
            change = float(kappas[defined][-1] - kappas[defined][0])  # from the smallest p to the largest
            if change > 0.01:
                text += ": annotators agree more on their first choice than on the set of choices they give"
            elif change < -0.01:
                text += ": annotators agree on the set of choices more than on which comes first"
            else:
                text += ": which choice comes first changes the agreement little"
        parts.append(text + ".")
    return " ".join(parts)


def sweep_figure(sweep: pd.DataFrame) -> Chart | None:
    """Chart of the augmented kappa of each multiple-choice control against the weight of the first choice.

    The weight p of the first choice goes from 0.5 to 1. The y axis holds 0, 1 and every kappa, with a margin;
    the caption (:func:`sweep_caption`) says where each curve rises or falls.
    """
    if sweep.empty:
        return None
    with _figure(6.0, 2.6) as figure:
        ax = figure.subplots()
        for name, part in sweep.groupby("control", sort=False):
            part = part.sort_values("p")
            ax.plot(part["p"].to_numpy(dtype=float), part["kappa"].to_numpy(dtype=float), marker="o", markersize=3,
                    label=str(name))
        ax.set_xlim(*limits(sweep["p"]))
        ax.set_ylim(*limits(sweep["kappa"], include=(0.0, 1.0)))
        ax.set_xlabel("p (weight of the first-ranked choice)")
        ax.set_ylabel("augmented kappa")
        ax.grid(alpha=0.3)
        ax.legend(frameon=False)
    return Chart(figure, sweep_caption(sweep))


def sweep_chart(sweep: pd.DataFrame) -> str:
    """:func:`sweep_figure` as an ``<svg>`` element."""
    chart = sweep_figure(sweep)
    return chart.svg() if chart else ""


def offset_figure(offsets: pd.DataFrame, *, control: str, unit: str) -> Chart | None:
    """How far apart the starts and the ends of the matched spans of one span control lie: two histograms.

    ``offsets`` holds ``start_offset`` and ``end_offset`` (the second
    annotator's boundary minus the first's). The bars cover every offset,
    one bar per position for small whole-number offsets, else 61 bars with
    one centred on 0. Counts are on a linear axis from 0, each bar's count
    above it where a panel has few bars; on a log axis (so labelled) only
    where they span over three orders of magnitude (:func:`log_needed`).
    """
    if offsets.empty:
        return None
    values = offsets[["start_offset", "end_offset"]].to_numpy(dtype=float)
    reach = float(np.abs(values).max()) or 1.0
    if np.all(values == np.round(values)):
        width = float(max(1, math.ceil((2 * reach + 1) / 61)))
        half = (math.ceil(reach / width - 0.5) + 0.5) * width
    else:
        width, half = 2 * reach / 60, reach * 61 / 60
    bins = np.linspace(-half, half, round(2 * half / width) + 1).tolist()
    counts = {c: np.histogram(offsets[c].to_numpy(dtype=float), bins=bins)[0] for c in ("start_offset", "end_offset")}
    with _figure(9.0, 2.4) as figure:
        axes = figure.subplots(1, 2, sharey=True)
        for ax, column, title in zip(axes, ("start_offset", "end_offset"), ("start", "end"), strict=True):
            _, _, bars = ax.hist(offsets[column].to_numpy(dtype=float), bins=bins, color=SPA_COLOUR)
            _label_bars(ax, bars, counts[column].tolist())
            ax.axvline(0, color="black", linestyle=":", linewidth=1)
            ax.set_xlabel(f"difference of the {title}s ({unit})")
            ax.set_title(f"{control}: {title}", loc="left", fontweight="bold")
            ax.grid(axis="y", alpha=0.3)
        log = _count_axis(axes[0], np.concatenate(list(counts.values())), "matched pairs")  # y is shared
    every = np.concatenate(list(counts.values()))
    positive = every[every > 0]
    scale = (f"a log axis: they span over three orders of magnitude ({positive.min():,} to {positive.max():,})"
             if log else "a linear axis")
    caption = (f"{control}: the starts of {len(offsets):,} matched pairs differ by {values[:, 0].min():g} to "
               f"{values[:, 0].max():g} {unit}, the ends by {values[:, 1].min():g} to {values[:, 1].max():g}. "
               f"Counts on {scale}" + (", each bar's count written above it." if len(bins) - 1 <= MAX_LABELLED_BARS
                                       else "."))
    return Chart(figure, caption)


def offset_chart(offsets: pd.DataFrame, *, control: str, unit: str) -> str:
    """:func:`offset_figure` as an ``<svg>`` element ("" when no spans matched)."""
    chart = offset_figure(offsets, control=control, unit=unit)
    return chart.svg() if chart else ""


def reference_figure(references: pd.DataFrame, *, control: str, threshold: float | None = None,
                     weighted: bool = False) -> Chart | None:
    """Chart of each annotator's agreement with each reference of one control, on the quantity the rule uses.

    That is the accuracy with its Wilson interval as a bar; for an ordered control (``weighted``), the weighted
    agreement (a 4 against a 5 is near-agreement), which ``threshold`` (``--min-gt-accuracy``, dotted) is compared
    with, and which has no interval. The ground truth is in the flag colour, model versions in blues; the legend
    sits under the axes, off the rows. The x axis holds 0, 1, the threshold and every interval, with a margin.
    """
    if references.empty:
        return None
    names = list(dict.fromkeys(references["name"]))
    kinds = list(dict.fromkeys(references["reference"]))
    height = 1.3 + 0.28 * len(names) * max(1, min(len(kinds), 3))
    drawn = references[["agreement"] if weighted else ["accuracy", "accuracy_low", "accuracy_high"]]
    with _figure(7.0, min(height, 9.0)) as figure:
        ax = figure.subplots()
        step = 0.8 / max(1, len(kinds))
        blues = ["#1f6fb2", "#6baed6", "#08306b", "#4292c6", "#2171b5"]
        for k, (kind, part) in enumerate(references.groupby("reference", sort=False)):
            colour = FLAG_COLOUR if kind == "ground truth" else blues[k % len(blues)]
            y = np.array([names.index(n) for n in part["name"]]) - 0.4 + step * (k + 0.5)
            if weighted:
                ax.plot(part["agreement"].to_numpy(dtype=float), y, "o", color=colour, markersize=4,
                        label=str(kind))
                continue
            accuracy = part["accuracy"].to_numpy(dtype=float)
            low = accuracy - part["accuracy_low"].to_numpy(dtype=float)
            high = part["accuracy_high"].to_numpy(dtype=float) - accuracy
            # the bars as lists: matplotlib reads an array of one bar as a scalar, which numpy deprecates
            ax.errorbar(accuracy, y, xerr=[low.tolist(), high.tolist()], fmt="o", color=colour, markersize=4,
                        capsize=2, label=str(kind))
        if threshold is not None:
            ax.axvline(threshold, color="black", linestyle=":", linewidth=1)
        ax.set_yticks(range(len(names)), labels=[short_name(n) for n in names])
        ax.set_ylim(len(names) - 0.5, -0.5)
        marks = (0.0, 1.0) if threshold is None else (0.0, 1.0, threshold)
        ax.set_xlim(*limits(drawn.to_numpy(dtype=float), include=marks, margin=0.03))
        ax.set_xlabel("weighted agreement with the reference (Gwet's weights, as the rule)" if weighted else
                      "accuracy against the reference, 95% Wilson interval")
        ax.set_title(control, loc="left", fontweight="bold")
        figure.legend(frameon=False, fontsize=8, loc="outside lower center", ncols=min(len(kinds), 4))
    shown = _finite(references["agreement" if weighted else "accuracy"])
    caption = (f"{control}: {len(names)} annotators against {', '.join(map(str, kinds))}; "
               f"{'weighted agreement' if weighted else 'accuracy'}")
    caption += f" from {shown.min():.2f} to {shown.max():.2f}" if shown.size else " undefined"
    caption += "" if weighted else ", each with its 95% Wilson interval"
    caption += f"; dotted: the least accuracy, {threshold:.2f}." if threshold is not None else "."
    return Chart(figure, caption)


def reference_chart(references: pd.DataFrame, *, control: str, threshold: float | None = None,
                    weighted: bool = False) -> str:
    """:func:`reference_figure` as an ``<svg>`` element."""
    chart = reference_figure(references, control=control, threshold=threshold, weighted=weighted)
    return chart.svg() if chart else ""


def readable_text(rgba: Sequence[float]) -> str:
    """Black or white, whichever contrasts more with a cell of colour ``rgba`` (WCAG relative luminance).

    >>> readable_text((1.0, 1.0, 1.0, 1.0)), readable_text((0.03, 0.19, 0.42, 1.0))
    ('black', 'white')
    """
    linear = [c / 12.92 if c <= 0.03928 else ((c + 0.055) / 1.055) ** 2.4 for c in rgba[:3]]
    luminance = 0.2126 * linear[0] + 0.7152 * linear[1] + 0.0722 * linear[2]
    # contrast with black (L + 0.05) / 0.05 against white 1.05 / (L + 0.05): black wins above L of about 0.179
    return "black" if (luminance + 0.05) / 0.05 >= 1.05 / (luminance + 0.05) else "white"


def probability_figure(cells: pd.DataFrame, *, title: str) -> Chart:
    """One annotator's confusion matrix: the probability of each label they give (columns) per true label (rows).

    One linear colour scale from 0 to 1; each cell's probability is written in it up to 12 labels.
    """
    order = ordered(cells["true_label"])
    matrix = (cells.pivot(index="true_label", columns="said_label", values="probability")
              .reindex(index=order, columns=order).to_numpy(dtype=float))
    size = len(order)
    side = min(5.5, 1.8 + 0.4 * size)
    with _figure(side + 1.0, side) as figure:
        ax = figure.subplots()
        colours = matplotlib.colormaps["Blues"]
        shown = ax.imshow(matrix, cmap=colours, norm=Normalize(vmin=0.0, vmax=1.0))
        if size <= 12:
            for i in range(size):
                for j in range(size):
                    ax.text(j, i, f"{matrix[i, j]:.2f}", ha="center", va="center", fontsize=8,
                            color=readable_text(colours(matrix[i, j])))
        ax.set_xticks(range(size), labels=[str(label) for label in order], rotation=45, ha="right")
        ax.set_yticks(range(size), labels=[str(label) for label in order])
        ax.set_xlabel("label given")
        ax.set_ylabel("true label (estimated)")
        ax.spines[:].set_visible(False)
        figure.colorbar(shown, ax=ax, shrink=0.7, label="probability")
        ax.set_title(title, loc="left", fontweight="bold", fontsize=9)
    right = np.diag(matrix) if size else np.array([])
    caption = f"{title}: "
    if np.isfinite(right).any():
        best, worst = int(np.nanargmax(right)), int(np.nanargmin(right))
        caption += (f"right (the diagonal) from {right[worst]:.2f} ({order[worst]}) to {right[best]:.2f} "
                    f"({order[best]}); ")
    caption += "colour linear from 0 to 1" + ("; each probability written in its cell." if size <= 12 else ".")
    return Chart(figure, caption)


def probability_chart(cells: pd.DataFrame, *, title: str) -> str:
    """:func:`probability_figure` as an ``<svg>`` element."""
    return probability_figure(cells, title=title).svg()


def trust_figure(annotators: pd.DataFrame, *, control: str) -> Chart:
    """Each annotator's accuracy as Dawid-Skene estimates it, beside their accuracy on ground truth where known.

    The x axis holds 0, 1 and every accuracy, with a margin.
    """
    names = list(annotators["name"])
    estimated = annotators["accuracy"].to_numpy(dtype=float)
    truth = annotators["ground_truth_accuracy"].to_numpy(dtype=float)
    with _figure(7.0, min(0.9 + 0.3 * len(names), 9.0)) as figure:
        ax = figure.subplots()
        y = np.arange(len(names))
        ax.scatter(estimated, y, color=SPA_COLOUR, s=22, label="estimated (no ground truth needed)")
        if np.isfinite(truth).any():
            ax.scatter(truth, y, color=FLAG_COLOUR, marker="D", s=18, label="on ground-truth items")
        ax.set_yticks(y, labels=[short_name(n) for n in names])
        ax.set_ylim(len(names) - 0.5, -0.5)
        ax.set_xlim(*limits(np.concatenate([estimated, truth]), include=(0.0, 1.0), margin=0.03))
        ax.set_xlabel("probability that the annotator's label is the true one")
        ax.set_title(control, loc="left", fontweight="bold")
        figure.legend(frameon=False, fontsize=8, loc="outside lower center", ncols=2)
    shown, known = _finite(estimated), _finite(truth)
    caption = f"{control}: {len(names)} annotators' estimated accuracy"
    caption += f" from {shown.min():.2f} to {shown.max():.2f}" if shown.size else " undefined"
    if known.size:
        caption += f"; on the ground-truth items, from {known.min():.2f} to {known.max():.2f} ({known.size} known)"
    return Chart(figure, caption + ".")


def trust_chart(annotators: pd.DataFrame, *, control: str) -> str:
    """:func:`trust_figure` as an ``<svg>`` element."""
    return trust_figure(annotators, control=control).svg()
