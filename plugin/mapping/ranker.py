"""Ranker: each ranked element of the task is an item.

Decision. A Ranker with ``<Bucket>`` children sorts elements into named
buckets: the item is the element (``{task}:{element id}``), the label the
bucket it was put in (nominal; elements left in the original list get
``"not in a bucket"``). A Ranker without buckets orders one list: the label is
the element's position, 1 for the top (ordinal), so that agreement measures
how close the annotators' orders are, element by element. A value that is
one flat list (``{"ranker": ["id", ...]}``, as label-studio-frontend's own
ranker example stores it) is that one list, read as the list of elements in
no bucket. Several lists without buckets or an id in two places are malformed
and skipped.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from plugin.mapping.annotations import Skips
from plugin.mapping.base import MappedControl, Unit, reason
from plugin.mapping.labelconfig import Control

__all__ = ["NOT_IN_A_BUCKET", "map_ranker"]

NOT_IN_A_BUCKET = "not in a bucket"


def _places(control: Control, value: Mapping[str, Any]) -> dict[str, Any] | None:
    ranker = value.get("ranker")
    if isinstance(ranker, list):
        ranker = {"_": ranker}  # one flat list: the original list, no bucket
    if not isinstance(ranker, Mapping) or not all(
            isinstance(ids, list) and all(isinstance(i, (str, int)) for i in ids) for ids in ranker.values()):
        return None
    places: dict[str, Any] = {}
    buckets = set(control.labels)
    for bucket in sorted(ranker, key=str):
        for position, element in enumerate(ranker[bucket], start=1):
            if str(element) in places:
                return None
            if buckets:
                places[str(element)] = bucket if bucket in buckets else NOT_IN_A_BUCKET
            else:
                places[str(element)] = position
    if not buckets and len(ranker) > 1:
        return None  # several lists without buckets: no single order
    return places


def map_ranker(control: Control, units: Sequence[Unit], skips: Skips) -> MappedControl:
    """Map a Ranker control; see the module notes."""
    rows = []
    for unit in units:
        found = []
        for result in unit.results:
            places = _places(control, result["value"])
            if places is None:
                skips.add(reason(control, "malformed value", "ranker is not one list, or buckets of ids"))
                continue
            found.append(places)
        if len(found) > 1:
            skips.add(reason(control, "duplicate result", "several rankings at one item; the first by value counts"),
                      len(found) - 1)
            found.sort(key=lambda p: sorted(p.items(), key=str))
        if found:
            rows.extend((unit.task, f"{unit.item}:{element}", unit.annotator, label)
                        for element, label in sorted(found[0].items()))
    if control.labels:
        return MappedControl(control, "nominal", tuple(rows), categories=(*control.labels, NOT_IN_A_BUCKET))
    return MappedControl(control, "ordinal", tuple(rows))
