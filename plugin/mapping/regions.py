"""Aligning regions (text spans, boxes) across annotators into items.

Within one task, each region one annotator marked is matched with the other
annotators' regions, so that each item holds at most one region per
annotator. ``exact`` alignment matches identical positions; overlap alignment
matches, greedily and in position order, the region of greatest similarity
(Jaccard overlap of spans, IoU of boxes) above a threshold.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from plugin.annotations import Skips, Submission
from plugin.labelconfig import Control
from plugin.mapping.base import MappedControl, control_results

__all__ = ["Region", "align", "box_iou", "map_regions", "region_rows", "span_jaccard"]

Extent = tuple[float, ...]


@dataclass(frozen=True)
class Region:
    """One region one annotator marked in a task.

    Attributes
    ----------
    annotator : str
    key : tuple
        Its exact position (start and end, or the box), as stored.
    label : str
        The region's label.
    extent : tuple of float, optional
        Numeric extent for overlap matching: ``(start, end)`` of a span,
        ``(x0, y0, x1, y1)`` of a box; None when only exact matching applies.
    """

    annotator: str
    key: tuple[Any, ...]
    label: str
    extent: Extent | None = None


def span_jaccard(a: Extent, b: Extent) -> float:
    """Overlap of two spans ``(start, end)`` over their union."""
    overlap = min(a[1], b[1]) - max(a[0], b[0])
    union = max(a[1], b[1]) - min(a[0], b[0])
    return overlap / union if overlap > 0 and union > 0 else 0.0


def box_iou(a: Extent, b: Extent) -> float:
    """Intersection over union of two boxes ``(x0, y0, x1, y1)``."""
    width = min(a[2], b[2]) - max(a[0], b[0])
    height = min(a[3], b[3]) - max(a[1], b[1])
    if width <= 0 or height <= 0:
        return 0.0
    intersection = width * height
    union = (a[2] - a[0]) * (a[3] - a[1]) + (b[2] - b[0]) * (b[3] - b[1]) - intersection
    return intersection / union if union > 0 else 0.0


def align(
    regions: Sequence[Region],
    *,
    similarity: Callable[[Extent, Extent], float] | None,
    threshold: float,
    skips: Skips,
    what: str,
) -> list[list[Region]]:
    """Group one task's regions into items, at most one region per annotator in each.

    Parameters
    ----------
    regions : sequence of Region
    similarity : callable, optional
        Similarity of two extents in [0, 1]; None for exact matching.
    threshold : float
        Least similarity for two regions to be one item.
    skips : Skips
        Counts an annotator's second region at one exact position.
    what : str
        What the regions are, for the skip report (e.g. "span in 'ner'").
    """
    ordered = sorted(regions, key=lambda r: (r.extent or (), repr(r.key), r.annotator))
    groups: list[list[Region]] = []
    by_key: dict[tuple[Any, ...], list[Region]] = {}
    for region in ordered:
        exact = by_key.get(region.key)
        if exact is not None and region.annotator in {r.annotator for r in exact}:
            skips.add(f"second {what} by one annotator at the same position")
            continue
        if similarity is None or region.extent is None:
            target = exact
        else:
            target, best = None, threshold
            for group in groups:
                head = group[0]
                if head.extent is None or region.annotator in {r.annotator for r in group}:
                    continue
                score = similarity(head.extent, region.extent)
                if score >= best and (target is None or score > best):
                    target, best = group, score
        if target is None:
            target = []
            groups.append(target)
        target.append(region)
        by_key.setdefault(region.key, target)
    return groups


def region_rows(task: int, groups: Sequence[Sequence[Region]], submitted: Sequence[Submission],
                absent: str | None) -> list[tuple[Any, ...]]:
    """Rows ``(task, item, annotator, label)``: each item's label from every annotator who submitted the task.

    An annotator without a region in the item gives ``absent``, or nothing
    when ``absent`` is None (missing data).
    """
    rows = []
    for group in groups:
        item = f"{task}:{'-'.join(map(str, group[0].key))}"
        labels = {r.annotator: r.label for r in group}
        for submission in submitted:
            label = labels.get(submission.annotator, absent)
            if label is not None:
                rows.append((task, item, submission.annotator, label))
    return rows


Position = Callable[[Mapping[str, Any]], "tuple[tuple[Any, ...], Extent | None] | None"]


def map_regions(control: Control, submissions: Mapping[int, list[Submission]], skips: Skips, *,
                position: Position, what: str, similarity: Callable[[Extent, Extent], float] | None,
                threshold: float, absent: str | None) -> MappedControl:
    """Map a region control (spans, boxes): each aligned region is an item.

    Parameters
    ----------
    position : callable
        A result value's exact key and numeric extent, or None when malformed.
    what : str
        "span" or "box", for the skip report.
    similarity, threshold
        As in :func:`align`.
    absent : str, optional
        The label of an annotator who submitted the task but marked nothing
        at an item; None leaves them missing there.
    """
    allowed = set(control.labels)
    rows: list[tuple[Any, ...]] = []
    for task, task_submissions in submissions.items():
        regions = []
        for submission in task_submissions:
            for result in control_results(submission, control, skips):
                value = result["value"]
                labels = value.get(control.result_type)
                place = position(value)
                if place is None or not isinstance(labels, list) or not labels or not isinstance(labels[0], str):
                    skips.add(f"malformed {what} in {control.name!r}")
                    continue
                if allowed and labels[0] not in allowed:
                    skips.add(f"label {labels[0]!r} not in the config of {control.name!r}")
                    continue
                if len(labels) > 1:
                    skips.add(f"extra labels on one {what} in {control.name!r} (the first counts)", len(labels) - 1)
                regions.append(Region(submission.annotator, place[0], labels[0], place[1]))
        groups = align(regions, similarity=similarity, threshold=threshold, skips=skips,
                       what=f"{what} in {control.name!r}")
        rows.extend(region_rows(task, groups, task_submissions, absent))
    categories = (*control.labels, absent) if control.labels and absent else (control.labels or None)
    return MappedControl(control, "nominal", tuple(rows), categories=categories)
