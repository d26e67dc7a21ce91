"""Who disagrees: each annotator's agreement with the others, and a robust rule for outliers.

From a long table (one row per annotation: item, annotator, label):

* ``mean_pairwise``: the annotator's Cohen's kappa with every other annotator
  over the items both labeled, averaged with the shared items as weights;
* ``with_majority``: on the items where the other annotators (at least two)
  have a strict majority label, the share of them where this annotator gave it;
* ``n_items``: items the annotator labeled; ``n_compared``: items with at
  least one other annotator.

An annotator is an outlier (:func:`outlier_annotators`) when its mean pairwise
kappa is below 0, agreeing with the others less often than chance would (the
"poor" band of Landis & Koch 1977, "The measurement of observer agreement for
categorical data"), or below the median of all annotators' by more than ``k``
scaled median absolute deviations (1.4826 MAD estimates the standard
deviation of normal data: Rousseeuw & Croux 1993; Leys et al. 2013, "Detecting
outliers: do not use standard deviation around the mean, use absolute
deviation around the median", recommend this rule, with k between 2 and 3).
The first catches what the second cannot with a handful of annotators, whose
spread is itself wide: five annotators at 0.27, 0.19, 0.10, -0.02 and -0.10
have a scaled MAD of 0.18, and no one lies 2 of them below the median.
"""

from __future__ import annotations

from itertools import pairwise

import numpy as np
import pandas as pd
from numpy.typing import NDArray

from agreement.pairwise import AnnotatorLabels, annotator_labels
from agreement.ranges import block_edges
from agreement.uniques import unique_inverse

__all__ = ["MAD_SCALE", "annotator_agreement", "outlier_annotators", "robust_outliers"]

MAD_SCALE = 1.4826


def robust_outliers(values: pd.Series, *, k: float = 2.0) -> pd.Series:
    """Which values lie below ``median - k * 1.4826 * MAD`` (NaN values are never outliers).

    With fewer than three defined values, or no spread (MAD 0), nothing is an outlier.

    Examples
    --------
    >>> robust_outliers(pd.Series([0.8, 0.82, 0.79, 0.81, 0.2])).tolist()
    [False, False, False, False, True]
    """
    defined = values.dropna()
    if len(defined) < 3:
        return pd.Series(False, index=values.index)
    median = float(defined.median())
    mad = MAD_SCALE * float((defined - median).abs().median())
    if mad <= 0:
        return pd.Series(False, index=values.index)
    return (values < median - k * mad).fillna(False).astype(bool)


def outlier_annotators(mean_kappa: pd.Series, *, k: float = 2.0) -> pd.Series:
    """Which annotators are outliers by their mean pairwise kappa: below 0, or :func:`robust_outliers`.

    NaN is never an outlier.

    Examples
    --------
    Five annotators too spread for the MAD rule; the two below chance are outliers:

    >>> outlier_annotators(pd.Series([0.27, 0.19, 0.10, -0.02, -0.10])).tolist()
    [False, False, False, True, True]
    """
    return (mean_kappa < 0).fillna(False).astype(bool) | robust_outliers(mean_kappa, k=k)


ROWS_AT_ONCE = 1 << 21
"""Labels given whose majorities are counted at once at most (a project's items, a block of whole items at a time)."""


def _with_majority(item: NDArray[np.signedinteger], annotator: NDArray[np.signedinteger],
                   label: NDArray[np.signedinteger], *, n_annotators: int, n_categories: int,
                   at_most: int = ROWS_AT_ONCE) -> tuple[NDArray[np.int64], NDArray[np.float64], NDArray[np.float64]]:
    """Per annotator: the items shared with another, and how often they gave the others' majority label.

    From each label given (``item``, ``annotator``, ``label`` codes, items ascending): the items with at least one other
    annotator, and on the items with at least two others whose labels have a single most frequent one, how often it is
    the annotator's (and on how many). Each item counts alone, so the items are counted a block of whole items of at
    most about ``at_most`` labels at a time (:func:`_majority_block`): what a block builds is a few arrays of its rows,
    never of a whole large project's.
    """
    compared = np.zeros(n_annotators, dtype=np.int64)
    agrees, decided = np.zeros(n_annotators), np.zeros(n_annotators)
    per_item = np.bincount(item) if len(item) else np.zeros(0, dtype=np.intp)
    bounds = np.concatenate([[0], np.cumsum(per_item)])
    for first, last in pairwise(block_edges(per_item, at_most=at_most)):
        rows = slice(int(bounds[first]), int(bounds[last]))
        block = _majority_block(item[rows] - first, annotator[rows], label[rows], n_annotators=n_annotators,
                                n_categories=n_categories)
        compared += block[0]
        agrees += block[1]
        decided += block[2]
    return compared, agrees, decided


