"""Annotator-by-annotator matrices of any two-rater measure.

For every pair of annotators, the contingency table over the items both
labeled, then the measure of each table, all tables at once. This is the
annotator matrix admins read to find who disagrees with whom.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Callable
from dataclasses import dataclass
from functools import partial
from itertools import combinations
from types import MappingProxyType

import numpy as np
import pandas as pd
from numpy.typing import ArrayLike, NDArray

from agreement.counts import code_labels, require_columns, shown
from agreement.information import information_batch
from agreement.kappa import table_measure_batch
from agreement.undefined import UndefinedMeasureWarning
from agreement.uniques import duplicated_rows

__all__ = ["TWO_RATER_MEASURES", "AnnotatorLabels", "PairwiseMatrix", "annotator_labels", "pairwise_matrix"]

TWO_RATER_MEASURES: MappingProxyType[str, Callable[[NDArray[np.float64]], NDArray[np.float64]]] = MappingProxyType({
    "cohen": partial(table_measure_batch, measure="cohen"),
    "scott": partial(table_measure_batch, measure="scott"),
    "pabak": partial(table_measure_batch, measure="pabak"),
    "percent": partial(table_measure_batch, measure="percent"),
    "information": information_batch,
})
"""Batch functions of a ``(B, C, C)`` stack of tables, by name."""


@dataclass(frozen=True)
class AnnotatorLabels:
    """Each annotator's label of each item, as category codes.

    Attributes
    ----------
    codes : ndarray of int, with shape (n_items, n_annotators)
        Category code, or -1 where the annotator did not label the item.
    items, annotators, categories : pandas.Index
    """

    codes: NDArray[np.intp]
    items: pd.Index
    annotators: pd.Index
    categories: pd.Index

    def measures(self, first: int, second: int) -> dict[str, float]:
        """Cohen's kappa, Scott's pi, PABAK and P(A) of two annotators on the items both labeled, with ``n_items``.

        From the two columns of codes in O(items + categories), never a
        categories x categories table: free text has thousands of labels.
        Equal to :func:`agreement.kappa.table_measure_batch` on :meth:`table`;
        NaN where a measure is undefined (no shared item, or chance agreement 1).

        Examples
        --------
        >>> rows = pd.DataFrame({"item": [1, 1, 2, 2, 3, 3], "annotator": ["a", "b"] * 3,
        ...                      "label": ["x", "x", "y", "y", "x", "y"]})
        >>> {k: round(v, 4) for k, v in annotator_labels(rows).measures(0, 1).items()}
        {'n_items': 3, 'percent': 0.6667, 'cohen': 0.4, 'scott': 0.3333, 'pabak': 0.3333}
        """
        a, b = self.codes[:, first], self.codes[:, second]
        both = (a >= 0) & (b >= 0)
        n = int(both.sum())
        size = len(self.categories)
        out: dict[str, float] = {"n_items": n, "percent": math.nan, "cohen": math.nan, "scott": math.nan,
                                 "pabak": math.nan}
        if n == 0:
            return out
        a, b = a[both], b[both]
        observed = float((a == b).mean())
        share_a = np.bincount(a, minlength=size) / n
        share_b = np.bincount(b, minlength=size) / n
        expected = {"cohen": float(share_a @ share_b), "scott": float((((share_a + share_b) / 2.0) ** 2).sum()),
                    "pabak": 1.0 / size if size else 1.0}
        out["percent"] = observed
        for name, chance in expected.items():
            out[name] = (observed - chance) / (1.0 - chance) if chance < 1.0 - 1e-12 else math.nan
        return out

    def table(self, first: int, second: int) -> NDArray[np.float64]:
        """Contingency table of annotators number ``first`` and ``second`` over the items both labeled."""
        a, b = self.codes[:, first], self.codes[:, second]
        both = (a >= 0) & (b >= 0)
        size = len(self.categories)
        flat = np.bincount(a[both] * size + b[both], minlength=size * size)
        return flat.reshape(size, size).astype(np.float64)


def annotator_labels(
    table: pd.DataFrame,
    *,
    item: str = "item",
    annotator: str = "annotator",
    label: str = "label",
    categories: ArrayLike | None = None,
) -> AnnotatorLabels:
    """Arrange a long table (one row per annotation) by item and annotator.

    Raises
    ------
    ValueError
        If a column is missing or an annotator labeled an item twice.
    """
    require_columns(table, [item, annotator, label])
    present = table[table[label].notna()]
    duplicated = duplicated_rows([present[item], present[annotator]])
    if duplicated.any():
        row = present[duplicated].iloc[0]
        raise ValueError(f"Annotator {shown(row[annotator])} labeled item {shown(row[item])} more than once.")
    item_codes, items = pd.factorize(present[item], sort=False)
    annotator_codes, annotators = pd.factorize(present[annotator], sort=True)
    label_codes, cats = code_labels(present[label], categories)
    codes = np.full((len(items), len(annotators)), -1, dtype=np.intp)
    codes[item_codes, annotator_codes] = label_codes
    return AnnotatorLabels(codes=codes, items=pd.Index(items), annotators=pd.Index(annotators), categories=cats)


@dataclass(frozen=True)
class PairwiseMatrix:
    """A two-rater measure for every pair of annotators.

    Attributes
    ----------
    values : pandas.DataFrame
        Annotators x annotators, symmetric; NaN on the diagonal and for pairs
        with no item in common or an undefined measure.
    n_items : pandas.DataFrame
        Items each pair labeled in common (the diagonal: items each labeled).
    """

    values: pd.DataFrame
    n_items: pd.DataFrame


def pairwise_matrix(labels: AnnotatorLabels, *, measure: str = "cohen", min_items: int = 1) -> PairwiseMatrix:
    """Apply a two-rater measure to every pair of annotators.

    Parameters
    ----------
    labels : AnnotatorLabels
        From :func:`annotator_labels`.
    measure : {"cohen", "scott", "pabak", "percent", "information"}
        Cohen's kappa, Scott's pi, PABAK, observed agreement P(A), or
        Klemens' P_I.
    min_items : int, default 1
        Pairs with fewer items in common get NaN.

    Returns
    -------
    PairwiseMatrix
        A single :class:`~agreement.UndefinedMeasureWarning` counts the pairs
        left undefined, if any.
    """
    if measure not in TWO_RATER_MEASURES:
        raise ValueError(f"Unknown two-rater measure {measure!r}; choose one of: {', '.join(TWO_RATER_MEASURES)}.")
    n_annotators = len(labels.annotators)
    pairs = list(combinations(range(n_annotators), 2))
    values = np.full((n_annotators, n_annotators), np.nan)
    rated = (labels.codes >= 0).astype(np.float64)
    common = rated.T @ rated
    if pairs:
        if measure == "information":  # P_I needs each pair's table
            scores = TWO_RATER_MEASURES[measure](np.stack([labels.table(a, b) for a, b in pairs]))
        else:  # the kappa family from the codes: no categories x categories table per pair
            scores = np.array([labels.measures(a, b)[measure] for a, b in pairs])
        first, second = np.array(pairs).T
        scores = np.where(common[first, second] >= max(min_items, 1), scores, np.nan)
        values[first, second] = scores
        values[second, first] = scores
        undefined = int(np.isnan(scores).sum())
        if undefined:
            warnings.warn(
                f"The {measure} measure is undefined for {undefined} of {len(pairs)} annotator pairs "
                f"(fewer than {max(min_items, 1)} items in common, or no variation to correct for); they are NaN.",
                UndefinedMeasureWarning,
                stacklevel=2,
            )
    index = labels.annotators
    return PairwiseMatrix(
        values=pd.DataFrame(values, index=index, columns=index),
        n_items=pd.DataFrame(common.astype(np.int64), index=index, columns=index),
    )
