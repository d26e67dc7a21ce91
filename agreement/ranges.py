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
    >>> ranges(np.array([5, 0, 9]), np.array([2, 3, 0])).tolist()
    [5, 6, 0, 1, 2]
    """
    lengths = np.asarray(lengths, dtype=np.intp)
    starts = np.asarray(starts, dtype=np.intp)
    used = lengths > 0
    if not used.all():
        starts, lengths = starts[used], lengths[used]
    if not len(lengths):
        return np.zeros(0, dtype=np.intp)
    # steps of 1, and at each run's head the jump from the last run's end: one cumulative sum (two repeats and an
    # arange of the total length cost twice as much on the millions of positions a project's rows take)
    steps = np.ones(int(lengths.sum()), dtype=np.intp)
    heads = np.cumsum(lengths[:-1])
    steps[0] = starts[0]
    steps[heads] = starts[1:] - (starts[:-1] + lengths[:-1] - 1)
    return np.cumsum(steps, out=steps)
