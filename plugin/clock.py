"""The time as this project writes it: ISO 8601, in UTC."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any, Literal

__all__ = ["now_iso", "now_text", "parse_time"]


def now_iso(*, timespec: Literal["seconds", "milliseconds"] = "seconds") -> str:
    """Now, in UTC, as ISO 8601 text (a block's ``updated_at``; an event's time with milliseconds).

    >>> len(now_iso()), now_iso().endswith("+00:00")
    (25, True)
    >>> len(now_iso(timespec="milliseconds"))
    29
    """
    return datetime.now(UTC).isoformat(timespec=timespec)


def now_text() -> str:
    """Now, in UTC, to the minute, as a page's header says it ("2026-01-05 09:00 UTC").

    >>> len(now_text()), now_text().endswith(" UTC")
    (20, True)
    """
    return datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC")


def parse_time(value: Any) -> datetime | None:
    """A time Label Studio wrote (ISO 8601; ``Z`` or an offset, none meaning UTC), or None when unreadable.

    >>> parse_time("2026-11-24T10:00:01.5Z"), parse_time("soon")
    (datetime.datetime(2026, 11, 24, 10, 0, 1, 500000, tzinfo=datetime.timezone.utc), None)
    """
    if not isinstance(value, str) or not value:
        return None
    try:
        moment = datetime.fromisoformat(value)
    except ValueError:
        return None
    return moment if moment.tzinfo is not None else moment.replace(tzinfo=UTC)
