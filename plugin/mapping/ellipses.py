"""EllipseLabels and Ellipse: regions matched by ellipse IoU (shapely).

An ellipse is its centre ``x, y`` and radii ``radiusX, radiusY`` in percent,
rotated by ``rotation`` degrees around its centre; it is compared in pixels
(when the result has the image size) as a 64-sided polygon, whose area is
within 0.2 % of the ellipse's.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from shapely import affinity
from shapely.geometry import Point

from plugin.mapping.base import finite_number
from plugin.mapping.polygons import plane_geometry, plane_iou, scale_of
from plugin.mapping.regions import Family, Geometry, positions
from plugin.settings import MappingOptions

__all__ = ["ELLIPSE", "ellipse"]

ELLIPSE = Family("ellipse", "plane", plane_iou, lambda options: options.polygon_iou)


def ellipse(value: Mapping[str, Any], result: Mapping[str, Any], scope: tuple[Any, ...],
            options: MappingOptions) -> Geometry | None:
    """An ellipse's geometry, or None when malformed or flat."""
    parts = positions(value, ("x", "y", "radiusX", "radiusY"))
    rotation = finite_number(value.get("rotation") or 0)
    if parts is None or parts[2] <= 0 or parts[3] <= 0 or rotation is None:
        return None
    sx, sy = scale_of(result)
    circle = Point(parts[0] * sx, parts[1] * sy).buffer(1.0, quad_segs=16)
    shape = affinity.scale(circle, parts[2] * sx, parts[3] * sy)
    if rotation:
        shape = affinity.rotate(shape, float(rotation), origin="centroid")
    return plane_geometry(ELLIPSE, shape, scope, (*(round(v, 4) for v in parts), round(float(rotation) % 360, 3)))
