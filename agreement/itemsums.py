"""Item-weighted sums: the one computation behind every item-level measure.

SPA, Krippendorff's alpha, Fleiss' kappa and the augmented kappa are all
functions of sums over items. Each is written as a *batch* function of a row
matrix ``x`` (shape ``(n_rows, width)``) and item weights ``w`` (shape
``(n_batches, n_rows)``): the point estimate uses one batch of unit weights,
and the bootstrap uses many batches of multinomial resampling counts over the
distinct rows. One code path therefore serves both.

Rows are visited in blocks of :data:`BLOCK_ROWS`, so every temporary fits in
the processor's cache and the count matrix is read from memory about once:
O(items x categories) memory, no per-item Python loop.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import NamedTuple

import numpy as np
from numpy.typing import NDArray

from agreement.uniques import row_codes

__all__ = [
    "BLOCK_ROWS",
    "RowBlock",
    "bytes_order",
    "compress_rows",
    "item_agreement_terms",
    "n_batches",
    "pairable_inverse",
    "row_blocks",
    "row_sums",
    "unit_weights",
]

BLOCK_ROWS = 16_384
NOT_FINITE = "Counts must be finite numbers; some are NaN or infinite."
NEGATIVE = "Counts must not be negative."


class RowBlock(NamedTuple):
    """One block of rows with the per-row sums every measure needs.

    Attributes
    ----------
    x : ndarray, with shape (m, width)
        The block's rows.
    w : ndarray, with shape (B, m)
        The block's item weights.
    n : ndarray, with shape (m,)
        Row totals: annotations per item.
    q : ndarray, with shape (m,)
        Row sums of squares (empty unless asked for).
    moments : ndarray, with shape (1 + K, m)
        ``[1 | project].T @ x.T``: row totals, then one row per projection
        (only ``n`` unless ``project`` is given). Rows are contiguous.
    """

    x: NDArray[np.float64]
    w: NDArray[np.float64]
    n: NDArray[np.float64]
    q: NDArray[np.float64]
    moments: NDArray[np.float64]


def n_batches(w: NDArray[np.float64] | None) -> int:
    """Number of weight batches; ``None`` stands for one batch of unit weights."""
    return 1 if w is None else int(w.shape[0])


def unit_weights(n_rows: int) -> NDArray[np.float64]:
    """One batch of unit weights, shape ``(1, n_rows)``: every item counted once."""
    return np.ones((1, n_rows))


def row_blocks(
    x: NDArray[np.float64],
    w: NDArray[np.float64] | None = None,
    *,
    squares: bool = False,
    project: NDArray[np.float64] | None = None,
) -> Iterator[RowBlock]:
    """Blocks of rows of ``x`` with their weights, totals and the sums asked for.

    Parameters
    ----------
    x : ndarray, with shape (n_rows, width)
    w : ndarray, with shape (B, n_rows), optional
        Item weights; None for one batch of unit weights.
    squares : bool
        Also give each row's sum of squares.
    project : ndarray, with shape (width, K), optional
        Also give ``x @ project`` (as rows of ``moments``), in the same pass as the totals.

    Raises
    ------
    ValueError
        If the counts hold NaN, infinity or negative numbers (checked per
        block, while it is in cache).
    """
    width = x.shape[1]
    rows = max(64, BLOCK_ROWS // n_batches(w))
    ones = np.ones(width)
    columns = None if project is None else np.vstack([ones, np.asarray(project).T])
    squared = np.empty((min(rows, x.shape[0]), width)) if squares else None
    unit = np.ones((1, min(rows, x.shape[0])))
    empty = np.zeros((0, 0))
    convert = x.dtype != np.float64
    buffer = np.empty((min(rows, x.shape[0]), width)) if convert else None
    for start in range(0, x.shape[0], rows):
        block = x[start:start + rows]
        m = block.shape[0]
        if buffer is not None:  # integer counts: one cache-sized block converted at a time, never the whole matrix
            np.copyto(buffer[:m], block, casting="unsafe")
            block = buffer[:m]  # reused by the next block: consumers use a block before asking for the next
        if columns is None:
            n = block @ ones
            moments = n[None, :]
        else:
            moments = columns @ block.T
            n = moments[0]
        lowest = block.min() if m else 0.0
        if not (lowest >= 0 and np.isfinite(n.sum())):
            raise ValueError(NEGATIVE if lowest < 0 else NOT_FINITE)
        q = np.multiply(block, block, out=squared[:m]) @ ones if squared is not None else empty
        weights = unit[:, :m] if w is None else w[:, start:start + rows]
        yield RowBlock(block, weights, n, q, moments)


def row_sums(x: NDArray[np.float64]) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """Row totals ``n_i`` and row sums of squares ``q_i`` of the whole matrix, shape ``(n_rows,)`` each."""
    parts = [(block.n, block.q.copy()) for block in row_blocks(x, squares=True)]
    if not parts:
        return np.zeros(0), np.zeros(0)
    return np.concatenate([n for n, _ in parts]), np.concatenate([q for _, q in parts])


def pairable_inverse(n: NDArray[np.float64]) -> NDArray[np.float64]:
    """``1 / (n_i - 1)`` for items with two or more annotations, 0 for the others."""
    return np.divide(1.0, n - 1.0, out=np.zeros_like(n), where=n >= 2)


def item_agreement_terms(n: NDArray[np.float64], q: NDArray[np.float64]) -> NDArray[np.float64]:
    """Per-item agreement ``(q_i - n_i) / (n_i (n_i - 1))`` (seed 004, eq. 1), for rows with ``n_i >= 2``.

    Rows with fewer annotations get a finite value (0 for whole counts) that
    callers weight by zero or mask.
    """
    return (q - n) / np.maximum(n * (n - 1.0), 2.0)


def compress_rows(x: NDArray[np.float64]) -> tuple[NDArray[np.float64], NDArray[np.int64]]:
    """Distinct rows of ``x`` and how often each occurs.

    Count matrices repeat themselves (3 annotations over 5 categories allow
    only 35 distinct rows), so resampling the distinct rows with multinomial
    counts equals resampling the items, at a fraction of the cost.

    Returns
    -------
    rows : ndarray, with shape (U, width)
    multiplicity : ndarray, with shape (U,)
    """
    if x.shape[0] == 0:
        return x, np.zeros(0, dtype=np.int64)
    contiguous = np.ascontiguousarray(x) + 0.0  # + 0.0 turns -0.0 into 0.0, so equal rows have equal bytes
    if contiguous.shape[1] == 0:
        return contiguous[:1], np.array([contiguous.shape[0]], dtype=np.int64)
    # The distinct rows found by hashing their columns (agreement.uniques.row_codes), O(items); only they are
    # sorted by their bytes, the order np.unique on every row's bytes (a sort of every row) gives them.
    code = row_codes(list(contiguous.T))
    multiplicity = np.bincount(code)
    some = np.empty(len(multiplicity), dtype=np.intp)
    some[code] = np.arange(len(code))  # a row of each code (they are equal)
    rows = contiguous[some]
    order = bytes_order(rows)
    return rows[order], multiplicity[order].astype(np.int64)


def bytes_order(rows: NDArray[np.float64]) -> NDArray[np.intp]:
    """The order :func:`compress_rows` gives distinct rows: by their bytes.

    As :func:`numpy.unique` sorts them.
    """
    contiguous = np.ascontiguousarray(rows)
    if contiguous.shape[0] == 0 or contiguous.shape[1] == 0:
        return np.arange(contiguous.shape[0])
    row_bytes = np.dtype((np.void, contiguous.dtype.itemsize * contiguous.shape[1]))
    return np.unique(contiguous.view(row_bytes).ravel(), return_index=True)[1]
