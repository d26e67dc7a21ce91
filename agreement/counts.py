"""The data every measure starts from: per-item label counts and two-rater tables.

Two shapes of data run through the package:

* a **count matrix** of shape ``(n_items, n_categories)``: entry ``[i, c]`` is how
  many annotators put item ``i`` into category ``c`` (float, so that the
  fractional weights of the augmented kappa fit). SPA, Krippendorff's alpha and
  Fleiss' kappa take it. Memory is O(items x categories).
* a **contingency table** of shape ``(n_categories, n_categories)`` for two
  annotators: entry ``[c, k]`` is how many items the first put in ``c`` and the
  second in ``k``. Cohen's kappa, Scott's pi, PABAK and P_I take it.

The converters here turn the long format (one row per annotation: item,
annotator, label) and the wide format (items x annotators) into these shapes.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import NamedTuple

import numpy as np
import pandas as pd
from numpy.typing import ArrayLike, DTypeLike, NDArray

from agreement.uniques import duplicated_rows, unique_counts

__all__ = [
    "WIDE_CELLS",
    "LabelCounts",
    "SparseCounts",
    "aggregate_raters",
    "as_contingency_table",
    "as_count_matrix",
    "code_labels",
    "contingency_table",
    "count_matrix",
    "label_counts",
    "require_columns",
    "shown",
    "sparse_counts",
]

WIDE_CELLS = 20_000_000
"""Items x categories above which a nominal control's measures are computed from :class:`SparseCounts` (a dense
count matrix of free text with a new answer on every item grows with the square of the project)."""


@dataclass(frozen=True)
class LabelCounts:
    """Per-item label counts with the names of their rows and columns.

    Attributes
    ----------
    counts : ndarray, with shape (n_items, n_categories)
        ``counts[i, c]`` is the (possibly fractional) number of annotations
        putting item ``i`` into category ``c``.
    items : pandas.Index
        The item of each row.
    categories : pandas.Index
        The category of each column.
    """

    counts: NDArray[np.float64]
    items: pd.Index
    categories: pd.Index

    def __post_init__(self) -> None:
        if self.counts.shape != (len(self.items), len(self.categories)):
            raise ValueError(
                f"The count matrix has shape {self.counts.shape}, but there are "
                f"{len(self.items)} items and {len(self.categories)} categories."
            )

    def __array__(self, dtype: DTypeLike | None = None, copy: bool | None = None) -> NDArray[np.float64]:
        return self.counts if dtype is None else self.counts.astype(dtype)

    @property
    def n_items(self) -> int:
        """Number of items (rows)."""
        return int(self.counts.shape[0])

    @property
    def n_annotations(self) -> float:
        """Total number of annotations (sum of all counts)."""
        return float(self.counts.sum())

    def numeric_values(self) -> NDArray[np.float64] | None:
        """The categories as numbers, or None when they are not all numeric."""
        values = pd.to_numeric(pd.Series(self.categories, dtype=object), errors="coerce")
        if values.isna().any():
            return None
        return values.to_numpy(dtype=np.float64)


def shown(value: object) -> str:
    """A value as a user wrote it, for error messages (``1``, not ``np.int64(1)``)."""
    return repr(value.item() if isinstance(value, np.generic) else value)


def require_columns(table: pd.DataFrame, columns: Sequence[str]) -> None:
    """Raise a one-sentence ValueError naming the columns ``table`` lacks."""
    missing = [c for c in columns if c not in table.columns]
    if missing:
        have = ", ".join(map(str, table.columns)) or "none"
        raise ValueError(
            f"The table has no column {', '.join(repr(m) for m in missing)}; its columns are: {have}."
        )


def code_labels(labels: pd.Series, categories: ArrayLike | None) -> tuple[NDArray[np.intp], pd.Index]:
    """Integer codes of ``labels`` in ``categories`` (the sorted distinct labels when not given).

    Raises a ValueError naming the labels outside ``categories``.
    """
    if categories is not None:
        cats = pd.Index(categories)
        if cats.has_duplicates:
            raise ValueError("The categories must be distinct; some are given twice.")
        codes = cats.get_indexer(labels)
        unknown = pd.unique(labels[codes < 0])
        if len(unknown):
            names = ", ".join(shown(u) for u in unknown[:5])
            more = f" and {len(unknown) - 5} more" if len(unknown) > 5 else ""
            raise ValueError(f"Labels outside the given categories: {names}{more}.")
        return codes.astype(np.intp), cats
    try:
        codes, cats = pd.factorize(labels, sort=True)
    except TypeError:
        codes, cats = pd.factorize(labels, sort=False)
    return codes.astype(np.intp), pd.Index(cats)


class SparseCounts(NamedTuple):
    """Per-item label counts of the non-zero cells only (CSR layout).

    Memory O(annotations), whatever the number of categories.

    Attributes
    ----------
    indptr : ndarray of intp, with shape (n_items + 1,)
        Item ``i`` holds ``columns[indptr[i]:indptr[i + 1]]`` and ``counts[...]``.
    columns : ndarray of intp
        Category codes, sorted within an item.
    counts : ndarray of float64
        Positive.
    n_categories : int
    """

    indptr: NDArray[np.intp]
    columns: NDArray[np.intp]
    counts: NDArray[np.float64]
    n_categories: int

    @property
    def n_items(self) -> int:
        """Items (each with at least one count)."""
        return len(self.indptr) - 1

    def totals(self) -> NDArray[np.float64]:
        """Each item's number of annotations."""
        return np.add.reduceat(self.counts, self.indptr[:-1]) if len(self.counts) else np.zeros(self.n_items)

    def packed(self) -> NDArray[np.float64]:
        """Each item's non-zero counts, left-aligned in a matrix as wide as the fullest item.

        What every nominal per-item measure reads (SPA and its bootstrap, alpha's observed disagreement), in O(items x
        annotators).
        """
        sizes = np.diff(self.indptr)
        matrix = np.zeros((self.n_items, int(sizes.max()) if self.n_items else 0))
        place = np.arange(len(self.counts)) - np.repeat(self.indptr[:-1], sizes)
        matrix[np.repeat(np.arange(self.n_items), sizes), place] = self.counts
        return matrix

    def dense(self) -> NDArray[np.float64]:
        """The count matrix, with shape (n_items, n_categories)."""
        matrix = np.zeros((self.n_items, self.n_categories))
        matrix[np.repeat(np.arange(self.n_items), np.diff(self.indptr)), self.columns] = self.counts
        return matrix


