"""The time as this project writes it: ISO 8601, in UTC."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Literal

__all__ = ["now_iso"]


def now_iso(*, timespec: Literal["seconds", "milliseconds"] = "seconds") -> str:
    """Now, in UTC, as ISO 8601 text (a block's ``updated_at``; an event's time with milliseconds).

    >>> len(now_iso()), now_iso().endswith("+00:00")
    (25, True)
    >>> len(now_iso(timespec="milliseconds"))
    29
    """
    return datetime.now(UTC).isoformat(timespec=timespec)
