"""How a measure says that it is undefined for the data it was given.

A coefficient that cannot be computed (no pairable items, zero expected
disagreement, no information in the ratings) returns ``nan`` and emits an
:class:`UndefinedMeasureWarning` whose message says why. It never returns a
silent 0 or 1 and never raises for such data.
"""

from __future__ import annotations

import warnings

__all__ = ["UndefinedMeasureWarning", "warn_undefined"]


class UndefinedMeasureWarning(UserWarning):
    """A measure is undefined for the given data and was returned as NaN."""


def warn_undefined(measure: str, reason: str) -> float:
    """Emit an :class:`UndefinedMeasureWarning` and return ``nan``.

    Parameters
    ----------
    measure : str
        The measure's name as a reader knows it, e.g. ``"Krippendorff's alpha"``.
    reason : str
        Why it is undefined, as the end of a sentence.

    Returns
    -------
    float
        ``nan``, so that callers can write ``return warn_undefined(...)``.
    """
    warnings.warn(f"{measure} is undefined: {reason}.", UndefinedMeasureWarning, stacklevel=3)
    return float("nan")
