"""Relations: each pair of matched regions that anyone related is an item.

A relation links two regions of one annotation (``from_id`` to ``to_id``).
Both ends are replaced by the items their regions were matched into, so that
two annotators' relations between the same matched regions are one item
``{task}:rel:{from item}>{to item}`` (``direction: "bi"`` orders the ends,
``"left"`` swaps them). The label is the relation's label, or ``"related"``
without labels; a relation given several labels (``<Relations choice="multiple">``)
keeps the first by name and its others are counted as skipped, as a region's
extra labels are, so that every label is one of the control's categories. An
annotator who has regions in both items but did not relate them says
``"no relation"`` (nothing with ``absent_span="missing"``); one who lacks
either region is missing there.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from plugin.mapping.annotations import Skips, Submission
from plugin.mapping.base import MappedControl, reason
from plugin.mapping.labelconfig import Control
from plugin.mapping.regions import RegionItems
from plugin.settings import MappingOptions

__all__ = ["NO_RELATION", "RELATED", "map_relations"]

NO_RELATION, RELATED = "no relation", "related"


def _label(control: Control, result: Mapping[str, Any], skips: Skips) -> str | None:
    labels = result.get("labels") or []
    if not isinstance(labels, list) or not all(isinstance(x, str) for x in labels):
        skips.add(reason(control, "malformed value", "relation labels are not a list of text"))
        return None
    unknown = [x for x in labels if control.labels and x not in control.labels]
    for label in unknown:
        skips.add(reason(control, "label not in the config", repr(label)))
    known = sorted(set(labels) - set(unknown))
    if len(known) > 1:
        skips.add(reason(control, "malformed value", "extra labels on one relation (the first by name counts)"),
                  len(known) - 1)
    return known[0] if known else (RELATED if not labels else None)


def map_relations(control: Control, submissions: Mapping[int, list[Submission]], items: RegionItems,
                  skips: Skips, options: MappingOptions) -> MappedControl:
    """Map the relations of every task over the matched regions ``items``.

    ``items`` maps task -> (annotator, region id) -> item.
    """
    rows: list[tuple[Any, ...]] = []
    absent = NO_RELATION if options.absent_span == "label" else None
    for task, task_submissions in submissions.items():
        task_items = items.get(task, {})
        said: dict[str, dict[str, str]] = {}
        ends_of: dict[str, tuple[str, str]] = {}
        for submission in task_submissions:
            for result in submission.results:
                if str(result.get("type", "")).lower() != "relation":
                    continue
                ends = [task_items.get((submission.annotator, str(result.get(k)))) for k in ("from_id", "to_id")]
                if None in ends:
                    skips.add(reason(control, "malformed value", "relation to a region that was not scored"))
                    continue
                first, second = ends
                direction = result.get("direction", "right")
                if direction == "left" or (direction == "bi" and second < first):  # type: ignore[operator]
                    first, second = second, first
                label = _label(control, result, skips)
                if label is None:
                    continue
                prefix = f"{task}:"
                item = f"{task}:rel:{first[len(prefix):]}>{second[len(prefix):]}"  # type: ignore[index]
                ends_of[item] = (first, second)  # type: ignore[assignment]
                mine = said.setdefault(item, {})
                if submission.annotator in mine:
                    skips.add(reason(control, "duplicate region", "two relations between one pair of regions"))
                    label = min(label, mine[submission.annotator])
                mine[submission.annotator] = label
        owned = {(annotator, item) for (annotator, _), item in task_items.items()} if said else set()
        for item in sorted(said):
            first, second = ends_of[item]
            for submission in task_submissions:
                label = said[item].get(submission.annotator)
                if label is None and {(submission.annotator, first), (submission.annotator, second)} <= owned:
                    label = absent
                if label is not None:
                    rows.append((task, item, submission.annotator, label))
    categories = (*control.labels, RELATED, NO_RELATION) if control.labels else None
    return MappedControl(control, "nominal", tuple(rows), categories=categories)
