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

__all__ = ["confused_pairs", "specific_agreement"]


def _pairable(counts: ArrayLike | LabelCounts) -> tuple[np.ndarray, np.ndarray]:
    """The rows of the items with two values or more, and each one's :math:`1 / (n_i - 1)`."""
    x = as_count_matrix(counts)
    n = x.sum(axis=1)
    keep = n >= 2
    return x[keep], 1.0 / (n[keep] - 1.0)


def confused_pairs(counts: ArrayLike | LabelCounts, categories: Sequence[Any], *, top: int = 5
                   ) -> list[tuple[Any, Any, float]]:
    """The ``top`` label pairs with the most disagreement, as ``(label, label, coincidences)``, largest first.

    Only the label pairs that meet within an item are visited (each item's
    non-zero cells, joined with themselves), never the whole coincidence
    matrix: free text has thousands of labels. Ties keep the labels' order.

    Examples
    --------
    >>> confused_pairs([[1, 1, 0], [1, 1, 0], [0, 1, 1]], ["a", "b", "c"])
    [('a', 'b', 4.0), ('b', 'c', 2.0)]
    """
    x, weight = _pairable(counts)
    items, labels = np.nonzero(x)
    cells = pd.DataFrame({"item": items, "label": labels, "value": x[items, labels] * weight[items]})
    pairs = cells.merge(cells[["item", "label"]].assign(other=x[items, labels]), on="item", suffixes=("", "_k"))
    pairs = pairs[pairs["label"] < pairs["label_k"]]
    if pairs.empty:
        return []
    # o_ck + o_kc = 2 x_ic x_ik / (n_i - 1) for c != k
    both = (2.0 * pairs["value"] * pairs["other"]).groupby([pairs["label"], pairs["label_k"]]).sum()
    ranked = both.reset_index(name="value").sort_values(["value", "label", "label_k"],
                                                        ascending=[False, True, True], kind="stable").head(top)
    return [(categories[c], categories[k], float(v)) for c, k, v in ranked.itertuples(index=False) if v > 0]


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
