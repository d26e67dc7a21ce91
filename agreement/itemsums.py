"""Item-weighted sums: the one computation behind every item-level measure.

SPA, Krippendorff's alpha, Fleiss' kappa and the augmented kappa are all
functions of sums over items. Each is written as a *batch* function of a row
matrix ``x`` (shape ``(n_rows, width)``) and item weights ``w`` (shape
``(n_batches, n_rows)``): the point estimate uses one batch of unit weights,
and the bootstrap uses many batches of multinomial resampling counts over the
distinct rows. One code path therefore serves both.

Rows are visited in blocks of :data:`BLOCK_ROWS` (fewer for wide matrices, of
:data:`BLOCK_CELLS` cells), so every temporary fits in the processor's
cache and the count matrix is read from memory about once: O(items x
categories) memory, no per-item Python loop.

The sums over a block are numpy's own loops, not BLAS: a block's columns are
copied into one buffer, each contiguous, where a row total is a sum of
columns, and one batch of item weights is applied by :func:`weighted_sum` (a
product and numpy's pairwise sum). These products are too thin for BLAS's
threads to help, and on a machine whose cores are busy each threaded BLAS call
waits for its threads to be scheduled: alpha on a million items took 0.3 to
0.5 s there with BLAS's threads, against 15 to 50 ms without BLAS.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import NamedTuple

import numpy as np
from numpy.typing import NDArray

from agreement.uniques import row_codes

__all__ = [
    "BLOCK_CELLS",
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
    "weighted_sum",
]

BLOCK_ROWS = 16_384
BLOCK_CELLS = 131_072
"""The most cells of a block (1 MiB of float64): wide count matrices (free text) get fewer rows per block."""
NOT_FINITE = "Counts must be finite numbers; some are NaN or infinite."
NEGATIVE = "Counts must not be negative."


class RowBlock(NamedTuple):
    """One block of rows with the per-row sums every measure needs.

    Attributes
    ----------
    x : ndarray, with shape (m, width)
        The block's rows: a view of a buffer holding its columns, each
        contiguous (``x.T`` is C-contiguous), reused by the next block.
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
    rows = max(64, min(BLOCK_ROWS, BLOCK_CELLS // max(width, 1)) // n_batches(w))
    size = min(rows, x.shape[0])
    buffer = np.empty((width, size))  # the block's columns, each contiguous: also converts integer counts
    columns = None if project is None else np.vstack([np.ones(width), np.asarray(project, dtype=np.float64).T])
    unit = np.ones((1, size))
    empty = np.zeros((0, 0))
    for start in range(0, x.shape[0], rows):
        m = min(rows, x.shape[0] - start)
        transposed = buffer[:, :m]  # reused by the next block: consumers use a block before asking for the next
        np.copyto(transposed, x[start:start + m].T, casting="unsafe")
        if columns is None:
            n = np.add.reduce(transposed, axis=0)
            moments = n[None, :]
        else:
            moments = np.einsum("kj,ji->ki", columns, transposed)
            n = moments[0]
        lowest = transposed.min() if m else 0.0
        if not (lowest >= 0 and np.isfinite(n.sum())):
            raise ValueError(NEGATIVE if lowest < 0 else NOT_FINITE)
        q = np.einsum("ji,ji->i", transposed, transposed) if squares else empty
        weights = unit[:, :m] if w is None else w[:, start:start + rows]
        yield RowBlock(transposed.T, weights, n, q, moments)


def weighted_sum(w: NDArray[np.float64], values: NDArray[np.float64]) -> NDArray[np.float64]:
    """The weighted sums of a block's per-row values, for each batch of weights.

    The same as ``w @ values``.

    Parameters
    ----------
    w : ndarray, with shape (B, m)
    values : ndarray, with shape (m,) or (m, k)

    Returns
    -------
    ndarray, with shape (B,) or (B, k)

    One batch (every point estimate) is summed by numpy's pairwise summation, without BLAS (see the module's
    note), along ``values.T``'s rows (contiguous for a block's ``x`` and ``moments.T``); many batches (the
    bootstrap's resamples) make a matrix product, which BLAS is for.
    """
    if w.shape[0] != 1:
        return w @ values
    return np.add.reduce(values.T * w[0], axis=-1)[None, ...]


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
    """Per-item agreement ``(q_i - n_i) / (n_i (n_i - 1))``, for rows with ``n_i >= 2``.

    Nørregaard & Derczynski 2022, eq. 1. Rows with fewer annotations get a finite value (0 for whole counts) that
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
