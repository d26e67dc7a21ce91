"""Who disagrees: each annotator's agreement with the others, and a robust rule for outliers.

From a long table (one row per annotation: item, annotator, label):

* ``mean_pairwise``: the annotator's Cohen's kappa with every other annotator
  over the items both labeled, averaged with the shared items as weights;
* ``with_majority``: on the items where the other annotators (at least two)
  have a strict majority label, the share of them where this annotator gave it;
* ``n_items``: items the annotator labeled; ``n_compared``: items with at
  least one other annotator.

An annotator is an outlier when its mean pairwise kappa is below the median
of all annotators' by more than ``k`` scaled median absolute deviations
(1.4826 MAD estimates the standard deviation of normal data: Rousseeuw &
Croux 1993; Leys et al. 2013 recommend this rule, with k between 2 and 3).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from agreement.pairwise import AnnotatorLabels, annotator_labels

__all__ = ["MAD_SCALE", "annotator_agreement", "robust_outliers"]

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


def annotator_agreement(table: pd.DataFrame | AnnotatorLabels, *, k: float = 2.0) -> pd.DataFrame:
    """Each annotator's agreement with the others (see the module text), with the outlier flag.

    Parameters
    ----------
    table : pandas.DataFrame or AnnotatorLabels
        Columns ``item``, ``annotator``, ``label``; one label per annotator and item. Or that table already
        arranged by :func:`agreement.annotator_labels` (a caller that also needs the pairs arranges it once).
    k : float, default 2
        How many scaled MADs below the median make an outlier.

    Returns
    -------
    pandas.DataFrame
        Indexed by annotator: ``n_items``, ``n_compared``, ``mean_pairwise``, ``with_majority``, ``outlier``.
    """
    labels = table if isinstance(table, AnnotatorLabels) else annotator_labels(table)
    codes = labels.codes  # items x annotators, -1 where unlabeled
    n_annotators = codes.shape[1]
    rated = codes >= 0
    kappas = np.full((n_annotators, n_annotators), np.nan)
    shared = np.zeros((n_annotators, n_annotators))
    for a in range(n_annotators):  # each pair from its codes: no categories x categories table (free text)
        for b in range(a + 1, n_annotators):
            pair = labels.measures(a, b)
            kappas[a, b] = kappas[b, a] = pair["cohen"]
            shared[a, b] = shared[b, a] = pair["n_items"]
    usable = np.where(np.isnan(kappas), 0.0, shared)
    with np.errstate(divide="ignore", invalid="ignore"):
        mean_pairwise = np.where(usable.sum(axis=1) > 0,
                                 np.nansum(kappas * usable, axis=1) / usable.sum(axis=1), np.nan)
    # The majority of the others, from the codes alone (items x annotators, never items x labels: free text has
    # thousands of labels). same[i, l]: how many annotators of item i gave annotator l's label, l included.
    same = np.zeros(codes.shape)
    for m in range(n_annotators):
        same += rated & rated[:, [m]] & (codes == codes[:, [m]])
    with_majority = np.full(n_annotators, np.nan)
    compared = np.zeros(n_annotators, dtype=int)
    raters = rated.sum(axis=1)
    for column in range(n_annotators):
        mine = rated[:, column]
        compared[column] = int((mine & (raters >= 2)).sum())
        enough = mine & (raters >= 3)  # at least two others
        if not enough.any():
            continue
        own, others_rated = codes[enough, column], rated[enough].copy()
        others_rated[:, column] = False
        votes = np.where(others_rated, same[enough] - (codes[enough] == own[:, None]), -1.0)
        top = votes.max(axis=1)
        # The label with v votes among the others is carried by exactly v of them: a tie doubles the count.
        strict = (votes == top[:, None]).sum(axis=1) == top
        if strict.any():
            majority = codes[enough][np.flatnonzero(strict), votes[strict].argmax(axis=1)]
            with_majority[column] = float((majority == own[strict]).mean())
    out = pd.DataFrame({"n_items": rated.sum(axis=0), "n_compared": compared, "mean_pairwise": mean_pairwise,
                        "with_majority": with_majority}, index=pd.Index(labels.annotators, name="annotator"))
    out["outlier"] = robust_outliers(out["mean_pairwise"], k=k)
    return out
