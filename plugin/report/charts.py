"""The report's charts, drawn with matplotlib as inline SVG (text stays text; no script, no network).

Each function takes a table of :class:`plugin.report.tables.Report` and
returns one ``<svg>`` element as a string. Heatmap cells carry a ``<title>``,
which browsers show on hover: the pair's kappa and how many tasks it rests on.
"""

from __future__ import annotations

import io
import math
import re
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from html import escape
from typing import Any, cast

import matplotlib
import numpy as np
import pandas as pd
from matplotlib import rc_context
from matplotlib.colors import LinearSegmentedColormap, to_rgba
from matplotlib.dates import AutoDateLocator, ConciseDateFormatter
from matplotlib.figure import Figure
from matplotlib.patches import Rectangle

__all__ = ["confusion_chart", "distribution_chart", "heatmap_chart", "offset_chart", "ordered", "probability_chart",
           "readable_text", "reference_chart", "short_name", "sweep_chart", "timeline_chart", "trust_chart"]

STYLE: dict[str, Any] = {"svg.fonttype": "none", "svg.hashsalt": "ls-agreement", "font.size": 9,
                         "axes.spines.top": False, "axes.spines.right": False, "font.family": "sans-serif"}
SPA_COLOUR, ALPHA_COLOUR, FLAG_COLOUR = "#1f6fb2", "#c2571a", "#b8312f"
# Diverging from disagreement (red) through chance (white) to agreement (blue): kappa's own scale.
KAPPA_MAP = LinearSegmentedColormap.from_list("kappa", ["#b8312f", "#f7f7f7", "#1f6fb2"])


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


def timeline_chart(timeline: pd.DataFrame, *, controls: Sequence[str]) -> str:
    """SPA with its interval as a band, and alpha, against annotation time; one panel per control."""
    panels = [c for c in controls if (timeline["control"] == c).any()]
    if not panels:
        return ""
    columns = 2 if len(panels) > 1 else 1
    rows = math.ceil(len(panels) / columns)
    with _figure(9.0, 2.6 * rows) as figure:
        axes = np.atleast_1d(figure.subplots(rows, columns, squeeze=False).ravel())
        for ax, name in zip(axes, panels, strict=False):
            part = timeline[timeline["control"] == name]
            when = pd.to_datetime(part["time"], utc=True).dt.tz_localize(None)
            ax.fill_between(when, part["spa_low"].astype(float), part["spa_high"].astype(float), color=SPA_COLOUR,
                            alpha=0.18, linewidth=0, label="SPA interval")
            ax.plot(when, part["spa"].astype(float), color=SPA_COLOUR, marker="o", markersize=3, label="SPA")
            ax.plot(when, part["alpha"].astype(float), color=ALPHA_COLOUR, linestyle="--", marker="s",
                    markersize=3, label="alpha")
            ax.set_title(name, loc="left", fontweight="bold")
            ax.set_ylim(min(0.0, float(np.nanmin(part[["spa_low", "alpha"]].astype(float).to_numpy(), initial=0))),
                        1.0)
            locator = AutoDateLocator()  # "22:29" and the day once beside the axis, not "27 22:29" on each tick
            ax.xaxis.set_major_locator(locator)
            ax.xaxis.set_major_formatter(ConciseDateFormatter(locator))
            ax.grid(axis="y", alpha=0.3)
        for ax in axes[len(panels):]:
            ax.set_visible(False)
        axes[0].legend(loc="lower right", frameon=False, ncols=3)
        return _svg(figure)


def heatmap_chart(pairwise: pd.DataFrame, annotators: Sequence[str], *, control: str) -> str:
    """The annotator x annotator matrix of Cohen's kappa; hovering a cell shows its kappa and shared tasks."""
    size = len(annotators)
    if size < 2:
        return ""
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
        return _svg(figure, titles)


