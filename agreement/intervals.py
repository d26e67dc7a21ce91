"""Intervals on continua: which overlap, and the union of overlapping ones.

Both are found from the intervals sorted, never compared all to all.

The span measures (pairwise F1, unitizing alpha) need every pair of
intervals, of different annotators in one group (a continuum, or a continuum
and a label), whose intersection has positive length. Sorting the intervals
by (group, start) and merging the starts with the ends finds, for each
interval, the run of intervals after it that start before it ends: the cost is
O(n log n + pairs), where comparing all to all would be O(n^2).
"""

from __future__ import annotations

import numpy as np
import pandas as pd
from numpy.typing import NDArray

from agreement.uniques import unique_inverse

__all__ = ["merge_overlaps", "overlapping_pairs"]


def overlapping_pairs(group: NDArray[np.int64], owner: NDArray[np.intp], start: NDArray[np.float64],
                      end: NDArray[np.float64]) -> tuple[NDArray[np.intp], NDArray[np.intp], NDArray[np.float64]]:
    """Every pair of intervals of one group, of different owners, whose intersection is longer than 0.

    Parameters
    ----------
    group, owner : ndarray of int, with shape (n,)
        The group (e.g. continuum and label) and the owner (annotator) of each interval.
    start, end : ndarray of float, with shape (n,)
        The intervals ``[start, end)``.

    Returns
    -------
    first, second : ndarray of int
        Indices of the two intervals of each pair (each pair once, in no particular orientation).
    intersection : ndarray of float
        The length of their intersection.

    Examples
    --------
    >>> first, second, inter = overlapping_pairs(np.zeros(3, np.int64), np.array([0, 1, 1]),
    ...                                          np.array([0., 4., 10.]), np.array([5., 8., 12.]))
    >>> first.tolist(), second.tolist(), inter.tolist()
    ([0], [1], [1.0])
    """
    n = len(group)
    if n == 0:
        empty = np.zeros(0, dtype=np.intp)
        return empty, empty, np.zeros(0)
    # positions as ranks among all starts and ends (exact), so (group, position) is one integer key
    values, rank = unique_inverse(np.concatenate([start, end]))
    span = np.int64(len(values))
    key = group.astype(np.int64) * span + rank[:n]
    order = np.argsort(key, kind="stable")
    # the sorted intervals before the first of its group that starts at or after an interval's end
    hi = np.searchsorted(key[order], group[order].astype(np.int64) * span + rank[n:][order])
    width = np.maximum(hi - np.arange(1, n + 1), 0)
    first = np.repeat(np.arange(n), width)
    second = first + 1 + np.arange(width.sum()) - np.repeat(np.cumsum(width) - width, width)
    first, second = order[first], order[second]
    keep = owner[first] != owner[second]
    first, second = first[keep], second[keep]
    inter = np.minimum(end[first], end[second]) - np.maximum(start[first], start[second])
    keep = inter > 0
    return first[keep].astype(np.intp), second[keep].astype(np.intp), inter[keep]


def merge_overlaps(group: NDArray[np.int64], start: NDArray[np.float64],
                   end: NDArray[np.float64]) -> tuple[NDArray[np.int64], NDArray[np.float64], NDArray[np.float64]]:
    """The union of each group's intervals as disjoint intervals; intervals that only touch stay apart.

    Returns
    -------
    group, start, end : ndarray
        The merged intervals, sorted by (group, start).

    Examples
    --------
    >>> g, s, e = merge_overlaps(np.zeros(3, np.int64), np.array([0., 3., 5.]), np.array([4., 5., 6.]))
    >>> s.tolist(), e.tolist()
    ([0.0, 5.0], [5.0, 6.0])
    """
    if len(group) == 0:
        return group.astype(np.int64), start.astype(float), end.astype(float)
    order = np.lexsort((start, group))
    g, s, e = group[order], start[order], end[order]
    new_group = np.r_[True, g[1:] != g[:-1]]
    # how far each group's intervals so far reach: a running maximum within the group (exact, no offsets)
    reach = pd.Series(e).groupby(np.cumsum(new_group)).cummax().to_numpy()
    opens = new_group.copy()
    opens[1:] |= s[1:] >= reach[:-1]
    ids = np.cumsum(opens) - 1
    out_end = np.full(ids[-1] + 1, -np.inf)
    np.maximum.at(out_end, ids, e)
    return g[opens], s[opens], out_end