def _majority_block(item: NDArray[np.intp], annotator: NDArray[np.intp], label: NDArray[np.intp], *,
                    n_annotators: int, n_categories: int) -> tuple[NDArray[np.int64], NDArray[np.float64],
                                                                   NDArray[np.float64]]:
    """:func:`_with_majority` of the labels given on a block of whole items (codes from 0, ascending).

    From each item's counts per label alone, in O(labels given): with ``m1`` the highest count on the item,
    ``t1`` the labels that reach it and ``m2`` the next count below, an annotator whose label has ``own``
    votes (theirs included) sees among the others the single label of most votes

    * their own, when ``own = m1``, ``t1 = 1`` and ``m1 - 1 > m2``;
    * another, when ``own = m1`` and ``t1 = 2`` (the other label that reaches ``m1``), or ``own < m1`` and
      ``t1 = 1``;

    and no single one otherwise (a tie).
    """
    raters = np.bincount(item)[item] if len(item) else np.zeros(0, dtype=np.intp)
    compared = np.bincount(annotator[raters >= 2], minlength=n_annotators)
    width = max(n_categories, 1)
    cells, cell, votes = unique_inverse(item.astype(np.int64) * width + label, counts=True)  # per item and label
    owner = cells // width  # ascending: each item's labels side by side
    head = np.flatnonzero(np.r_[True, owner[1:] != owner[:-1]]) if len(owner) else np.zeros(0, dtype=np.intp)
    n_items = int(owner.max()) + 1 if len(owner) else 0
    top, reaching, below = (np.zeros(n_items, dtype=np.int64) for _ in range(3))
    if len(head):
        top[owner[head]] = np.maximum.reduceat(votes, head)
        is_top = votes == top[owner]
        reaching[:] = np.bincount(owner, weights=is_top, minlength=n_items)
        below[owner[head]] = np.maximum.reduceat(np.where(is_top, 0, votes), head)  # the next count, 0 if none
    own = votes[cell]
    m1, t1, m2 = top[item], reaching[item], below[item]
    agree = (own == m1) & (t1 == 1) & (m1 - 1 > m2)
    decided = (raters >= 3) & (agree | ((own == m1) & (t1 == 2)) | ((own < m1) & (t1 == 1)))
    return (compared, np.bincount(annotator[decided], weights=agree[decided], minlength=n_annotators),
            np.bincount(annotator[decided], minlength=n_annotators).astype(np.float64))


def annotator_agreement(table: pd.DataFrame | AnnotatorLabels, *, k: float = 2.0) -> pd.DataFrame:
    """Each annotator's agreement with the others (see the module text), with the outlier flag.

    Parameters
    ----------
    table : pandas.DataFrame or AnnotatorLabels
        Columns ``item``, ``annotator``, ``label``; one label per annotator and item. Or that table already
        arranged by :func:`agreement.annotator_labels` (a caller that also needs the pairs arranges it once).
    k : float, default 2
        How many scaled MADs below the median make an outlier (as does a mean kappa below 0).

    Returns
    -------
    pandas.DataFrame
        Indexed by annotator: ``n_items``, ``n_compared``, ``mean_pairwise``, ``with_majority``, ``outlier``.
    """
    labels = table if isinstance(table, AnnotatorLabels) else annotator_labels(table)
    n_annotators = len(labels.annotators)
    item, annotator, label = labels.rows
    pairs = labels.pair_measures()  # each pair from its labels: no categories x categories table (free text)
    first, second = pairs["first"].to_numpy(), pairs["second"].to_numpy()
    kappa = pairs["cohen"].to_numpy()
    usable = np.where(np.isnan(kappa), 0.0, pairs["n_items"].to_numpy(dtype=np.float64))
    weighted = np.nan_to_num(kappa) * usable
    totals = np.bincount(first, weights=usable, minlength=n_annotators) + np.bincount(
        second, weights=usable, minlength=n_annotators)
    sums = np.bincount(first, weights=weighted, minlength=n_annotators) + np.bincount(
        second, weights=weighted, minlength=n_annotators)
    with np.errstate(divide="ignore", invalid="ignore"):
        mean_pairwise = np.where(totals > 0, sums / totals, np.nan)
    compared, agrees, decided = _with_majority(item, annotator, label, n_annotators=n_annotators,
                                               n_categories=len(labels.categories))
    with np.errstate(divide="ignore", invalid="ignore"):
        with_majority = np.where(decided > 0, agrees / np.maximum(decided, 1), np.nan)
    out = pd.DataFrame({"n_items": np.bincount(annotator, minlength=n_annotators), "n_compared": compared,
                        "mean_pairwise": mean_pairwise, "with_majority": with_majority},
                       index=pd.Index(labels.annotators, name="annotator"))
    out["outlier"] = outlier_annotators(out["mean_pairwise"], k=k)
    return out
