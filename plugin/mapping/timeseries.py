"""Intervals: TimeSeriesLabels, TimelineLabels, and Labels on audio and video, matched by overlap.

An interval is ``start`` to ``end`` as stored, in seconds (audio, video) or
in the time series' own units (a number, or a date converted to seconds
since 1970); never rounded, so two regions within one second stay two.
TimelineLabels' ``ranges`` are frames, ``end`` included, and several ranges
form one region. Two regions' similarity is the length of their overlap over
the length of their union (Jaccard); they match at ``interval_jaccard``
(0.5). An instant (``start == end``) matches only the same instant.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Mapping, Sequence
from typing import Any

from plugin.mapping.base import MAX_MAGNITUDE, finite_number
from plugin.mapping.regions import Family, Geometry, positions
from plugin.settings import MappingOptions

__all__ = ["INTERVAL", "interval", "timeline"]

Ranges = tuple[tuple[float, float], ...]


def _length(ranges: Ranges) -> float:
    return sum(end - start for start, end in ranges)


def _similarity(a: Ranges, b: Ranges) -> float:
    if _length(a) == 0 or _length(b) == 0:
        return 1.0 if a == b else 0.0
    overlap = sum(max(0.0, min(e1, e2) - max(s1, s2)) for s1, e1 in a for s2, e2 in b)
    union = _length(a) + _length(b) - overlap
    return overlap / union if union > 0 else 0.0


INTERVAL = Family("interval", "interval", _similarity, lambda options: options.interval_jaccard)


def _moment(value: Any) -> float | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, (int, float)):
        return finite_number(value, limit=MAX_MAGNITUDE)
    if isinstance(value, str):
        try:
            return finite_number(float(value), limit=MAX_MAGNITUDE)  # "nan", "inf" and "1e300" are no moment
        except ValueError:
            pass
        try:
            moment = dt.datetime.fromisoformat(value)
        except ValueError:
            return None
        if moment.tzinfo is None:
            moment = moment.replace(tzinfo=dt.UTC)
        return moment.timestamp()
    return None


def _merged(ranges: Sequence[tuple[float, float]]) -> Ranges:
    out: list[list[float]] = []
    for start, end in sorted(ranges):
        if out and start <= out[-1][1]:
            out[-1][1] = max(out[-1][1], end)
        else:
            out.append([start, end])
    return tuple((s, e) for s, e in out)


def _geometry(ranges: Ranges, scope: tuple[Any, ...]) -> Geometry:
    return Geometry(INTERVAL, tuple(v for pair in ranges for v in pair), (ranges[0][0], ranges[-1][1]), ranges, scope)


def interval(value: Mapping[str, Any], result: Mapping[str, Any], scope: tuple[Any, ...],
             options: MappingOptions) -> Geometry | None:
    """An interval's geometry from ``start`` and ``end`` (numbers or dates), or None when malformed."""
    start, end = _moment(value.get("start")), _moment(value.get("end"))
    if start is None or end is None or end < start:
        return None
    channel = value.get("channel")
    return _geometry(((start, end),), (*scope, channel) if channel is not None else scope)


def timeline(value: Mapping[str, Any], result: Mapping[str, Any], scope: tuple[Any, ...],
             options: MappingOptions) -> Geometry | None:
    """A timeline region's geometry from its frame ``ranges`` (end frame included), or None when malformed."""
    ranges = value.get("ranges")
    if not isinstance(ranges, list) or not ranges:
        return None
    parts = []
    for entry in ranges:
        extent = positions(entry, ("start", "end")) if isinstance(entry, Mapping) else None
        if extent is None or extent[1] < extent[0]:
            return None
        parts.append((extent[0], extent[1] + 1))
    return _geometry(_merged(parts), scope)
