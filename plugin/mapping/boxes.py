"""RectangleLabels: boxes matched across annotators by IoU, then each matched box's label.

Boxes are compared as axis-aligned rectangles in percent of the image
(rotation is not taken into account). An annotator who submitted the task but
drew no box matching an item gives ``"no box"`` (or nothing, with
``absent_span="missing"``).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

from plugin.annotations import Skips, Submission
from plugin.labelconfig import Control
from plugin.mapping.base import MappedControl, control_results
from plugin.mapping.regions import Region, align, box_iou, region_rows
from plugin.settings import MappingOptions

__all__ = ["NO_BOX", "map_boxes"]

NO_BOX = "no box"


def _box(value: Mapping[str, Any]) -> tuple[float, float, float, float] | None:
    parts = [value.get(k) for k in ("x", "y", "width", "height")]
    if not all(isinstance(p, (int, float)) and not isinstance(p, bool) and math.isfinite(p) for p in parts):
        return None
    x, y, width, height = (float(p) for p in parts)  # type: ignore[arg-type]
    if width <= 0 or height <= 0:
        return None
    return x, y, x + width, y + height


def map_boxes(control: Control, submissions: Mapping[int, list[Submission]], skips: Skips,
              options: MappingOptions) -> MappedControl:
    """Map a RectangleLabels control; see the module notes."""
    allowed = set(control.labels)
    absent = NO_BOX if options.absent_span == "label" else None
    rows: list[tuple[Any, ...]] = []
    for task, task_submissions in submissions.items():
        regions = []
        for submission in task_submissions:
            for result in control_results(submission, control, skips):
                value = result["value"]
                box = _box(value)
                labels = value.get("rectanglelabels")
                if box is None or not isinstance(labels, list) or not labels or not isinstance(labels[0], str):
                    skips.add(f"malformed box in {control.name!r}")
                    continue
                if allowed and labels[0] not in allowed:
                    skips.add(f"label {labels[0]!r} not in the config of {control.name!r}")
                    continue
                regions.append(Region(submission.annotator, tuple(round(v, 4) for v in box), labels[0], box))
        groups = align(regions, similarity=box_iou, threshold=options.box_iou, skips=skips,
                       what=f"box in {control.name!r}")
        rows.extend(region_rows(task, groups, task_submissions, absent))
    categories = (*control.labels, NO_BOX) if control.labels and absent else (control.labels or None)
    return MappedControl(control, "nominal", tuple(rows), categories=categories)
