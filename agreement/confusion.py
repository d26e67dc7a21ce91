"""What disagrees: the label pairs annotators confuse, and each label's specific agreement.

From Krippendorff's coincidence matrix :math:`o_{ck}` (every ordered pair of
values within an item, weighted :math:`1 / (n_i - 1)`):

* the confused pairs are its off-diagonal cells, :math:`o_{ck} + o_{kc}` for
  :math:`c < k`, largest first;
* a label's specific agreement is
  :math:`2 o_{cc} / (2 o_{cc} + \\sum_{k \\ne c} (o_{ck} + o_{kc}))`, the share of
  the pairs involving ``c`` in which both values are ``c`` (Uebersax 1982's
  specific agreement, generalised to many raters through the coincidence
  matrix; with two raters it is :math:`2 n_{cc} / (n_{c\\cdot} + n_{\\cdot c})`).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd
from numpy.typing import ArrayLike

from agreement.counts import LabelCounts, as_count_matrix
from agreement.ranges import run_pairs
from agreement.uniques import row_codes, unique_inverse

__all__ = ["confused_pairs", "set_coincidences", "specific_agreement"]


def _pairable(counts: ArrayLike | LabelCounts) -> tuple[np.ndarray, np.ndarray]:
    """The rows of the items with two values or more, and each one's :math:`1 / (n_i - 1)`."""
    x = as_count_matrix(counts)
    n = x.sum(axis=1)
    keep = n >= 2
    return x[keep], 1.0 / (n[keep] - 1.0)


def confused_pairs(counts: ArrayLike | LabelCounts, categories: Sequence[Any], *, top: int = 5
                   ) -> list[tuple[Any, Any, float]]:
    """The ``top`` label pairs with the most disagreement, largest first.

    Each pair as ``(label, label, coincidences)``.

    Only the label pairs that meet within an item are visited (each item's
    non-zero cells, joined with themselves), never the whole coincidence
    matrix: free text has thousands of labels. Ties keep the labels' order.

    Examples
    --------
    >>> confused_pairs([[1, 1, 0], [1, 1, 0], [0, 1, 1]], ["a", "b", "c"])
    [('a', 'b', 4.0), ('b', 'c', 2.0)]
    """
    x, weight = _pairable(counts)
    items, labels = np.nonzero(x)  # by item, labels ascending within each
    value = x[items, labels]
    first, second = run_pairs(items)  # each two labels of one item, c < k
    if not len(first):
        return []
    # o_ck + o_kc = 2 x_ic x_ik / (n_i - 1) for c != k
    width = np.int64(x.shape[1])
    cells, cell = unique_inverse(labels[first].astype(np.int64) * width + labels[second])
    both = np.bincount(cell, weights=2.0 * value[first] * value[second] * weight[items[first]], minlength=len(cells))
    c, k = cells // width, cells % width
    # the most first; ties in the labels' order (sums rounded to 9 places: a tie reached by sums in another
    # order is still a tie)
    ranked = np.lexsort((k, c, -np.round(both, 9)))[:top]
    return [(categories[int(c[at])], categories[int(k[at])], float(both[at])) for at in ranked.tolist()
            if both[at] > 0]


def specific_agreement(counts: ArrayLike | LabelCounts) -> np.ndarray:
    r"""Each label's specific agreement (NaN for a label no pairable item holds).

    :math:`o_{cc} / o_{c\cdot}` with :math:`o_{cc} = \sum_i x_{ic}(x_{ic} - 1)/(n_i - 1)`
    and the row sum :math:`o_{c\cdot} = \sum_i x_{ic}` over the pairable items,
    which is the formula above (the coincidence matrix is symmetric); O(items x
    labels), no labels x labels matrix.

    Examples
    --------
    Two raters, 40 items both call "yes", 10 where they split, 50 both "no":

    >>> specific_agreement([[2, 0]] * 40 + [[1, 1]] * 10 + [[0, 2]] * 50).round(4).tolist()
    [0.8889, 0.9091]
    """
    x, weight = _pairable(counts)
    diagonal = weight @ (x * (x - 1.0))
    involved = x.sum(axis=0)
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(involved > 0, diagonal / np.where(involved > 0, involved, 1.0), np.nan)


def set_coincidences(chosen: pd.DataFrame, categories: Sequence[Any]) -> np.ndarray:
    """The coincidence matrix of label *sets*: which label one annotator chose where another chose which.

    For multiple choices and multi-path taxonomies each annotator gives an item a set :math:`A` of labels. Every
    ordered pair of annotators ``(a, b)`` on an item spreads one unit of mass over :math:`A \\times B`, each cell
    :math:`1 / (|A| |B|)`, and an item with :math:`r` annotators weights its pairs :math:`1 / (r - 1)`:

    .. math:: o_{xy} = \\sum_i \\frac{1}{r_i - 1} \\sum_{a \\ne b}
              \\frac{[x \\in A_{ia}] [y \\in B_{ib}]}{|A_{ia}| |B_{ib}|}

    With one label per set it is Krippendorff's coincidence matrix (:func:`agreement.coincidence_matrix`); the
    total is the number of annotations on items with two or more. An empty set has to be given a label of its
    own (the caller's "none").

    Parameters
    ----------
    chosen : DataFrame
        Columns ``item``, ``annotator``, ``label``: one row per label in an annotator's set.
    categories : sequence
        The labels, in the order of the matrix; a label outside them is an error.

    Returns
    -------
    ndarray, with shape (n_categories, n_categories)

    Examples
    --------
    >>> chosen = pd.DataFrame({"item": [1, 1, 1], "annotator": ["a", "a", "b"], "label": ["x", "y", "x"]})
    >>> set_coincidences(chosen, ["x", "y"]).tolist()
    [[1.0, 0.5], [0.5, 0.0]]
    """
    q = len(categories)
    if chosen.empty:
        return np.zeros((q, q))
    if not chosen["label"].isin(list(categories)).all():
        raise ValueError("A chosen label is not among the categories given.")
    code = pd.Categorical(chosen["label"], categories=list(categories)).codes.astype(np.int64)
    items = unique_inverse(np.asarray(chosen["item"]), sort=False)[1]
    sets = row_codes([items, np.asarray(chosen["annotator"])])  # each annotator's set on an item, as first seen
    size = np.bincount(sets)
    n_sets = len(size)
    # One row per annotator's set, its labels spread evenly: m_a = 1_A / |A|.
    share = np.bincount(sets * q + code, weights=1.0 / size[sets], minlength=n_sets * q).reshape(n_sets, q)
    set_item = np.zeros(n_sets, dtype=np.int64)
    set_item[sets] = items
    raters = np.bincount(set_item)
    weight = np.divide(1.0, raters - 1.0, out=np.zeros(len(raters)), where=raters >= 2)
    # each item's sum of its sets' rows, added in the order of the sets (every item has one)
    order = np.argsort(set_item, kind="stable")
    heads = np.flatnonzero(np.r_[True, set_item[order][1:] != set_item[order][:-1]])
    per_item = np.add.reduceat(share[order], heads, axis=0)
    # sum_{a != b} m_a m_b^T = S S^T - sum_a m_a m_a^T, with S the item's sum of m_a.
    return (per_item.T * weight) @ per_item - (share.T * weight[set_item]) @ share
