"""Index arithmetic for ragged groups: runs of positions, pairs within runs, blocks of groups.

Runs of consecutive positions, concatenated: how ragged groups (a continuum's units, a task's rows) are indexed end to
end without a Python loop over the groups; the pairs within each run of equal keys (an item's annotators, two by two);
and groups cut into blocks of bounded size (a large project scored a block at a time).
"""

from __future__ import annotations

import numpy as np
from numpy.typing import NDArray

__all__ = ["block_edges", "ranges", "run_pairs"]


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


def run_pairs(keys: NDArray[np.generic]) -> tuple[NDArray[np.intp], NDArray[np.intp]]:
    """Every two places ``i < j`` within one run of equal ``keys``.

    Equal keys stand side by side (sorted keys, say): a run of ``k`` gives ``k (k - 1) / 2`` pairs, in order of
    ``j - i``, then of ``i``.

    Places ``d`` apart with equal keys, for ``d`` up to the longest run: O(n x the longest run), and no Python loop
    per run (an item's annotators two by two, for every item at once).

    Examples
    --------
    >>> first, second = run_pairs(np.array([4, 4, 4, 7, 9, 9]))
    >>> first.tolist(), second.tolist()
    ([0, 1, 4, 0], [1, 2, 5, 2])
    """
    keys = np.asarray(keys)
    if len(keys) < 2:
        return np.zeros(0, dtype=np.intp), np.zeros(0, dtype=np.intp)
    heads = np.flatnonzero(np.r_[True, keys[1:] != keys[:-1]])
    widest = int(np.diff(np.r_[heads, len(keys)]).max())
    gaps = [np.flatnonzero(keys[gap:] == keys[:-gap]) for gap in range(1, widest)]
    first = np.concatenate([np.zeros(0, dtype=np.intp), *gaps]).astype(np.intp)
    second = np.concatenate([np.zeros(0, dtype=np.intp), *(at + gap for gap, at in enumerate(gaps, 1))]).astype(np.intp)
    return first, second


def block_edges(sizes: NDArray[np.integer], *, at_most: int) -> list[int]:
    """Where to cut consecutive groups of ``sizes`` into blocks of at most ``at_most`` in all.

    The edges ``0 = e_0 < e_1 < ... = len(sizes)``, block ``k`` the groups ``e_k .. e_(k+1) - 1``. A group larger than
    ``at_most`` is a block of its own; no group is cut, and no block is empty.

    Examples
    --------
    >>> block_edges(np.array([3, 3, 3, 9, 1]), at_most=6)
    [0, 2, 3, 4, 5]
    >>> block_edges(np.array([3, 3]), at_most=6), block_edges(np.array([], dtype=int), at_most=6)
    ([0, 2], [0])
    """
    sizes = np.asarray(sizes, dtype=np.int64)
    edges, n = [0], len(sizes)
    through = np.cumsum(sizes)
    while edges[-1] < n:  # one step a block: a project's few blocks, each found by a binary search
        done = int(through[edges[-1] - 1]) if edges[-1] else 0
        edges.append(max(int(np.searchsorted(through, done + at_most, side="right")), edges[-1] + 1))
    return edges
