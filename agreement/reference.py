"""Each annotator against a reference: accuracy and Cohen's kappa, each with its uncertainty.

Accuracy comes with Wilson's interval, Cohen's kappa with its standard error.

A reference is a label per item that is taken as right (a ground truth) or as one more opinion held to the
annotators' standard (a model's predictions). Per annotator, over the items both labelled:

* accuracy, the share of items with the reference's label, with Wilson's (1927) score interval

  .. math:: \\frac{\\hat p + \\frac{z^2}{2n} \\pm z \\sqrt{\\frac{\\hat p (1 - \\hat p)}{n} + \\frac{z^2}{4n^2}}}
            {1 + \\frac{z^2}{n}}

  which, unlike the normal interval, stays inside [0, 1] and is not empty at 0 or 1 correct;
* for ordered labels also the weighted agreement :math:`\\sum_{jk} w_{jk} p_{jk}` with Gwet's weights, the value
  the task flags compare;
* Cohen's kappa (quadratic-weighted for ordered labels, Cohen 1968), with the large-sample standard error of
  Fleiss, Cohen & Everitt (1969),

  .. math:: \\operatorname{var}(\\hat\\kappa_w) = \\frac{\\sum_{jk} p_{jk} [w_{jk} - (\\bar w_{j\\cdot} +
            \\bar w_{\\cdot k})(1 - \\hat\\kappa_w)]^2 - [\\hat\\kappa_w - p_e (1 - \\hat\\kappa_w)]^2}
            {n (1 - p_e)^2},

  :math:`\\bar w_{j\\cdot} = \\sum_k w_{jk} p_{\\cdot k}`, :math:`\\bar w_{\\cdot k} = \\sum_j w_{jk} p_{j\\cdot}`
  (the identity for unweighted kappa), and the interval :math:`\\hat\\kappa \\pm z \\sqrt{\\operatorname{var}}`
  within [-1, 1], as statsmodels' ``cohens_kappa`` computes it.

Wilson, E. B. (1927). Probable inference, the law of succession, and statistical inference. *JASA* 22.
Fleiss, J. L., Cohen, J. & Everitt, B. S. (1969). Large sample standard errors of kappa and weighted kappa.
*Psychological Bulletin* 72(5).
"""

from __future__ import annotations

import math
import warnings
from statistics import NormalDist
from typing import NamedTuple

import numpy as np
import pandas as pd
from numpy.typing import ArrayLike, NDArray

from agreement.counts import code_labels
from agreement.gwet import LEVEL_WEIGHTS, agreement_weights
from agreement.kappa import cohen_kappa
from agreement.pairwise import annotator_labels
from agreement.undefined import UndefinedMeasureWarning, warn_undefined

__all__ = ["REFERENCE_COLUMNS", "KappaEstimate", "against_reference", "kappa_estimate", "majority_labels",
           "pairwise_kappa_mean", "wilson_interval"]

REFERENCE_COLUMNS = ("annotator", "n_items", "accuracy", "accuracy_low", "accuracy_high", "agreement", "kappa",
                     "kappa_low", "kappa_high")


class KappaEstimate(NamedTuple):
    """Cohen's (weighted) kappa with its large-sample standard error and interval.

    As in Fleiss, Cohen & Everitt (1969).
    """

    value: float
    std_error: float
    low: float
    high: float
    n_items: int


def _z(confidence: float) -> float:
    if not 0 < confidence < 1:
        raise ValueError(f"The confidence must lie between 0 and 1; got {confidence}.")
    return NormalDist().inv_cdf(0.5 + confidence / 2.0)


