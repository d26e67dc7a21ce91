"""RectangleLabels, Rectangle and OcrLabels: boxes matched across annotators by IoU.

A box is ``x, y, width, height`` in percent of the image, rotated by
``rotation`` degrees around its top-left corner as Label Studio draws it. An
unrotated box is compared as a rectangle (fast); a rotated one as a polygon
in pixels (shapely), so rotation counts. An annotator who submitted the task
but drew no box matching an item gives ``"no box"`` (or nothing, with
``absent_span="missing"``).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

from shapely.geometry import Polygon

from plugin.mapping.polygons import plane_geometry, plane_iou, scale_of
from plugin.mapping.regions import Family, Geometry, positions
from plugin.settings import MappingOptions

__all__ = ["BOX", "NO_BOX", "box"]

NO_BOX = "no box"

BOX = Family("box", "plane", plane_iou, lambda options: options.box_iou)


def box(value: Mapping[str, Any], result: Mapping[str, Any], scope: tuple[Any, ...],
        options: MappingOptions) -> Geometry | None:
    """A box's geometry, or None when malformed or empty."""
    parts = positions(value, ("x", "y", "width", "height"))
    if parts is None or parts[2] <= 0 or parts[3] <= 0:
        return None
    rotation = value.get("rotation") or 0
    if isinstance(rotation, bool) or not isinstance(rotation, (int, float)) or not math.isfinite(rotation):
        return None
    sx, sy = scale_of(result)
    x, y, width, height = parts[0] * sx, parts[1] * sy, parts[2] * sx, parts[3] * sy
    key = (*(round(v, 4) for v in parts), round(float(rotation) % 360, 3))
    if float(rotation) % 360 == 0:
        return plane_geometry(BOX, (x, y, x + width, y + height), scope, key[:4])
    angle = math.radians(rotation)
    cos, sin = math.cos(angle), math.sin(angle)
    corners = [(x + dx * cos - dy * sin, y + dx * sin + dy * cos)
               for dx, dy in ((0, 0), (width, 0), (width, height), (0, height))]
    return plane_geometry(BOX, Polygon(corners), scope, key)
