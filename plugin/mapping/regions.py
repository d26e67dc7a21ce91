"""Regions of every family matched across annotators into items.

One mechanism serves every family; each family brings only its geometry.

A region is one result ``id`` in one annotation: the geometry a tool drew
(span, box, polygon, ellipse, keypoint, mask, video track, interval) and the
label a labels control gave it. Label Studio stores a region drawn with a
plain tool and labeled with a separate ``<Labels>`` as several results that
share the ``id`` (the OCR template: ``rectangle`` + ``labels`` + a per-region
``textarea``); they are read as one region.

Within one task (and one page, repeated instance or channel: the region's
*scope*), regions of different annotators are matched by their family's
similarity: every pair at or above the family's threshold is a candidate, and
among the partitions of the regions into groups of at most one region per
annotator, every pair in a group a candidate, the one of greatest summed
similarity over the pairs inside groups is chosen exactly
(:func:`plugin.mapping.grouping.best_groups`: an optimal assignment for two
annotators, a set partition for more). The result depends only on the set of
regions, never on their order in the file. Families whose matching is ``exact`` (text spans by default) match
equal positions only.

Each group is an item; every annotator who submitted the task gives the
group's label, or the control's "no region" label when they drew nothing
there (``absent_span="missing"``: nothing).
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, NamedTuple

from agreement.set_partition import CROWDED_REASON
from plugin.mapping.annotations import Skips, Submission
from plugin.mapping.base import MAX_MAGNITUDE, finite_number, reason
from plugin.mapping.grouping import best_groups
from plugin.mapping.labelconfig import Control
from plugin.settings import MappingOptions

__all__ = ["REGION", "Family", "Geometry", "Region", "RegionItems", "box_iou", "item_key", "match_regions",
           "region_rows", "span_jaccard"]

REGION = "region"  # the label of a region drawn with a plain tool and no labels control
_MAX_KEY_TEXT = 48


@dataclass(frozen=True)
class Family:
    """What one family of regions contributes: its name and how similar two of its geometries are.

    Attributes
    ----------
    name : str
        ``span``, ``box``, ``polygon``, ...; the "no region" label is ``no {name}``.
    kind : str
        Families of one kind can match each other (boxes, polygons and
        ellipses are all plane shapes).
    similarity : callable
        ``similarity(a, b)`` of two :attr:`Geometry.shape` in [0, 1].
    threshold : callable
        ``threshold(options)``: least similarity of a match, or None for exact
        matching (equal keys only).
    """

    name: str
    kind: str
    similarity: Callable[[Any, Any], float]
    threshold: Callable[[MappingOptions], float | None]


class Geometry(NamedTuple):
    """Where one region is (a named tuple: a task makes one a region).

    Attributes
    ----------
    family : Family
    key : tuple
        Its exact position, hashable (rounded numbers, or a digest of a mask).
    bounds : tuple of float
        ``(low, high)`` along the first axis, for finding candidate pairs fast;
        two regions whose bounds do not overlap are never compared.
    shape : object
        What :attr:`Family.similarity` compares.
    scope : tuple
        Where the region lives within the task (page, channel): regions of
        different scopes never match.
    """

    family: Family
    key: tuple[Any, ...]
    bounds: tuple[float, float]
    shape: Any
    scope: tuple[Any, ...] = ()


@dataclass(frozen=True)
class Region:
    """One region one annotator marked in a task.

    Attributes
    ----------
    annotator : str
    rid : str
        The result ``id`` that per-region answers and relations refer to.
    label : str
    geometry : Geometry
    instance : str
        The ``from_name`` (differs from the control name inside a Repeater).
    """

    annotator: str
    rid: str
    label: str
    geometry: Geometry
    instance: str = ""

    @property
    def sort_key(self) -> tuple[Any, ...]:
        """A total order on regions that does not depend on the file."""
        return self.order()

    def order(self) -> tuple[Any, ...]:
        """:attr:`sort_key`, as a function for ``sorted``; made once a region.

        It is kept beside the fields, as ``functools.cached_property`` would keep it, without its lock: a region
        is sorted many times.
        """
        key = self.__dict__.get("_order")
        if key is None:
            geometry = self.geometry
            key = self.__dict__["_order"] = (repr(geometry.scope), self.instance, geometry.family.name,
                                             repr(geometry.key), self.annotator, self.label, self.rid)
        return key


def span_jaccard(a: tuple[float, float], b: tuple[float, float]) -> float:
    """Overlap of two spans ``(start, end)`` over their union."""
    overlap = min(a[1], b[1]) - max(a[0], b[0])
    union = max(a[1], b[1]) - min(a[0], b[0])
    return overlap / union if overlap > 0 and union > 0 else 0.0


def box_iou(a: tuple[float, ...], b: tuple[float, ...]) -> float:
    """Intersection over union of two axis-aligned boxes ``(x0, y0, x1, y1)``."""
    width = min(a[2], b[2]) - max(a[0], b[0])
    height = min(a[3], b[3]) - max(a[1], b[1])
    if width <= 0 or height <= 0:
        return 0.0
    intersection = width * height
    union = (a[2] - a[0]) * (a[3] - a[1]) + (b[2] - b[0]) * (b[3] - b[1]) - intersection
    return intersection / union if union > 0 else 0.0


def _dedupe(regions: Sequence[Region], control: Control, skips: Skips) -> list[Region]:
    """One region per annotator and exact position: the smallest label counts, the others are duplicates."""
    kept: dict[tuple[Any, ...], Region] = {}
    for region in sorted(regions, key=Region.order):
        place = (region.annotator, region.instance, region.geometry.scope, region.geometry.family.name,
                 region.geometry.key)
        if place in kept:
            skips.add(reason(control, "duplicate region", "one annotator marked one position twice; the first "
                                                          "label by name counts"))
            continue
        kept[place] = region
    return list(kept.values())


def _threshold(a: Family, b: Family, options: MappingOptions) -> float | None:
    first, second = a.threshold(options), b.threshold(options)
    if first is None or second is None:
        return None
    return max(first, second)


def _groups(regions: list[Region], options: MappingOptions) -> tuple[list[list[Region]], list[Region]]:
    """The grouping of greatest total similarity of regions of one scope, and the regions too crowded to group.

    See the module notes and :func:`plugin.mapping.grouping.best_groups`.
    """
    families = {region.geometry.family for region in regions}
    if len(families) == 1 and next(iter(families)).threshold(options) is None:
        equal = _equal_positions(regions)
        if equal is not None:
            return equal, []
    return _most_similar(regions, options)


def _equal_positions(regions: list[Region]) -> list[list[Region]] | None:
    """The groups of regions of one family matched exactly: the regions at each position, in their order.

    The same grouping as :func:`_most_similar` gives them, found in one pass. A pair matches when, and only when,
    its positions are equal (similarity 1), and :func:`_dedupe` left each annotator one region at a position; so
    the regions at one position are a clique of distinct annotators, one group, and regions at different positions
    share none. None when two regions at one position have different bounds (an XPath span whose global offsets
    differ): whether those meet is for the pairwise search to say.
    """
    at: dict[tuple[Any, ...], list[Region]] = {}
    for region in regions:
        at.setdefault(region.geometry.key, []).append(region)
    if any(len({region.geometry.bounds for region in group}) > 1 for group in at.values() if len(group) > 1):
        return None
    return list(at.values())


def _most_similar(regions: list[Region], options: MappingOptions) -> tuple[list[list[Region]], list[Region]]:
    """Group regions by comparing every two whose bounds meet.

    :func:`_groups` by comparing every two regions whose bounds meet, and :func:`best_groups` over the pairs.
    """
    n = len(regions)
    candidates: dict[tuple[int, int], float] = {}
    order = sorted(range(n), key=lambda i: regions[i].geometry.bounds[0])
    for position, i in enumerate(order):
        a = regions[i]
        for j in order[position + 1:]:
            b = regions[j]
            if b.geometry.bounds[0] > a.geometry.bounds[1]:
                break
            if a.annotator == b.annotator or a.geometry.family.kind != b.geometry.family.kind:
                continue
            threshold = _threshold(a.geometry.family, b.geometry.family, options)
            if threshold is None:
                score = 1.0 if a.geometry.key == b.geometry.key else 0.0
                threshold = 1.0
            else:
                score = a.geometry.family.similarity(a.geometry.shape, b.geometry.shape)
            if score >= threshold:
                candidates[(min(i, j), max(i, j))] = score
    grouping = best_groups([r.annotator for r in regions], candidates)
    return [[regions[k] for k in group] for group in grouping.groups], [regions[k] for k in grouping.crowded]


def _text(value: Any) -> str:
    if isinstance(value, float):
        return str(int(value)) if value.is_integer() else f"{value:.4f}".rstrip("0")
    return str(value)


def item_key(region: Region) -> str:
    """The item text of a group, from its first region: ``start-end``, or a short digest for long keys."""
    geometry = region.geometry
    parts = [_text(p) for p in geometry.scope] + ([region.instance] if region.instance else [])
    text = "-".join(_text(v) for v in geometry.key)
    if len(text) > _MAX_KEY_TEXT:
        text = f"{geometry.family.name}~{hashlib.sha1(repr(geometry.key).encode()).hexdigest()[:12]}"
    return ":".join([*parts, text])


# task -> (annotator, region id) -> the item its region's group became.
RegionItems = dict[int, dict[tuple[str, str], str]]


def match_regions(task: int, regions: Sequence[Region], control: Control, skips: Skips, options: MappingOptions
                  ) -> list[tuple[str, list[Region]]]:
    """One task's regions of one control grouped into items ``(item, regions)``, in a fixed order."""
    by_scope: dict[tuple[Any, ...], list[Region]] = {}
    for region in _dedupe(regions, control, skips):
        by_scope.setdefault((region.instance, region.geometry.scope), []).append(region)
    items: list[tuple[str, list[Region]]] = []
    used: set[str] = set()
    for scope in sorted(by_scope, key=repr):
        groups, crowded = _groups(by_scope[scope], options)
        for _ in crowded:
            skips.add(reason(control, "region in a crowd", f"{CROWDED_REASON}: left out of the items"))
        for group in sorted(groups, key=lambda g: min(r.order() for r in g)):
            first = min(group, key=Region.order)
            item = f"{task}:{item_key(first)}"
            if item in used:
                item = f"{item}#{first.annotator}"
            used.add(item)
            items.append((item, group))
    return items


def region_rows(task: int, items: Sequence[tuple[str, Sequence[Region]]], submitted: Sequence[Submission],
                absent: str | None) -> list[tuple[Any, ...]]:
    """Rows ``(task, item, annotator, label)`` for every item.

    Each item's label comes from every annotator who submitted the task.

    An annotator without a region in the item gives ``absent``, or nothing
    when ``absent`` is None (missing data).
    """
    rows = []
    for item, group in items:
        labels = {r.annotator: r.label for r in group}
        for submission in submitted:
            label = labels.get(submission.annotator, absent)
            if label is not None:
                rows.append((task, item, submission.annotator, label))
    return rows


def positions(values: Mapping[str, Any], keys: Sequence[str]) -> list[float] | None:
    """The numbers ``values[k]`` for ``keys``, or None when one is missing, not a finite number, or beyond
    :data:`plugin.mapping.base.MAX_MAGNITUDE`."""
    out = []
    for key in keys:
        number = finite_number(values.get(key), limit=MAX_MAGNITUDE)
        if number is None:
            return None
        out.append(number)
    return out
