"""RectangleLabels, Rectangle and OcrLabels: boxes matched across annotators by IoU.

A box is ``x, y, width, height`` in percent of the image, rotated by
``rotation`` degrees around its corner ``x, y`` as Label Studio draws it. A
box drawn up or to the left may be stored with a negative ``width`` or
``height`` (label-studio-frontend's video example has ``"height":
-15.97``): it is the same box as the one drawn from its opposite corner, and
is read as that one (``x, y`` moved to the top-left corner along the rotated
edges, width and height made positive). A box of zero width or height is
empty and not read. An unrotated box is compared as a rectangle (fast); a
rotated one as a polygon in pixels (shapely), so rotation counts. An
annotator who submitted the task but drew no box matching an item gives
``"no box"`` (or nothing, with ``absent_span="missing"``).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

from shapely.geometry import Polygon

from plugin.mapping.base import finite_number
from plugin.mapping.polygons import plane_geometry, plane_iou, scale_of
from plugin.mapping.regions import Family, Geometry, positions
from plugin.settings import MappingOptions

__all__ = ["BOX", "NO_BOX", "box", "normalised_box"]

NO_BOX = "no box"

BOX = Family("box", "plane", plane_iou, lambda options: options.box_iou)


def normalised_box(x: float, y: float, width: float, height: float, rotation: float = 0.0
                   ) -> tuple[float, float, float, float]:
    """The box ``x, y, width, height`` with a positive width and height, drawn from its top-left corner.

    A negative width (height) means the box extends left of (above) ``x, y``
    along its rotated edge: the corner moves by ``width`` (``height``) along
    that edge and the size changes sign, so the box covers the same place.
    """
    dx, dy = min(width, 0.0), min(height, 0.0)
    if dx or dy:
        angle = math.radians(rotation)
        cos, sin = math.cos(angle), math.sin(angle)
        x, y = x + dx * cos - dy * sin, y + dx * sin + dy * cos
    return x, y, abs(width), abs(height)


def box(value: Mapping[str, Any], result: Mapping[str, Any], scope: tuple[Any, ...],
        options: MappingOptions) -> Geometry | None:
    """A box's geometry, or None when malformed or empty."""
    parts = positions(value, ("x", "y", "width", "height"))
    if parts is None or parts[2] == 0 or parts[3] == 0:
        return None
    rotation = finite_number(value.get("rotation") or 0)
    if rotation is None:
        return None
    sx, sy = scale_of(result)
    x, y, width, height = normalised_box(parts[0] * sx, parts[1] * sy, parts[2] * sx, parts[3] * sy, float(rotation))
    parts = [x / sx, y / sy, width / sx, height / sy]
    key = (*(round(v, 4) for v in parts), round(float(rotation) % 360, 3))
    if float(rotation) % 360 == 0:
        return plane_geometry(BOX, (x, y, x + width, y + height), scope, key[:4])
    angle = math.radians(rotation)
    cos, sin = math.cos(angle), math.sin(angle)
    corners = [(x + dx * cos - dy * sin, y + dx * sin + dy * cos)
               for dx, dy in ((0, 0), (width, 0), (width, height), (0, height))]
    return plane_geometry(BOX, Polygon(corners), scope, key)
