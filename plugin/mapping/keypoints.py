"""KeyPointLabels and KeyPoint: points matched by distance as a share of the image.

The distance of two points is taken in percent of the image's width and
height and divided by the diagonal of that square (141.4): 0.02 is 2 % of
the image's diagonal. Two points match when they are at most
``keypoint_distance`` apart; the closer, the more similar
(``1 - distance / keypoint_distance``).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

from plugin.mapping.regions import Family, Geometry, positions
from plugin.settings import MappingOptions

__all__ = ["KEYPOINT", "keypoint"]

_DIAGONAL = math.hypot(100.0, 100.0)


def _similarity(a: tuple[float, float, float], b: tuple[float, float, float]) -> float:
    distance = math.hypot(a[0] - b[0], a[1] - b[1]) / _DIAGONAL
    return 1.0 - distance / a[2] if a[2] > 0 else float(distance == 0)


KEYPOINT = Family("keypoint", "point", _similarity, lambda options: 0.0)


def keypoint(value: Mapping[str, Any], result: Mapping[str, Any], scope: tuple[Any, ...],
             options: MappingOptions) -> Geometry | None:
    """A keypoint's geometry, or None when malformed."""
    parts = positions(value, ("x", "y"))
    if parts is None:
        return None
    reach = options.keypoint_distance * _DIAGONAL
    return Geometry(KEYPOINT, (round(parts[0], 4), round(parts[1], 4)), (parts[0] - reach, parts[0] + reach),
                    (parts[0], parts[1], options.keypoint_distance), scope)
