"""Distinct values and distinct rows of several columns, by hashing rather than sorting every value.

``np.unique(values, return_inverse=True)`` sorts all ``n`` values; on a
project's spans (millions of positions that take a few hundred distinct
values) that sort is the largest single cost of the span measures, and it
grows faster than ``n`` once the arrays leave the cache. Hashing finds the
distinct values in O(n), and only those are sorted.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd
from numpy.typing import ArrayLike, NDArray

__all__ = ["duplicated_rows", "narrowest", "narrowest_type", "row_codes", "unique_counts", "unique_inverse"]

_WHOLE_FLOATS = 2.0**53
"""Floats below this in size are whole numbers exactly when they equal their truncation, and fit an int64."""

_DIRECT_RANGE = 2**31
"""Integer columns whose values span less than this are coded by their offset from the smallest, without hashing."""


def narrowest(codes: ArrayLike, bound: int) -> NDArray[np.signedinteger]:
    """Codes from 0 to below ``bound`` copied into the narrowest of int16, int32 and int64 that holds them.

    A project's full scoring holds every control's codes at once: a million tasks' label sets are tens of millions
    of rows, and a span project's matched pairs as many.

    >>> narrowest(np.array([3, 7]), 8).dtype, narrowest(np.array([3, 70_000]), 70_001).dtype
    (dtype('int16'), dtype('int32'))
    """
    return np.ascontiguousarray(codes, dtype=narrowest_type(bound))


def narrowest_type(bound: int) -> type[np.signedinteger]:
    """The narrowest of int16, int32 and int64 that holds the codes from -1 to below ``bound``."""
    return np.int16 if bound <= 2**15 else np.int32 if bound <= 2**31 else np.int64


def unique_inverse(values: NDArray[np.generic], *, counts: bool = False, sort: bool = True
                   ) -> tuple[NDArray[np.generic], NDArray[np.intp]] | tuple[NDArray[np.generic], NDArray[np.intp],
                                                                               NDArray[np.intp]]:
    """The sorted distinct values of a 1-d array and each value's index among them.

    With ``counts``, how often each occurs: what ``np.unique(values, return_inverse=True, return_counts=counts)``
    returns. Objects must be hashable (and comparable, to be sorted).

    The distinct values are found by hashing (:func:`pandas.factorize`),
    O(n), and only they are sorted; with ``sort=False`` they are not, and
    come in the order first seen (for counting, where the order is
    irrelevant). As in :func:`numpy.unique`, ``-0.0`` equals ``0.0`` and every
    NaN is one value, sorted last.

    Examples
    --------
    >>> uniques, inverse = unique_inverse(np.array([3.0, 1.0, 3.0, -0.0, 0.0]))
    >>> uniques.tolist(), inverse.tolist()
    ([0.0, 1.0, 3.0], [2, 1, 2, 0, 0])
    """
    values = np.asarray(values)
    if sort and _small_range(values):  # whole numbers close together: a table over their range, no hashing or sort
        distinct, seen, offset = _tabled(values)
        present = seen > 0
        inverse = (np.cumsum(present) - 1)[offset]
        return (distinct, inverse) if not counts else (distinct, inverse, seen[present])
    if values.dtype.kind == "f":
        values = values + 0.0  # -0.0 becomes 0.0, which numpy's comparisons already hold equal
    codes, distinct = pd.factorize(values, use_na_sentinel=False)
    distinct = np.asarray(distinct, dtype=values.dtype)
    if not sort:
        codes = codes.astype(np.intp, copy=False)
        return (distinct, codes) if not counts else (distinct, codes, np.bincount(codes, minlength=len(distinct)))
    order = np.argsort(distinct, kind="stable")
    place = np.empty(len(order), dtype=np.intp)
    place[order] = np.arange(len(order))
    inverse = place[codes]
    if not counts:
        return distinct[order], inverse
    return distinct[order], inverse, np.bincount(inverse, minlength=len(order))


def _small_range(values: NDArray[np.generic]) -> bool:
    """Whether ``values`` are whole numbers spanning at most about as many as there are of them.

    Whole numbers: integers of at most 32 bits or int64, or floats that are whole. A table over their range is then no
    larger than the values.
    """
    kind, size = values.dtype.kind, values.dtype.itemsize
    if not len(values) or not (kind in "bif" or (kind == "u" and size < 8)):
        return False
    low, high = values.min(), values.max()
    if kind == "f" and not (-_WHOLE_FLOATS < low and high < _WHOLE_FLOATS
                            and bool((values == np.trunc(values)).all())):
        return False  # text offsets and frames are whole; times, NaN and huge values are hashed
    return int(high) - int(low) <= max(2 * len(values), 1 << 16)


def _tabled(values: NDArray[np.generic]) -> tuple[NDArray[np.generic], NDArray[np.intp], NDArray[np.intp]]:
    """Whole numbers close together (:func:`_small_range`) tabled over their range.

    Returns the distinct values in order, how often each value of the range occurs, and each value's place in the range.
    """
    low = int(values.min())  # (-0.0 is 0 here, as numpy holds it equal to 0.0)
    offset = (values.astype(np.int64, copy=False) - low).astype(np.intp, copy=False)  # one copy, not three
    seen = np.bincount(offset)
    return (np.flatnonzero(seen) + low).astype(values.dtype), seen, offset


def unique_counts(values: NDArray[np.integer]) -> tuple[NDArray[np.integer], NDArray[np.intp]]:
    """The sorted distinct values of a 1-d array of integer codes and how often each occurs.

    What ``np.unique(values, return_counts=True)`` returns, by a stable sort.

    A stable sort merges the runs already in order (numpy's timsort, or its
    radix sort for small integers), so codes that come grouped and nearly
    sorted (item codes in task order, a label code inside each) cost about one
    pass, where :func:`numpy.unique` sorts them from scratch.

    Examples
    --------
    >>> distinct, counts = unique_counts(np.array([10, 11, 11, 20, 12, 30]))
    >>> distinct.tolist(), counts.tolist()
    ([10, 11, 12, 20, 30], [1, 2, 1, 1, 1])
    """
    values = np.asarray(values).reshape(-1)
    if _small_range(values):  # close together: counted over their range
        distinct, seen, _ = _tabled(values)
        return distinct, seen[seen > 0]
    ordered = np.sort(values, kind="stable")
    if not len(ordered):
        return ordered, np.zeros(0, dtype=np.intp)
    heads = np.flatnonzero(np.r_[True, ordered[1:] != ordered[:-1]])
    return ordered[heads], np.diff(np.r_[heads, len(ordered)])


def _coded(column: pd.Series | NDArray[np.generic]) -> tuple[NDArray[np.int64], int]:
    """A column's values as codes ``0 .. size - 1`` (equal values, equal codes) and ``size``.

    A categorical's own codes (no value read), whole numbers their offsets from the smallest, any other column's
    distinct values found by hashing.
    """
    if isinstance(column, pd.Series) and isinstance(column.dtype, pd.CategoricalDtype):
        return column.cat.codes.to_numpy().astype(np.int64) + 1, len(column.cat.categories) + 1  # NaN: -1 + 1
    values = np.asarray(column)
    if len(values) and (values.dtype.kind in "bi" or (values.dtype.kind == "u" and values.dtype.itemsize < 8)):
        # whole numbers in a range that fits: their offsets from the smallest, no hashing
        low, high = int(values.min()), int(values.max())
        if high - low < _DIRECT_RANGE:
            return values.astype(np.int64) - low, high - low + 1
    distinct, code = unique_inverse(values, sort=False)
    return code.astype(np.int64), max(len(distinct), 1)


def _row_keys(columns: Sequence[pd.Series | NDArray[np.generic]]) -> NDArray[np.int64]:
    """One int64 per row, equal exactly when the rows are.

    The columns' codes combined, re-coded densely whenever the next column's combinations would not fit an int64.
    """
    if not columns:
        raise ValueError("Rows need at least one column.")
    key = np.zeros(len(columns[0]), dtype=np.int64)
    room = 1
    for column in columns:
        if len(column) != len(key):
            raise ValueError(f"The columns differ in length ({len(column)} against {len(key)}).")
        code, size = _coded(column)
        if room * size >= 2**62:  # the combinations so far, re-coded densely: at most as many as rows
            seen, key = unique_inverse(key, sort=False)
            key = key.astype(np.int64)
            room = max(len(seen), 1)
        key = key * size + code
        room *= size
    return key


def row_codes(columns: Sequence[pd.Series | NDArray[np.generic]]) -> NDArray[np.intp]:
    """A code per row of several equally long columns, equal rows getting equal codes.

    Rows are equal when every column is, as :func:`unique_inverse` holds values equal; codes are numbered in the order
    first seen.

    Each column's distinct values are found by hashing (a categorical
    column's codes are used as they are) and the row's codes combined into
    one integer: O(rows x columns), no sort.

    Examples
    --------
    >>> row_codes([np.array([1, 2, 1, 1]), np.array([0.5, 0.5, 0.5, -0.0]), np.array(["a", "b", "a", "a"], object)]
    ...           ).tolist()
    [0, 1, 0, 2]
    """
    return unique_inverse(_row_keys(columns), sort=False)[1]


def duplicated_rows(columns: Sequence[pd.Series | NDArray[np.generic]]) -> NDArray[np.bool_]:
    """Which rows repeat an earlier row of ``columns``: what ``DataFrame.duplicated()`` gives.

    Rows are keyed as in :func:`row_codes`; that no key repeats (the usual
    answer: one label per annotator and item) is seen from the sorted keys,
    and only when some does are the repeats found.

    Examples
    --------
    >>> duplicated_rows([pd.Series(["a", "b", "a", "a"], dtype="category"), np.array([1, 1, 1, 2])]).tolist()
    [False, False, True, False]
    """
    key = _row_keys(columns)
    ordered = np.sort(key)
    if not (ordered[1:] == ordered[:-1]).any():
        return np.zeros(len(key), dtype=bool)
    codes = unique_inverse(key, sort=False)[1]
    # codes are numbered as first seen: a row is new exactly when its code passes every code before it
    seen = np.maximum.accumulate(codes)
    return ~np.r_[True, codes[1:] > seen[:-1]]