def wilson_interval(successes: ArrayLike, n: ArrayLike, *, confidence: float = 0.95
                    ) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """Wilson's score interval for the proportions ``successes / n`` (elementwise; NaN where ``n`` is 0).

    Examples
    --------
    Wilson (1927) and Newcombe (1998, table I, case 1): 81 of 263, 95%, gives (0.2553, 0.3662).

    >>> low, high = wilson_interval(81, 263)
    >>> round(float(low), 4), round(float(high), 4)
    (0.2553, 0.3662)

    At ``k = n`` the upper bound is exactly 1 (and at ``k = 0`` the lower exactly 0), as the formula gives, not
    the 0.9999999999999999 rounding leaves:

    >>> float(wilson_interval(13, 13)[1]), float(wilson_interval(0, 13)[0])
    (1.0, 0.0)
    """
    z = _z(confidence)
    k = np.asarray(successes, dtype=np.float64)
    n = np.asarray(n, dtype=np.float64)
    with np.errstate(divide="ignore", invalid="ignore"):
        p = k / n
        centre = (p + z * z / (2 * n)) / (1 + z * z / n)
        half = z * np.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    empty = n <= 0
    low = np.where(k <= 0, 0.0, np.clip(centre - half, 0, 1))
    high = np.where(k >= n, 1.0, np.clip(centre + half, 0, 1))
    return np.where(empty, np.nan, low), np.where(empty, np.nan, high)


def kappa_estimate(table: ArrayLike, *, weights: NDArray[np.float64] | None = None,
                   confidence: float = 0.95) -> KappaEstimate:
    """Cohen's kappa of a contingency table, its standard error and interval.

    Weighted with agreement ``weights``, if given.

    Parameters
    ----------
    table : array_like, with shape (q, q)
        Rows the annotator's labels, columns the reference's, over the items both labelled.
    weights : ndarray, optional
        Agreement weights (ones on the diagonal); None: unweighted.
    confidence : float, default 0.95

    Returns
    -------
    KappaEstimate
        NaN for an empty table or a chance agreement of 1 (one label only on both sides); where one side alone
        gave one label, kappa is 0 by construction and its standard error and interval NaN, with a warning.

    Examples
    --------
    Di Eugenio & Glass (2004), Example 1 (kappa 0.672489; statsmodels' ``cohens_kappa`` gives the same standard error):

    >>> est = kappa_estimate([[70, 25], [0, 55]])
    >>> round(est.value, 6), round(est.std_error, 6), est.n_items
    (0.672489, 0.056497, 150)
    """
    t = np.asarray(table, dtype=np.float64)
    n = float(t.sum())
    q = t.shape[0]
    if n <= 0:
        return KappaEstimate(math.nan, math.nan, math.nan, math.nan, 0)
    w = np.eye(q) if weights is None else np.asarray(weights, dtype=np.float64)
    p = t / n
    rows, cols = p.sum(axis=1), p.sum(axis=0)
    observed = float((w * p).sum())
    expected = float(rows @ w @ cols)
    if expected >= 1.0 - 1e-12:
        return KappaEstimate(math.nan, math.nan, math.nan, math.nan, round(n))
    kappa = (observed - expected) / (1.0 - expected)
    row_mean, col_mean = w @ cols, rows @ w
    terms = (w - (row_mean[:, None] + col_mean[None, :]) * (1.0 - kappa)) ** 2
    variance = ((p * terms).sum() - (kappa - expected * (1.0 - kappa)) ** 2) / (n * (1.0 - expected) ** 2)
    if (rows > 0).sum() < 2 or (cols > 0).sum() < 2:
        # one side gave a single label: kappa is 0 by construction (observed = expected agreement), and its variance
        # formula gives 0 too; an interval of width 0 would say a certain zero where the data say nothing
        side = "the annotator" if (rows > 0).sum() < 2 else "the reference"
        nan = warn_undefined("Cohen's kappa's interval", f"{side} gave one label only over {round(n)} items, so kappa "
                                                        "is 0 by construction and says nothing of agreement")
        return KappaEstimate(kappa, nan, nan, nan, round(n))
    se = math.sqrt(max(float(variance), 0.0))
    half = _z(confidence) * se
    return KappaEstimate(kappa, se, max(-1.0, kappa - half), min(1.0, kappa + half), round(n))


