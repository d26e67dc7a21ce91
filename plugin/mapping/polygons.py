"""PolygonLabels, Polygon, VectorLabels and Vector: regions matched by polygon IoU (shapely).

Polygons are read in pixels when the result carries ``original_width`` and
``original_height`` (so that rotation and aspect are right), else in percent
of the image. A self-intersecting polygon is repaired with
``shapely.make_valid`` before its area is taken. A closed vector is a polygon;
an open vector (a polyline) is a band one percent of the image wide around
its line. Boxes and ellipses are plane shapes too and match polygons by the
same IoU.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

import shapely
from shapely.geometry import LineString, Polygon
from shapely.geometry.base import BaseGeometry

from plugin.mapping.regions import Family, Geometry, box_iou
from plugin.settings import MappingOptions

__all__ = ["POLYGON", "plane_geometry", "plane_iou", "polygon", "scale_of", "vector"]


def scale_of(result: Mapping[str, Any]) -> tuple[float, float]:
    """Pixels per percent along x and y, from ``original_width``/``original_height`` (1, 1 without them)."""
    width, height = result.get("original_width"), result.get("original_height")
    if all(isinstance(v, (int, float)) and not isinstance(v, bool) and v > 0 for v in (width, height)):
        return float(width) / 100, float(height) / 100  # type: ignore[arg-type]
    return 1.0, 1.0


def _shape(value: Any) -> BaseGeometry:
    if isinstance(value, tuple):
        return shapely.box(*value)
    return value


def plane_iou(a: Any, b: Any) -> float:
    """IoU of two plane shapes: axis-aligned boxes ``(x0, y0, x1, y1)`` or shapely geometries."""
    if isinstance(a, tuple) and isinstance(b, tuple):
        return box_iou(a, b)
    first, second = _shape(a), _shape(b)
    intersection = shapely.intersection(first, second).area
    union = first.area + second.area - intersection
    return intersection / union if union > 0 else 0.0


POLYGON = Family("polygon", "plane", plane_iou, lambda options: options.polygon_iou)


def plane_geometry(family: Family, shape: Any, scope: tuple[Any, ...], key: tuple[Any, ...]) -> Geometry | None:
    """A plane region's geometry, or None when it has no area."""
    bounds = shape if isinstance(shape, tuple) else shape.bounds
    area = (bounds[2] - bounds[0]) * (bounds[3] - bounds[1]) if isinstance(shape, tuple) else shape.area
    if not area > 0:
        return None
    return Geometry(family, key, (bounds[0], bounds[2]), shape, scope)


def _points(raw: Any, scale: tuple[float, float]) -> list[tuple[float, float]] | None:
    if not isinstance(raw, list) or not raw:
        return None
    points = []
    for point in raw:
        if isinstance(point, Mapping):
            point = [point.get("x"), point.get("y")]
        if not isinstance(point, Sequence) or len(point) < 2 or not all(
                isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v) for v in point[:2]):
            return None
        points.append((float(point[0]) * scale[0], float(point[1]) * scale[1]))
    return points


def _key(points: Sequence[tuple[float, float]]) -> tuple[float, ...]:
    return tuple(round(c, 3) for point in points for c in point)


def polygon(value: Mapping[str, Any], result: Mapping[str, Any], scope: tuple[Any, ...],
            options: MappingOptions) -> Geometry | None:
    """A polygon's geometry from ``points`` (``[[x, y], ...]`` in percent), or None when malformed or flat."""
    points = _points(value.get("points"), scale_of(result))
    if points is None or len(points) < 3:
        return None
    shape = Polygon(points)
    if not shape.is_valid:
        shape = shapely.make_valid(shape)
    return plane_geometry(POLYGON, shape, scope, _key(points))


def vector(value: Mapping[str, Any], result: Mapping[str, Any], scope: tuple[Any, ...],
           options: MappingOptions) -> Geometry | None:
    """A vector's geometry from ``vertices``: closed, a polygon; open, a band around its line."""
    scale = scale_of(result)
    points = _points(value.get("vertices"), scale)
    if points is None or len(points) < 2:
        return None
    if value.get("closed") and len(points) >= 3:
        shape = Polygon(points)
        if not shape.is_valid:
            shape = shapely.make_valid(shape)
    else:
        shape = LineString(points).buffer(0.5 * max(scale))
    return plane_geometry(POLYGON, shape, scope, _key(points))
