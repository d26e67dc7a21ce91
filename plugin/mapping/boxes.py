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
from plugin.mapping.base import MappedControl
from plugin.mapping.regions import box_iou, map_regions
from plugin.settings import MappingOptions

__all__ = ["NO_BOX", "map_boxes"]

NO_BOX = "no box"


def _box(value: Mapping[str, Any]) -> tuple[tuple[Any, ...], tuple[float, ...]] | None:
    """A box's exact key (rounded corners) and extent ``(x0, y0, x1, y1)``, or None when malformed."""
    parts = [value.get(k) for k in ("x", "y", "width", "height")]
    if not all(isinstance(p, (int, float)) and not isinstance(p, bool) and math.isfinite(p) for p in parts):
        return None
    x, y, width, height = (float(p) for p in parts)  # type: ignore[arg-type]
    if width <= 0 or height <= 0:
        return None
    box = (x, y, x + width, y + height)
    return tuple(round(v, 4) for v in box), box


def map_boxes(control: Control, submissions: Mapping[int, list[Submission]], skips: Skips,
              options: MappingOptions) -> MappedControl:
    """Map a RectangleLabels control; see the module notes."""
    return map_regions(control, submissions, skips, position=_box, what="box", similarity=box_iou,
                       threshold=options.box_iou, absent=NO_BOX if options.absent_span == "label" else None)