def against_reference(labels: pd.DataFrame, reference: pd.DataFrame, *, level: str = "nominal",
                      values: ArrayLike | None = None, categories: ArrayLike | None = None,
                      confidence: float = 0.95) -> pd.DataFrame:
    """Each annotator against the reference, over the items both labelled.

    Parameters
    ----------
    labels : DataFrame
        Columns ``item``, ``annotator``, ``label``: one row per annotator and item.
    reference : DataFrame
        Columns ``item``, ``label``: the reference's label of each item (at most one).
    level : {"nominal", "ordinal", "interval", "ratio"}
        Ordered levels add the weighted agreement (Gwet's weights, as the task flags) and weight kappa
        quadratically (Cohen 1968), as the pairwise kappas are.
    values : array_like, optional
        The categories' values for an ordered level (default: the labels as numbers).
    categories : array_like, optional
        Every label in order (default: those seen).
    confidence : float, default 0.95

    Returns
    -------
    DataFrame
        One row per annotator with a shared item, columns :data:`REFERENCE_COLUMNS`; ``agreement`` equals
        ``accuracy`` for nominal labels.

    Examples
    --------
    >>> labels = pd.DataFrame({"item": [1, 2, 3, 1, 2, 3], "annotator": ["a"] * 3 + ["b"] * 3,
    ...                        "label": ["x", "y", "x", "x", "x", "x"]})
    >>> truth = pd.DataFrame({"item": [1, 2, 3], "label": ["x", "y", "y"]})
    >>> table = against_reference(labels, truth)
    >>> table[["annotator", "n_items", "accuracy", "kappa"]].round(4).to_dict("records")
    [{'annotator': 'a', 'n_items': 3, 'accuracy': 0.6667, 'kappa': 0.4}, {'annotator': 'b', 'n_items': 3, \
'accuracy': 0.3333, 'kappa': 0.0}]
    """
    if reference["item"].duplicated().any():
        raise ValueError("The reference gives some item two labels; give it one label per item.")
    merged = labels[["item", "annotator", "label"]].merge(reference[["item", "label"]].rename(
        columns={"label": "reference"}), on="item", how="inner")
    merged = merged[merged["label"].notna() & merged["reference"].notna()]
    if merged.empty:
        return pd.DataFrame(columns=list(REFERENCE_COLUMNS))
    codes, cats = code_labels(pd.concat([merged["label"], merged["reference"]], ignore_index=True), categories)
    q = len(cats)
    given, truth = codes[: len(merged)], codes[len(merged):]
    ordered = level != "nominal"
    if ordered:
        numbers = (np.asarray(values, dtype=np.float64) if values is not None
                   else pd.to_numeric(pd.Series(cats), errors="raise").to_numpy(dtype=np.float64))
        flag_weights = agreement_weights(q, kind=LEVEL_WEIGHTS[level], values=numbers)
        kappa_weights = agreement_weights(q, kind="quadratic", values=numbers)
    annotator_codes, annotators = pd.factorize(merged["annotator"], sort=True)
    tables = np.zeros((len(annotators), q * q))
    np.add.at(tables, (annotator_codes, given * q + truth), 1.0)
    tables = tables.reshape(len(annotators), q, q)
    n = tables.sum(axis=(1, 2))
    correct = np.trace(tables, axis1=1, axis2=2)
    low, high = wilson_interval(correct, n, confidence=confidence)
    agreement = (tables * flag_weights).sum(axis=(1, 2)) / n if ordered else correct / n
    with warnings.catch_warnings(record=True) as said:  # one warning for the table, not one per annotator
        warnings.simplefilter("always", UndefinedMeasureWarning)
        kappas = [kappa_estimate(t, weights=kappa_weights if ordered else None, confidence=confidence)
                  for t in tables]
    degenerate = [str(a) for a, k in zip(annotators, kappas, strict=True) if np.isnan(k.std_error)
                  and not np.isnan(k.value)]
    if degenerate:
        shown = ", ".join(degenerate[:5]) + (", ..." if len(degenerate) > 5 else "")
        who = "1 annotator" if len(degenerate) == 1 else f"{len(degenerate)} annotators"
        warn_undefined("Cohen's kappa's interval against the reference",
                       f"{who} ({shown}) share{'s' if len(degenerate) == 1 else ''} items with it on which one side "
                       "gave one label only, so their kappa is 0 by construction")
    for message in said:
        if not issubclass(message.category, UndefinedMeasureWarning):
            warnings.warn_explicit(message.message, message.category, message.filename, message.lineno)
    return pd.DataFrame({"annotator": list(annotators), "n_items": n.astype(int), "accuracy": correct / n,
                         "accuracy_low": low, "accuracy_high": high, "agreement": agreement,
                         "kappa": [k.value for k in kappas], "kappa_low": [k.low for k in kappas],
                         "kappa_high": [k.high for k in kappas]}, columns=list(REFERENCE_COLUMNS))


