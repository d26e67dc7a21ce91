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
from numpy.typing import ArrayLike

from agreement.alpha import coincidence_matrix
from agreement.counts import LabelCounts

__all__ = ["confused_pairs", "specific_agreement"]


def confused_pairs(counts: ArrayLike | LabelCounts, categories: Sequence[Any], *, top: int = 5
                   ) -> list[tuple[Any, Any, float]]:
    """The ``top`` label pairs with the most disagreement, as ``(label, label, coincidences)``, largest first.

    Examples
    --------
    >>> confused_pairs([[1, 1, 0], [1, 1, 0], [0, 1, 1]], ["a", "b", "c"])
    [('a', 'b', 4.0), ('b', 'c', 2.0)]
    """
    o = coincidence_matrix(counts)
    both = o + o.T
    rows, columns = np.triu_indices(len(categories), k=1)
    values = both[rows, columns]
    order = np.argsort(-values, kind="stable")[:top]
    return [(categories[rows[i]], categories[columns[i]], float(values[i])) for i in order if values[i] > 0]


def specific_agreement(counts: ArrayLike | LabelCounts) -> np.ndarray:
    """Each label's specific agreement (NaN for a label no pairable item holds).

    Examples
    --------
    Two raters, 40 items both call "yes", 10 where they split, 50 both "no":

    >>> specific_agreement([[2, 0]] * 40 + [[1, 1]] * 10 + [[0, 2]] * 50).round(4).tolist()
    [0.8889, 0.9091]
    """
    o = coincidence_matrix(counts)
    diagonal = np.diag(o)
    involved = o.sum(axis=0) + o.sum(axis=1)  # every pair with c on either side; the diagonal counted twice
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(involved > 0, 2.0 * diagonal / involved, np.nan)
