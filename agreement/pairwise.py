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
from functools import cached_property, partial
from itertools import combinations
from types import MappingProxyType

import numpy as np
import pandas as pd
from numpy.typing import ArrayLike, NDArray

from agreement.counts import code_labels, require_columns, shown
from agreement.information import information_batch
from agreement.kappa import table_measure_batch
from agreement.ranges import run_pairs
from agreement.undefined import UndefinedMeasureWarning
from agreement.uniques import duplicated_rows, narrowest, narrowest_type, unique_counts, unique_inverse

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
        Category code, or -1 where the annotator did not label the item, in the narrowest integer type
        that holds them (:func:`agreement.uniques.narrowest_type`).
    items, annotators, categories : pandas.Index
    """

    codes: NDArray[np.signedinteger]
    items: pd.Index
    annotators: pd.Index
    categories: pd.Index

    def measures(self, first: int, second: int) -> dict[str, float]:
        """Cohen's kappa, Scott's pi, PABAK and P(A) of two annotators on the items both labeled.

        With ``n_items``, how many those are.

        Their row of :meth:`pair_measures` (every pair from the labels at
        once, never a categories x categories table: free text has thousands
        of labels). Equal to :func:`agreement.kappa.table_measure_batch` on
        :meth:`table`; NaN where a measure is undefined (no shared item, or
        chance agreement 1).

        Examples
        --------
        >>> rows = pd.DataFrame({"item": [1, 1, 2, 2, 3, 3], "annotator": ["a", "b"] * 3,
        ...                      "label": ["x", "x", "y", "y", "x", "y"]})
        >>> {k: round(v, 4) for k, v in annotator_labels(rows).measures(0, 1).items()}
        {'n_items': 3, 'percent': 0.6667, 'cohen': 0.4, 'scott': 0.3333, 'pabak': 0.3333}
        """
        low, high = min(first, second), max(first, second)
        pairs = self.pair_measures()
        found = pairs[(pairs["first"] == low) & (pairs["second"] == high)]
        if found.empty:
            return {"n_items": 0, "percent": math.nan, "cohen": math.nan, "scott": math.nan, "pabak": math.nan}
        row = found.iloc[0]
        return {"n_items": int(row["n_items"]), **{name: float(row[name]) for name in ("percent", "cohen", "scott",
                                                                                      "pabak")}}

    @cached_property
    def rows(self) -> tuple[NDArray[np.signedinteger], NDArray[np.signedinteger], NDArray[np.signedinteger]]:
        """Each label given as ``(item, annotator, label)`` codes, by item, then annotator.

        Held in the narrowest integer types (a million tasks' label sets are tens of millions of labels).
        """
        item, annotator = np.nonzero(self.codes >= 0)
        return (narrowest(item, len(self.codes)), narrowest(annotator, len(self.annotators)),
                self.codes[item, annotator])

    @cached_property
    def pair_rows(self) -> tuple[NDArray[np.signedinteger], NDArray[np.signedinteger]]:
        """Every two labels of one item (in :attr:`rows`, annotators ``a < b``).

        An item labeled ``k`` times gives ``k (k - 1) / 2``; O(labels x the most annotators of an item), never O(items x
        annotators^2).
        """
        first, second = run_pairs(self.rows[0])
        return narrowest(first, len(self.rows[0])), narrowest(second, len(self.rows[0]))

    def pair_measures(self) -> pd.DataFrame:
        """:meth:`measures` of every pair of annotators with an item in common, all at once.

        Per pair, from its labels (:attr:`pair_rows`): the items both
        labeled, their share of equal labels ``P(A)``, and the chance terms
        ``sum_c p_ac p_bc`` (Cohen), ``sum_c ((p_ac + p_bc) / 2)^2`` (Scott)
        and ``1 / C`` (PABAK) from the pair's counts per label; never a table
        per pair, never a pass over the items per pair.

        Returns
        -------
        pandas.DataFrame
            One row per pair, ordered as :func:`itertools.combinations` orders them: ``first`` and ``second`` (the
            annotators' numbers), ``n_items``, ``percent``, ``cohen``, ``scott``, ``pabak`` (NaN where chance
            agreement is 1).

        Examples
        --------
        >>> rows = pd.DataFrame({"item": [1, 1, 2, 2, 3, 3, 3], "annotator": ["a", "b", "a", "b", "a", "b", "c"],
        ...                      "label": ["x", "x", "y", "y", "x", "y", "y"]})
        >>> annotator_labels(rows).pair_measures().round(4).to_dict("records")[0]
        {'first': 0, 'second': 1, 'n_items': 3, 'percent': 0.6667, 'cohen': 0.4, 'scott': 0.3333, 'pabak': 0.3333}
        """
        return self._pair_measures.copy()  # computed once: the project's scores and its annotator table both read it

    @cached_property
    def _pair_measures(self) -> pd.DataFrame:
        """:meth:`pair_measures`, as computed once."""
        _, annotator, label = self.rows
        at_a, at_b = self.pair_rows
        n_annotators, size = len(self.annotators), len(self.categories)
        key = annotator[at_a].astype(np.int64) * n_annotators + annotator[at_b]
        codes, pair = unique_inverse(key)
        n = np.bincount(pair, minlength=len(codes)).astype(np.float64)
        percent = np.bincount(pair, weights=label[at_a] == label[at_b], minlength=len(codes)) / np.maximum(n, 1)
        width = max(size, 1)
        cells_a, count_a = unique_counts(pair * width + label[at_a])
        cells_b, count_b = unique_counts(pair * width + label[at_b])
        where = np.searchsorted(cells_b, cells_a).clip(max=max(len(cells_b) - 1, 0))
        shared = (cells_b[where] == cells_a) if len(cells_b) else np.zeros(len(cells_a), dtype=bool)
        cross = np.bincount(cells_a[shared] // width, weights=count_a[shared] * count_b[where[shared]],
                            minlength=len(codes))
        squares_a = np.bincount(cells_a // width, weights=count_a.astype(np.float64) ** 2, minlength=len(codes))
        squares_b = np.bincount(cells_b // width, weights=count_b.astype(np.float64) ** 2, minlength=len(codes))
        chance = {"cohen": cross / n**2, "scott": (squares_a + 2.0 * cross + squares_b) / (4.0 * n**2),
                  "pabak": np.full(len(codes), 1.0 / size if size else 1.0)}
        out = pd.DataFrame({"first": codes // n_annotators, "second": codes % n_annotators,
                            "n_items": n.astype(np.int64), "percent": percent})
        with np.errstate(divide="ignore", invalid="ignore"):
            for name, expected in chance.items():
                out[name] = np.where(expected < 1.0 - 1e-12, (percent - expected) / (1.0 - expected), np.nan)
        return out

    def pair_tables(self) -> NDArray[np.float64]:
        """The contingency table of every pair of :meth:`pair_measures`, in its order.

        Shape ``(pairs, C, C)``, O(labels + pairs x C^2) (for few categories; :meth:`table` gives one pair's).
        """
        _, annotator, label = self.rows
        at_a, at_b = self.pair_rows
        size = len(self.categories)
        pair = unique_inverse(annotator[at_a].astype(np.int64) * len(self.annotators) + annotator[at_b])[1]
        n_pairs = int(pair.max()) + 1 if len(pair) else 0
        flat = np.bincount((pair * size + label[at_a]) * size + label[at_b], minlength=n_pairs * size * size)
        return flat.reshape(n_pairs, size, size).astype(np.float64)

    def table(self, first: int, second: int) -> NDArray[np.float64]:
        """Contingency table of annotators number ``first`` and ``second`` over the items both labeled."""
        a, b = self.codes[:, first].astype(np.intp), self.codes[:, second]
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
    labelled = table[label].notna().to_numpy()
    present = table if labelled.all() else table[labelled]  # a copy only when some label is missing
    duplicated = duplicated_rows([present[item], present[annotator]])
    if duplicated.any():
        row = present[duplicated].iloc[0]
        raise ValueError(f"Annotator {shown(row[annotator])} labeled item {shown(row[item])} more than once.")
    item_codes, items = pd.factorize(present[item], sort=False)
    annotator_codes, annotators = pd.factorize(present[annotator], sort=True)
    label_codes, cats = code_labels(present[label], categories)
    codes = np.full((len(items), len(annotators)), -1, dtype=narrowest_type(len(cats)))
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
        measured = labels.pair_measures()  # the pairs with an item in common, all at once
        shared = np.full((n_annotators, n_annotators), np.nan)
        if measure == "information":  # P_I needs each pair's table
            found = TWO_RATER_MEASURES[measure](labels.pair_tables()) if len(measured) else np.zeros(0)
        else:  # the kappa family from the codes: no categories x categories table per pair
            found = measured[measure].to_numpy()
        shared[measured["first"].to_numpy(), measured["second"].to_numpy()] = found
        first, second = np.array(pairs).T
        scores = np.where(common[first, second] >= max(min_items, 1), shared[first, second], np.nan)
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
