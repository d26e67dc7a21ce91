"""DateTime: the task (or region) is the item, the moment chosen a number (interval level).

Decision. A date is a point on a scale where distances mean something (two
annotators a day apart agree more than two a year apart), so DateTime is
interval data: ``datetime`` and ``date`` become days since 1970-01-01
(fractional for a time of day), ``time`` minutes since midnight, ``month``
months since year 0, ``year`` the year. Values that do not parse are skipped.
"""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Mapping, Sequence
from typing import Any

from plugin.mapping.annotations import Skips
from plugin.mapping.base import MappedControl, SkipResult, Unit, single_labels
from plugin.mapping.labelconfig import Control

__all__ = ["date_number", "map_datetime"]

_EPOCH = dt.datetime(1970, 1, 1, tzinfo=dt.UTC)


def date_number(text: str) -> float:
    """The number of a DateTime value; see the module notes.

    Raises
    ------
    ValueError
        If ``text`` is none of Label Studio's DateTime formats.
    """
    text = text.strip()
    if re.fullmatch(r"\d{1,2}:\d{2}(:\d{2})?", text):
        parts = [int(p) for p in text.split(":")]
        return parts[0] * 60 + parts[1] + (parts[2] / 60 if len(parts) > 2 else 0)
    if re.fullmatch(r"-?\d{1,6}", text):
        return float(int(text))
    if re.fullmatch(r"\d{4}-\d{2}", text):
        year, month = (int(p) for p in text.split("-"))
        return year * 12 + month - 1
    moment = dt.datetime.fromisoformat(text)
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=dt.UTC)
    return (moment - _EPOCH).total_seconds() / 86400


def map_datetime(control: Control, units: Sequence[Unit], skips: Skips) -> MappedControl:
    """Map a DateTime control; see the module notes."""
    def parse(value: Mapping[str, Any]) -> float:
        text = value.get("datetime")
        if not isinstance(text, str):
            raise SkipResult("malformed value", "datetime is not text")
        try:
            return float(date_number(text))
        except ValueError:
            raise SkipResult("malformed value", "datetime that does not parse") from None

    return MappedControl(control, "interval", single_labels(control, units, skips, parse))
