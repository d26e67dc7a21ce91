"""The time as this project writes it: ISO 8601, in UTC."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Literal

__all__ = ["now_iso", "now_text"]


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
