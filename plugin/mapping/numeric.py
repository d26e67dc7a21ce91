"""Rating (ordinal) and Number (interval): the task (or region) is the item, the number the label.

Rating's categories are 1..maxRating from the config; without a config, or
for a scale over a thousand points, they are the ratings seen, so memory
follows the data and never a range.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from plugin.mapping.annotations import Skips
from plugin.mapping.base import MAX_MAGNITUDE, MappedControl, SkipResult, Unit, finite_number, single_labels
from plugin.mapping.labelconfig import Control

__all__ = ["MAX_NUMBER", "map_number", "map_rating"]

MAX_NUMBER = MAX_MAGNITUDE
"""The largest magnitude of a number scored: interval alpha sums squared differences of the values over a
project, which for numbers near 1e154 and beyond overflow a float (the measures became NaN, with no reason
said)."""


def map_rating(control: Control, units: Sequence[Unit], skips: Skips) -> MappedControl:
    """Map a Rating control; ratings outside 1..maxRating (or below 1, scale unknown) are skipped."""
    def parse(value: Mapping[str, Any]) -> int:
        rating = value.get("rating")
        # an int as read (JSON's integers have any number of digits), any other value as a finite float
        number = rating if isinstance(rating, int) and not isinstance(rating, bool) else finite_number(rating)
        if number is None or number != int(number):
            raise SkipResult("malformed value", "rating that is not a whole number")
        if number < 1 or number > MAX_MAGNITUDE or (control.max_rating > 0 and number > control.max_rating):
            raise SkipResult("malformed value", f"rating outside 1..{control.max_rating or 'maxRating'}")
        return int(number)

    return MappedControl(control, "ordinal", single_labels(control, units, skips, parse),
                         categories=control.rating_categories)


def map_number(control: Control, units: Sequence[Unit], skips: Skips) -> MappedControl:
    """Map a Number control; values that are not finite numbers, or beyond :data:`MAX_NUMBER`, are skipped."""
    def parse(value: Mapping[str, Any]) -> float:
        number = value.get("number")
        if isinstance(number, str):
            try:
                number = float(number)
            except ValueError:
                number = None
        finite = finite_number(number)
        if finite is None and not (isinstance(number, int) and not isinstance(number, bool)):
            raise SkipResult("malformed value", "number that is not a finite number")
        if finite is None or abs(finite) > MAX_NUMBER:  # an int too large for a float is beyond it too
            raise SkipResult("malformed value", f"number beyond ±{MAX_NUMBER:g}, whose squared differences overflow")
        return finite

    return MappedControl(control, "interval", single_labels(control, units, skips, parse))