def majority_labels(labels: pd.DataFrame) -> pd.DataFrame:
    """The annotators' majority label of each item: columns ``item``, ``label``, ``n_labels``.

    Only items with two labels or more and one most frequent label (ties have no majority).

    >>> labels = pd.DataFrame({"item": [1, 1, 1, 2, 2, 3], "annotator": list("abcabc"),
    ...                        "label": ["x", "x", "y", "x", "y", "y"]})
    >>> majority_labels(labels).to_dict("records")
    [{'item': 1, 'label': 'x', 'n_labels': 3}]
    """
    present = labels[labels["label"].notna()]
    counts = present.groupby(["item", "label"], sort=False).size().rename("votes").reset_index()
    totals = present.groupby("item", sort=False).size()
    counts["n_labels"] = counts["item"].map(totals).to_numpy()
    top = counts.groupby("item", sort=False)["votes"].transform("max")
    winners = counts[counts["votes"] == top]
    unique = winners.groupby("item", sort=False)["label"].transform("size") == 1
    out = winners[unique & (winners["n_labels"] >= 2)]
    return out[["item", "label", "n_labels"]].reset_index(drop=True)


def pairwise_kappa_mean(labels: pd.DataFrame, *, level: str = "nominal", values: ArrayLike | None = None,
                        categories: ArrayLike | None = None) -> tuple[float, pd.DataFrame]:
    """The mean of Cohen's kappa over the pairs of annotators, and each annotator's share with the others.

    Kappa is averaged over the pairs of annotators with a shared item (quadratic-weighted for ordered levels). Per
    annotator, the pooled share of their items on which the other annotators gave the same label (``with_others``, with
    ``n_pairs``, the pairs it is over).

    The mean kappa among people is the ceiling a model's kappa against them is held to; an annotator who agrees
    with a model far more than with the other annotators accepts its predictions without looking.

    Examples
    --------
    >>> labels = pd.DataFrame({"item": [1, 2, 3, 1, 2, 3], "annotator": ["a"] * 3 + ["b"] * 3,
    ...                        "label": ["x", "y", "x", "x", "y", "y"]})
    >>> mean, table = pairwise_kappa_mean(labels)
    >>> round(mean, 4), table.round(4).to_dict("records")
    (0.4, [{'annotator': 'a', 'with_others': 0.6667, 'n_pairs': 3}, {'annotator': 'b', 'with_others': 0.6667, \
'n_pairs': 3}])
    """
    present = labels[labels["label"].notna()]
    if present.empty:
        return math.nan, pd.DataFrame(columns=["annotator", "with_others", "n_pairs"])
    arranged = annotator_labels(present, categories=categories)
    if level != "nominal":  # every pair with a shared item, at once (tables for the weights, else from the codes)
        numbers = (np.asarray(values, dtype=np.float64) if values is not None
                   else pd.to_numeric(pd.Series(arranged.categories), errors="raise").to_numpy(dtype=np.float64))
        weights = agreement_weights(len(arranged.categories), kind="quadratic", values=numbers)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", UndefinedMeasureWarning)
            kappas = [cohen_kappa(table, weights=weights) for table in arranged.pair_tables()]
    else:
        kappas = arranged.pair_measures()["cohen"].tolist()
    defined = [k for k in kappas if not math.isnan(k)]
    # each other annotator on an annotator's items, and whether they gave the same label: the item's pairs
    _, annotator, label = arranged.rows
    first, second = arranged.pair_rows
    equal = (label[first] == label[second]).astype(np.float64)
    size = len(arranged.annotators)
    same = (np.bincount(annotator[first], weights=equal, minlength=size)
            + np.bincount(annotator[second], weights=equal, minlength=size))
    pairs = (np.bincount(annotator[first], minlength=size) + np.bincount(annotator[second], minlength=size)
             ).astype(np.float64)
    with np.errstate(divide="ignore", invalid="ignore"):
        share = np.where(pairs > 0, same / pairs, np.nan)
    table = pd.DataFrame({"annotator": list(arranged.annotators), "with_others": share, "n_pairs": pairs.astype(int)})
    return (float(np.mean(defined)) if defined else math.nan), table