def confusion_chart(confusion: pd.DataFrame, *, control: str) -> str:
    """Krippendorff's coincidence matrix of one control: how often two annotators' labels met on an item."""
    matrix = confusion.pivot(index="first", columns="second", values="coincidences")
    order = ordered(confusion["first"])
    matrix = matrix.reindex(index=order, columns=order)
    size = len(order)
    side = min(6.0, 1.6 + 0.4 * size)
    with _figure(side + 1.0, side) as figure:
        ax = figure.subplots()
        values = matrix.to_numpy(dtype=float)
        shown = ax.imshow(np.log1p(values), cmap="Blues")
        if size <= 15:
            for i in range(size):
                for j in range(size):  # black or white by the cell's own colour (WCAG contrast)
                    ax.text(j, i, f"{values[i, j]:.0f}", ha="center", va="center", fontsize=8,
                            color=readable_text(shown.cmap(shown.norm(np.log1p(values[i, j])))))
        labels = [str(label) for label in order]
        ax.set_xticks(range(size), labels=labels, rotation=45, ha="right")
        ax.set_yticks(range(size), labels=labels)
        ax.spines[:].set_visible(False)
        figure.colorbar(shown, ax=ax, shrink=0.7, label="log(1 + coincidences)")
        ax.set_title(control, loc="left", fontweight="bold", fontsize=9)
        return _svg(figure)


def distribution_chart(tasks: pd.DataFrame, *, threshold: float) -> str:
    """How the tasks' scores are spread, flagged tasks in red, with the threshold.

    A task's score is the value the flag compares with the threshold: its
    lowest control's (:func:`plugin.state.flags.task_score_of`; a span control's
    overlap F1 unless ``--span-flag-on`` says otherwise, an ordered control's
    weighted agreement, else SPA). A task left of the line is red; a red task
    right of it was flagged by another rule (a control's own threshold,
    "constant low", the lowest tenth), which its reasons name.
    """
    scored = tasks[tasks["score"].notna()]
    if scored.empty:
        return ""
    spa = scored["score"].astype(float)
    flagged = scored["flagged"].astype(bool).to_numpy()
    with _figure(9.0, 2.6) as figure:
        ax = figure.subplots()
        bins = np.linspace(0, 1, 21).tolist()
        ax.hist([spa[~flagged], spa[flagged]], bins=bins, color=[SPA_COLOUR, FLAG_COLOUR], stacked=True,
                label=["not flagged", "flagged"])
        ax.axvline(threshold, color="black", linestyle=":", linewidth=1)
        ax.set_xlabel("task score (its lowest control's agreement, as the flag compares it)")
        ax.set_ylabel("tasks")
        ax.legend(frameon=False)
        return _svg(figure)


def sweep_chart(sweep: pd.DataFrame) -> str:
    """Chart of the augmented kappa of each multiple-choice control against the weight of the first choice.

    The weight p of the first choice goes from 0.5 to 1.
    """
    if sweep.empty:
        return ""
    with _figure(6.0, 2.6) as figure:
        ax = figure.subplots()
        for name, part in sweep.groupby("control", sort=False):
            part = part.sort_values("p")
            ax.plot(part["p"], part["kappa"], marker="o", markersize=3, label=str(name))
        ax.set_xlabel("p (weight of the first-ranked choice)")
        ax.set_ylabel("augmented kappa")
        ax.grid(alpha=0.3)
        ax.legend(frameon=False)
        return _svg(figure)


def offset_chart(offsets: pd.DataFrame, *, control: str, unit: str) -> str:
    """How far apart the starts and the ends of the matched spans of one span control lie: two histograms.

    ``offsets`` holds ``start_offset`` and ``end_offset`` (the second
    annotator's boundary minus the first's). The bars cover every offset,
    one bar per position for small whole-number offsets, else 61 bars with
    one centred on 0. Counts are on a log scale, since most matched spans
    usually agree exactly.
    """
    if offsets.empty:
        return ""
    values = offsets[["start_offset", "end_offset"]].to_numpy(dtype=float)
    reach = float(np.abs(values).max()) or 1.0
    if np.all(values == np.round(values)):
        width = float(max(1, math.ceil((2 * reach + 1) / 61)))
        half = (math.ceil(reach / width - 0.5) + 0.5) * width
    else:
        width, half = 2 * reach / 60, reach * 61 / 60
    bins = np.linspace(-half, half, round(2 * half / width) + 1).tolist()
    with _figure(9.0, 2.4) as figure:
        axes = figure.subplots(1, 2, sharey=True)
        for ax, column, title in zip(axes, ("start_offset", "end_offset"), ("start", "end"), strict=True):
            ax.hist(offsets[column].to_numpy(dtype=float), bins=bins, color=SPA_COLOUR, log=True)
            ax.axvline(0, color="black", linestyle=":", linewidth=1)
            ax.set_ylim(bottom=0.5)
            ax.set_xlabel(f"difference of the {title}s ({unit})")
            ax.set_title(f"{control}: {title}", loc="left", fontweight="bold")
            ax.grid(axis="y", alpha=0.3)
        axes[0].set_ylabel("matched pairs")
        return _svg(figure)