def sparse_counts(items: ArrayLike, labels: ArrayLike, *, n_categories: int | None = None,
                  n_items: int | None = None) -> SparseCounts:
    """The counts of each item's labels from one integer code pair per annotation, in one vectorized pass.

    Parameters
    ----------
    items, labels : array_like of int
        The item and the label (category) code of each annotation.
    n_categories, n_items : int, optional
        By default one more than the largest code; items without annotations are empty rows.

    Examples
    --------
    >>> c = sparse_counts([0, 0, 1, 0], [2, 2, 0, 1])
    >>> c.indptr.tolist(), c.columns.tolist(), c.counts.tolist()
    ([0, 2, 3], [1, 2, 0], [1.0, 2.0, 1.0])
    >>> c.dense().tolist()
    [[0.0, 1.0, 2.0], [1.0, 0.0, 0.0]]
    """
    item = np.asarray(items, dtype=np.int64).reshape(-1)
    label = np.asarray(labels, dtype=np.int64).reshape(-1)
    width = int(n_categories if n_categories is not None else (label.max() + 1 if len(label) else 0))
    size = int(n_items if n_items is not None else (item.max() + 1 if len(item) else 0))
    cells, counts = unique_counts(item * max(width, 1) + label)  # item-major codes: runs, merged
    owner = cells // max(width, 1)
    indptr = np.zeros(size + 1, dtype=np.intp)
    np.cumsum(np.bincount(owner, minlength=size), out=indptr[1:])
    return SparseCounts(indptr, (cells % max(width, 1)).astype(np.intp), counts.astype(np.float64), width)


def count_matrix(rows: NDArray[np.intp], cols: NDArray[np.intp], shape: tuple[int, int],
                 weights: NDArray[np.float64] | None = None) -> NDArray[np.float64]:
    """Dense ``shape`` matrix of summed (weighted) occurrences of (row, col) pairs.

    >>> count_matrix(np.array([0, 0, 1]), np.array([1, 1, 0]), (2, 2)).tolist()
    [[0.0, 2.0], [1.0, 0.0]]
    """
    flat = rows.astype(np.int64) * shape[1] + cols
    out = np.bincount(flat, weights=weights, minlength=shape[0] * shape[1])
    return out.astype(np.float64, copy=False).reshape(shape)


