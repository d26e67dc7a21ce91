"""Rating (ordinal) and Number (interval): the task is the item, the number the label."""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

from plugin.annotations import Skips, Submission
from plugin.labelconfig import Control
from plugin.mapping.base import MappedControl, SkipResult, task_labels

__all__ = ["map_number", "map_rating"]


def map_rating(control: Control, submissions: Mapping[int, list[Submission]], skips: Skips) -> MappedControl:
    """Map a Rating control; ratings outside 1..maxRating are skipped."""
    def parse(value: Mapping[str, Any]) -> int:
        rating = value.get("rating")
        if (isinstance(rating, bool) or not isinstance(rating, (int, float)) or not math.isfinite(rating)
                or rating != int(rating)):
            raise SkipResult(f"rating that is not a whole number in {control.name!r}")
        if not 1 <= rating <= control.max_rating:
            raise SkipResult(f"rating outside 1..{control.max_rating} in {control.name!r}")
        return int(rating)

    return MappedControl(control, "ordinal", task_labels(control, submissions, skips, parse),
                         categories=tuple(range(1, control.max_rating + 1)))


def map_number(control: Control, submissions: Mapping[int, list[Submission]], skips: Skips) -> MappedControl:
    """Map a Number control; values that are not finite numbers are skipped."""
    def parse(value: Mapping[str, Any]) -> float:
        number = value.get("number")
        if isinstance(number, str):
            try:
                number = float(number)
            except ValueError:
                number = None
        if isinstance(number, bool) or not isinstance(number, (int, float)) or not math.isfinite(number):
            raise SkipResult(f"number that is not a finite number in {control.name!r}")
        return float(number)

    return MappedControl(control, "interval", task_labels(control, submissions, skips, parse))