def reference_chart(references: pd.DataFrame, *, control: str, threshold: float | None = None,
                    weighted: bool = False) -> str:
    """Chart of each annotator's agreement with each reference of one control, on the quantity the rule uses.

    That is the accuracy with its Wilson interval as a bar; for an ordered control (``weighted``), the weighted
    agreement (a 4 against a 5 is near-agreement), which ``threshold`` (``--min-gt-accuracy``, dotted) is compared
    with, and which has no interval. The ground truth is in the flag colour, model versions in blues; the legend
    sits under the axes, off the rows.
    """
    if references.empty:
        return ""
    names = list(dict.fromkeys(references["name"]))
    kinds = list(dict.fromkeys(references["reference"]))
    height = 1.3 + 0.28 * len(names) * max(1, min(len(kinds), 3))
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
            ax.errorbar(accuracy, y, xerr=[low, high], fmt="o", color=colour, markersize=4, capsize=2,
                        label=str(kind))
        if threshold is not None:
            ax.axvline(threshold, color="black", linestyle=":", linewidth=1)
        ax.set_yticks(range(len(names)), labels=[short_name(n) for n in names])
        ax.invert_yaxis()
        ax.set_xlim(0, 1.02)
        ax.set_xlabel("weighted agreement with the reference (Gwet's weights, as the rule)" if weighted else
                      "accuracy against the reference, 95% Wilson interval")
        ax.set_title(control, loc="left", fontweight="bold")
        figure.legend(frameon=False, fontsize=8, loc="outside lower center", ncols=min(len(kinds), 4))
        return _svg(figure)


def readable_text(rgba: Sequence[float]) -> str:
    """Black or white, whichever contrasts more with a cell of colour ``rgba`` (WCAG relative luminance).

    >>> readable_text((1.0, 1.0, 1.0, 1.0)), readable_text((0.03, 0.19, 0.42, 1.0))
    ('black', 'white')
    """
    linear = [c / 12.92 if c <= 0.03928 else ((c + 0.055) / 1.055) ** 2.4 for c in rgba[:3]]
    luminance = 0.2126 * linear[0] + 0.7152 * linear[1] + 0.0722 * linear[2]
    # contrast with black (L + 0.05) / 0.05 against white 1.05 / (L + 0.05): black wins above L of about 0.179
    return "black" if (luminance + 0.05) / 0.05 >= 1.05 / (luminance + 0.05) else "white"


def probability_chart(cells: pd.DataFrame, *, title: str) -> str:
    """One annotator's confusion matrix: the probability of each label they give (columns) per true label (rows)."""
    order = ordered(cells["true_label"])
    matrix = (cells.pivot(index="true_label", columns="said_label", values="probability")
              .reindex(index=order, columns=order).to_numpy(dtype=float))
    size = len(order)
    side = min(5.5, 1.8 + 0.4 * size)
    with _figure(side + 1.0, side) as figure:
        ax = figure.subplots()
        colours = matplotlib.colormaps["Blues"]
        shown = ax.imshow(matrix, cmap=colours, vmin=0.0, vmax=1.0)
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
        return _svg(figure)


def trust_chart(annotators: pd.DataFrame, *, control: str) -> str:
    """Each annotator's accuracy as Dawid-Skene estimates it, beside their accuracy on ground truth where known."""
    names = list(annotators["name"])
    with _figure(7.0, min(0.9 + 0.3 * len(names), 9.0)) as figure:
        ax = figure.subplots()
        y = np.arange(len(names))
        ax.scatter(annotators["accuracy"].to_numpy(dtype=float), y, color=SPA_COLOUR, s=22,
                   label="estimated (no ground truth needed)")
        truth = annotators["ground_truth_accuracy"].to_numpy(dtype=float)
        if np.isfinite(truth).any():
            ax.scatter(truth, y, color=FLAG_COLOUR, marker="D", s=18, label="on ground-truth items")
        ax.set_yticks(y, labels=[short_name(n) for n in names])
        ax.invert_yaxis()
        ax.set_xlim(0, 1.02)
        ax.set_xlabel("probability that the annotator's label is the true one")
        ax.set_title(control, loc="left", fontweight="bold")
        figure.legend(frameon=False, fontsize=8, loc="outside lower center", ncols=2)
        return _svg(figure)