def label_counts(
    table: pd.DataFrame,
    *,
    item: str = "item",
    annotator: str = "annotator",
    label: str = "label",
    categories: ArrayLike | None = None,
) -> LabelCounts:
    """Turn a long table of annotations into per-item label counts.

    Parameters
    ----------
    table : pandas.DataFrame
        One row per annotation, with the columns named by ``item``,
        ``annotator`` and ``label``. Rows whose label is missing (NaN or None)
        are missing data and are left out.
    item, annotator, label : str
        Column names.
    categories : array_like, optional
        All categories, in column order. Labels outside them raise. By default
        the sorted distinct labels.

    Returns
    -------
    LabelCounts
        Items in order of first appearance.

    Raises
    ------
    ValueError
        If a column is missing, an item or annotator is missing, an annotator
        labeled an item more than once, or a label is outside ``categories``.

    Examples
    --------
    >>> t = pd.DataFrame({"item": [1, 1, 2], "annotator": ["a", "b", "a"], "label": ["x", "y", "x"]})
    >>> label_counts(t).counts
    array([[1., 1.],
           [1., 0.]])
    """
    require_columns(table, [item, annotator, label])
    if table[item].isna().any() or table[annotator].isna().any():
        raise ValueError("Every annotation needs an item and an annotator; some rows have neither.")
    labelled = table[label].notna().to_numpy()
    present = table if labelled.all() else table[labelled]  # a copy only when some label is missing
    duplicated = duplicated_rows([present[item], present[annotator]])
    if duplicated.any():
        first = present[[item, annotator]][duplicated].iloc[0]
        raise ValueError(
            f"Annotator {shown(first[annotator])} labeled item {shown(first[item])} more than once "
            f"({int(duplicated.sum())} repeated pairs); a count table takes one label per annotator and item."
        )
    item_codes, items = pd.factorize(table[item], sort=False)
    present_items = item_codes[labelled]
    cat_codes, cats = code_labels(present[label], categories)
    counts = count_matrix(present_items.astype(np.intp), cat_codes, (len(items), len(cats)))
    return LabelCounts(counts=counts, items=pd.Index(items), categories=cats)


def aggregate_raters(data: ArrayLike, *, categories: ArrayLike | None = None) -> LabelCounts:
    """Turn wide data (items x annotators, NaN where missing) into label counts.

    Parameters
    ----------
    data : array_like, with shape (n_items, n_annotators)
        ``data[i, j]`` is annotator ``j``'s label for item ``i``; NaN or None
        where annotator ``j`` did not label item ``i``.
    categories : array_like, optional
        All categories, in column order; by default the sorted distinct labels.

    Returns
    -------
    LabelCounts
        Items numbered ``0 .. n_items - 1``.
    """
    frame = pd.DataFrame(np.asarray(data, dtype=object))
    if frame.ndim != 2 or frame.shape[0] == 0:
        raise ValueError("The data must be a two-dimensional array of items by annotators.")
    long = frame.stack(future_stack=True).rename("label").reset_index()
    long.columns = ["item", "annotator", "label"]
    counts = label_counts(long, categories=categories)
    full = np.zeros((frame.shape[0], counts.counts.shape[1]))
    full[counts.items.to_numpy(dtype=np.intp)] = counts.counts
    return LabelCounts(counts=full, items=pd.RangeIndex(frame.shape[0]), categories=counts.categories)


def contingency_table(first: ArrayLike, second: ArrayLike, *, labels: ArrayLike | None = None) -> pd.DataFrame:
    """Cross-tabulate two annotators' labels over the items both labeled.

    Parameters
    ----------
    first, second : array_like, with shape (n_items,)
        The two annotators' labels, aligned by item. Pairs where either is
        missing (NaN or None) are left out.
    labels : array_like, optional
        All categories, in order; by default the sorted union of both.

    Returns
    -------
    pandas.DataFrame, with shape (n_categories, n_categories)
        Rows are the first annotator's labels, columns the second's.
    """
    a = pd.Series(np.asarray(first, dtype=object))
    b = pd.Series(np.asarray(second, dtype=object))
    if len(a) != len(b):
        raise ValueError(f"The two annotators' label lists differ in length ({len(a)} and {len(b)}).")
    both = a.notna() & b.notna()
    a, b = a[both], b[both]
    codes, cats = code_labels(pd.concat([a, b], ignore_index=True), labels)
    n = len(a)
    table = count_matrix(codes[:n], codes[n:], (len(cats), len(cats)))
    return pd.DataFrame(table, index=cats, columns=cats)


def as_count_matrix(counts: ArrayLike | LabelCounts) -> NDArray[np.float64]:
    """Return a count matrix as a two-dimensional array (items x categories), integer or float as it comes.

    Integer counts (what ``np.bincount`` and pandas give) are not copied to
    float: the measures read them block by block, converting one cache-sized
    block at a time. Its values (finite, non-negative) are checked as the
    measures read it.
    """
    if isinstance(counts, LabelCounts):
        matrix = counts.counts
    else:
        matrix = np.asarray(counts)
        if matrix.dtype.kind not in "iuf" or matrix.dtype.itemsize > 8:
            matrix = matrix.astype(np.float64)
    if matrix.ndim != 2:
        raise ValueError(
            f"Counts must be a two-dimensional array of items by categories; got {matrix.ndim} dimension(s)."
        )
    return matrix  # values are checked block by block where they are read (agreement.itemsums.row_blocks)


def as_contingency_table(table: ArrayLike) -> NDArray[np.float64]:
    """Validate and return a two-rater contingency table as a float64 square array."""
    matrix = np.asarray(table, dtype=np.float64)
    if matrix.ndim != 2 or matrix.shape[0] != matrix.shape[1]:
        raise ValueError(
            f"A contingency table must be square (categories x categories); got shape {matrix.shape}."
        )
    if not np.isfinite(matrix).all() or (matrix < 0).any():
        raise ValueError("A contingency table must hold finite, non-negative counts.")
    return matrix
