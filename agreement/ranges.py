"""Runs of consecutive positions, concatenated: how ragged groups (a continuum's units, a task's rows) are indexed
end to end without a Python loop over the groups."""

from __future__ import annotations

import numpy as np
from numpy.typing import NDArray

__all__ = ["ranges"]


def ranges(starts: NDArray[np.integer], lengths: NDArray[np.integer]) -> NDArray[np.intp]:
    """The positions ``starts[i] .. starts[i] + lengths[i] - 1`` of every ``i``, concatenated.

    Examples
    --------
    >>> ranges(np.array([5, 0]), np.array([2, 3])).tolist()
    [5, 6, 0, 1, 2]
    """
    lengths = np.asarray(lengths, dtype=np.intp)
    total = int(lengths.sum())
    offsets = np.repeat(np.cumsum(lengths) - lengths, lengths)
    return np.repeat(np.asarray(starts, dtype=np.intp), lengths) + (np.arange(total) - offsets)
