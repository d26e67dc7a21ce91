"""Rating (ordinal) and Number (interval): the task (or region) is the item, the number the label.

Rating's categories are 1..maxRating from the config; without a config, or
for a scale over a thousand points, they are the ratings seen, so memory
follows the data and never a range.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

from plugin.mapping.annotations import Skips
from plugin.mapping.base import MappedControl, SkipResult, Unit, single_labels
from plugin.mapping.labelconfig import Control

__all__ = ["map_number", "map_rating"]


def map_rating(control: Control, units: Sequence[Unit], skips: Skips) -> MappedControl:
    """Map a Rating control; ratings outside 1..maxRating (or below 1, scale unknown) are skipped."""
    def parse(value: Mapping[str, Any]) -> int:
        rating = value.get("rating")
        if isinstance(rating, bool) or not isinstance(rating, (int, float)) or not math.isfinite(rating) \
                or rating != int(rating):
            raise SkipResult("malformed value", "rating that is not a whole number")
        if rating < 1 or (control.max_rating > 0 and rating > control.max_rating):
            raise SkipResult("malformed value", f"rating outside 1..{control.max_rating or 'maxRating'}")
        return int(rating)

    return MappedControl(control, "ordinal", single_labels(control, units, skips, parse),
                         categories=control.rating_categories)


def map_number(control: Control, units: Sequence[Unit], skips: Skips) -> MappedControl:
    """Map a Number control; values that are not finite numbers are skipped."""
    def parse(value: Mapping[str, Any]) -> float:
        number = value.get("number")
        if isinstance(number, str):
            try:
                number = float(number)
            except ValueError:
                number = None
        if isinstance(number, bool) or not isinstance(number, (int, float)) or not math.isfinite(number):
            raise SkipResult("malformed value", "number that is not a finite number")
        return float(number)

    return MappedControl(control, "interval", single_labels(control, units, skips, parse))
