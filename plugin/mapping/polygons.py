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

from collections.abc import Mapping
from typing import Any

import numpy as np
import shapely
from shapely.geometry import LineString, Polygon
from shapely.geometry.base import BaseGeometry

from plugin.mapping.base import MAX_MAGNITUDE
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


def _points(raw: Any, scale: tuple[float, float]) -> np.ndarray | None:
    """The ``raw`` points scaled, as an (n, 2) array; None when malformed.

    ``raw`` is ``[[x, y], ...]`` or ``[{"x", "y"}, ...]``.
    """
    if not isinstance(raw, list) or not raw:
        return None
    if isinstance(raw[0], Mapping):
        raw = [[point.get("x"), point.get("y")] if isinstance(point, Mapping) else None for point in raw]
    try:
        points = np.asarray(raw, dtype=float)
    except OverflowError:  # an integer too large for a float
        return None
    except (TypeError, ValueError):
        try:
            points = np.array([point[:2] for point in raw], dtype=float)
        except (TypeError, ValueError, IndexError, KeyError, OverflowError):
            return None
    if points.ndim == 2 and points.shape[1] > 2:
        points = points[:, :2]
    if points.ndim != 2 or points.shape[1] != 2 or not np.isfinite(points).all() \
            or (np.abs(points) > MAX_MAGNITUDE).any():
        return None
    return points * np.array(scale)


def _key(points: np.ndarray) -> tuple[float, ...]:
    return tuple(points.round(3).ravel().tolist())


def polygon(value: Mapping[str, Any], result: Mapping[str, Any], scope: tuple[Any, ...],
            options: MappingOptions) -> Geometry | None:
    """A polygon's geometry from ``points`` (``[[x, y], ...]`` in percent), or None when malformed or flat."""
    points = _points(value.get("points"), scale_of(result))
    if points is None or len(points) < 3:
        return None
    shape = shapely.polygons(points)
    if not shapely.is_valid(shape):
        shape = shapely.make_valid(shape)
    low, _, high, _ = shapely.bounds(shape)
    if not shapely.area(shape) > 0:
        return None
    return Geometry(POLYGON, _key(points), (float(low), float(high)), shape, scope)


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
