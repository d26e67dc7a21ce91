"""Krippendorff's alpha from per-item label counts, with missing data.

Krippendorff's alpha written over per-item terms (Nørregaard & Derczynski,
"Sparse Probability of Agreement", 2022, eq. 5-6) and worked for span labels
in Gwet's formulation by Datasaur ("Krippendorff's Alpha Calculation",
Datasaur's documentation, alpha = 0.56):

.. math::

    \\alpha = 1 - \\frac{D_o}{D_e}, \\qquad
    D_o = \\frac{1}{n} \\sum_i \\frac{1}{n_i - 1} \\sum_{c,k} n_{ic} n_{ik} \\delta^2_{ck}, \\qquad
    D_e = \\frac{1}{n(n-1)} \\sum_{c,k} n_c n_k \\delta^2_{ck}

over the *pairable* items (``n_i >= 2``), with ``n_c`` the pairable values of
category ``c`` and ``n`` their total.

Memory is O(items x categories + categories^2); no items x categories x
categories array is ever made:

* nominal: :math:`\\sum_{c \\ne k} n_{ic} n_{ik} = n_i^2 - \\sum_c n_{ic}^2`;
* interval: :math:`\\sum_{c,k} n_{ic} n_{ik} (v_c - v_k)^2 = 2(n_i S_{2i} - S_{1i}^2)`
  with :math:`S_{ri} = \\sum_c n_{ic} v_c^r`;
* ordinal: Krippendorff's ordinal distance
  :math:`\\delta_{ck} = \\sum_{g=c}^{k} n_g - (n_c + n_k)/2` equals
  :math:`|m_k - m_c|` with the mid-rank :math:`m_c = \\sum_{g \\le c} n_g - n_c/2`,
  so ordinal alpha is interval alpha on the mid-ranks;
* ratio and caller-given distances: the C x C distance matrix, applied row by row
  (O(items x categories^2) time, O(items x categories) memory).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal, get_args

import numpy as np
from numpy.typing import ArrayLike, NDArray

from agreement.counts import LabelCounts, as_count_matrix
from agreement.itemsums import n_batches, pairable_inverse, row_blocks, row_sums, weighted_sum
from agreement.undefined import warn_undefined

__all__ = [
    "LEVELS",
    "Level",
    "LevelName",
    "Metric",
    "alpha_batch",
    "alpha_item_disagreement",
    "coincidence_matrix",
    "distance_matrix",
    "expected_disagreement",
    "krippendorff_alpha",
    "resolve_metric",
]

LevelName = Literal["nominal", "ordinal", "interval", "ratio"]
Level = LevelName | ArrayLike
LEVELS: tuple[str, ...] = get_args(LevelName)


@dataclass(frozen=True)
class Metric:
    """What a level of measurement needs to compute its squared distances.

    Exactly one field is set, or none for nominal.

    Attributes
    ----------
    values : ndarray, with shape (n_categories,), optional
        Interval: each column's value (centred, for numerical stability).
    order : ndarray of int, with shape (n_categories,), optional
        Ordinal: the column order that sorts the values.
    delta : ndarray, with shape (n_categories, n_categories), optional
        Ratio or a caller-given matrix: the squared distances.
    """

    values: NDArray[np.float64] | None = None
    order: NDArray[np.intp] | None = None
    delta: NDArray[np.float64] | None = None


def resolve_metric(counts: ArrayLike | LabelCounts, level: Level, values: ArrayLike | None
                   ) -> tuple[NDArray[np.float64], Metric]:
    """Validate the arguments of :func:`krippendorff_alpha`.

    Returns the count matrix and its :class:`Metric`.
    """
    x = as_count_matrix(counts)
    n_categories = x.shape[1]
    if not isinstance(level, str):
        delta = np.asarray(level, dtype=np.float64)
        if delta.shape != (n_categories, n_categories):
            raise ValueError(
                f"The distance matrix must be {n_categories} x {n_categories}, one row and column per category; "
                f"got shape {delta.shape}."
            )
        if not np.isfinite(delta).all() or (delta < 0).any() or not np.allclose(np.diag(delta), 0):
            raise ValueError("The distance matrix must hold finite, non-negative distances with a zero diagonal.")
        if not np.allclose(delta, delta.T):
            raise ValueError("The distance matrix must be symmetric.")
        return x, Metric(delta=delta)
    if level not in LEVELS:
        raise ValueError(f"Unknown level of measurement {level!r}; choose one of: {', '.join(LEVELS)}.")
    if level == "nominal":
        return x, Metric()
    if values is None and isinstance(counts, LabelCounts):
        found = counts.numeric_values()
        if found is None and level != "ordinal":
            raise ValueError(
                f"{level.capitalize()} alpha needs a number for each category, but the labels are not numeric; "
                "pass values=."
            )
        values = found
    v = np.arange(n_categories, dtype=np.float64) if values is None else np.asarray(values, dtype=np.float64)
    if v.shape != (n_categories,):
        raise ValueError(f"values must give one number per category ({n_categories}); got shape {v.shape}.")
    if not np.isfinite(v).all():
        raise ValueError("values must be finite numbers.")
    if level == "ratio" and (v < 0).any():
        raise ValueError("Ratio alpha needs non-negative values.")
    if level == "ordinal":
        return x, Metric(order=np.argsort(v, kind="stable"))
    if level == "ratio":
        return x, Metric(delta=_ratio_distances(v))
    return x, Metric(values=v - v.mean() if v.size else v)


def _ratio_distances(v: NDArray[np.float64]) -> NDArray[np.float64]:
    total = v[:, None] + v[None, :]
    with np.errstate(divide="ignore", invalid="ignore"):
        d = np.where(total != 0, (v[:, None] - v[None, :]) / np.where(total != 0, total, 1.0), 0.0)
    return d**2


def _midranks(marginals: NDArray[np.float64], order: NDArray[np.intp]) -> NDArray[np.float64]:
    """Mid-rank of each category from pairable marginals, shape like ``marginals``.

    ``order`` sorts the columns by value; the ranks come back in column order.
    """
    ordered = marginals[..., order]
    ranks = np.empty_like(marginals)
    ranks[..., order] = np.cumsum(ordered, axis=-1) - ordered / 2.0
    return ranks


def distance_matrix(
    level: LevelName, *, values: ArrayLike | None = None, marginals: ArrayLike | None = None
) -> NDArray[np.float64]:
    """Krippendorff's squared difference function as a C x C matrix.

    Parameters
    ----------
    level : {"nominal", "ordinal", "interval", "ratio"}
    values : array_like, with shape (n_categories,), optional
        Numeric value of each category (interval, ratio; ordinal uses their
        order). Required except for nominal and ordinal.
    marginals : array_like, with shape (n_categories,), optional
        Pairable values per category; required for ordinal.

    Returns
    -------
    ndarray, with shape (n_categories, n_categories)
        Squared distances, in the order of ``values`` as given.
    """
    if level == "nominal":
        size = len(np.asarray(values if values is not None else marginals))
        return 1.0 - np.eye(size)
    if level == "ordinal":
        if marginals is None:
            raise ValueError("Ordinal distances need the pairable values per category (marginals).")
        m = np.asarray(marginals, dtype=np.float64)
        order = np.argsort(values, kind="stable") if values is not None else np.arange(len(m))
        ranks = _midranks(m, order)
        return (ranks[:, None] - ranks[None, :]) ** 2
    if values is None:
        raise ValueError(f"{level.capitalize()} distances need a number for each category (values).")
    v = np.asarray(values, dtype=np.float64)
    if level == "interval":
        return (v[:, None] - v[None, :]) ** 2
    if level == "ratio":
        return _ratio_distances(v)
    raise ValueError(f"Unknown level of measurement {level!r}; choose one of: {', '.join(LEVELS)}.")


def _interval_terms(n: NDArray[np.float64], s1: NDArray[np.float64], s2: NDArray[np.float64]) -> NDArray[np.float64]:
    """``sum_{c,k} x_c x_k (v_c - v_k)^2 = 2 (n S2 - S1^2)`` per row.

    From ``S1 = x @ v``, ``S2 = x @ v^2``.
    """
    return np.maximum(2.0 * (n * s2 - s1**2), 0.0)


def _interval_sums(x: NDArray[np.float64], w: NDArray[np.float64] | None, v: NDArray[np.float64]
                   ) -> tuple[NDArray[np.float64], NDArray[np.float64], NDArray[np.float64]]:
    """Observed and expected sums for squared differences of values ``v`` (one pass).

    The expected sum needs only the pairable totals of 1, v and v^2, so the
    one product ``x @ [1, v, v^2]`` serves both.
    """
    batches = n_batches(w)
    observed: NDArray[np.float64] = np.zeros(batches)
    moments = np.zeros((batches, 3))
    for block in row_blocks(x, w, project=np.stack([v, v**2], axis=1)):
        pairable = block.w * (block.n >= 2)
        n, s1, s2 = block.moments
        terms = n * s2
        terms -= s1 * s1
        terms /= np.maximum(n - 1.0, 1.0)
        observed += weighted_sum(pairable, terms)
        moments += weighted_sum(pairable, block.moments.T)
    observed = 2.0 * np.maximum(observed, 0.0)
    total, t1, t2 = moments.T
    return observed, np.maximum(2.0 * (total * t2 - t1**2), 0.0), total


def _sums(x: NDArray[np.float64], w: NDArray[np.float64] | None, metric: Metric
          ) -> tuple[NDArray[np.float64], NDArray[np.float64], NDArray[np.float64]]:
    """Per batch: observed-disagreement sum, expected-disagreement sum, pairable total.

    One pass over the rows in blocks; ordinal takes a first pass for the
    pairable marginals that place its mid-ranks, then one pass per batch.
    """
    if metric.values is not None:
        return _interval_sums(x, w, metric.values)
    batches = n_batches(w)
    totals = np.zeros((batches, x.shape[1]))
    if metric.order is not None:
        for block in row_blocks(x, w):
            totals += weighted_sum(block.w * (block.n >= 2), block.x)
        parts = [_interval_sums(x, None if w is None else w[b:b + 1], ranks)
                 for b, ranks in enumerate(_midranks(totals, metric.order))]
        observed, expected, total = (np.concatenate(values) for values in zip(*parts, strict=True))
        return observed, expected, total
    observed = np.zeros(batches)
    delta = metric.delta
    for block in row_blocks(x, w, squares=delta is None):
        pairable = block.w * (block.n >= 2)
        totals += weighted_sum(pairable, block.x)
        if delta is None:
            terms = block.n * block.n
            terms -= block.q
        else:
            terms = ((block.x @ delta) * block.x).sum(axis=1)
        terms /= np.maximum(block.n - 1.0, 1.0)
        observed += weighted_sum(pairable, terms)
    total = totals.sum(axis=1)
    if delta is None:
        expected = total**2 - (totals**2).sum(axis=1)
    else:
        expected = np.einsum("bc,ck,bk->b", totals, delta, totals)
    return observed, expected, total


def alpha_batch(x: NDArray[np.float64], w: NDArray[np.float64] | None, *, metric: Metric = Metric()
                ) -> NDArray[np.float64]:
    """Alpha for each batch of item weights ``w`` (shape ``(B, n_rows)``; None: unit weights).

    ``x`` and ``metric`` are as :func:`resolve_metric` returns them.
    """
    return _alpha_from_sums(*_sums(x, w, metric))


def _alpha_from_sums(observed: NDArray[np.float64], expected: NDArray[np.float64], total: NDArray[np.float64]
                     ) -> NDArray[np.float64]:
    defined = (total > 1) & (expected > 0)
    with np.errstate(divide="ignore", invalid="ignore"):
        value = 1.0 - (total - 1.0) * observed / np.where(defined, expected, 1.0)
    return np.where(defined, value, np.nan)


def _warn_reason(total: float, expected: float) -> str:
    if total <= 1:
        return "no item has two or more annotations, so there are no pairable values"
    return "the expected disagreement is zero (every pairable value is the same)"


def krippendorff_alpha(
    counts: ArrayLike | LabelCounts,
    *,
    level: Level = "nominal",
    values: ArrayLike | None = None,
) -> float:
    """Krippendorff's alpha from per-item label counts.

    .. math::

        \\alpha = 1 - (n - 1)\\,
        \\frac{\\sum_i \\frac{1}{n_i-1}\\sum_{c,k} n_{ic} n_{ik}\\delta^2_{ck}}
             {\\sum_{c,k} n_c n_k \\delta^2_{ck}}

    Items with fewer than two annotations are not pairable and are left out
    (Datasaur, step 2).

    Parameters
    ----------
    counts : array_like or LabelCounts, with shape (n_items, n_categories)
    level : {"nominal", "ordinal", "interval", "ratio"} or array_like
        Level of measurement, or a symmetric C x C matrix of squared
        distances with a zero diagonal.
    values : array_like, with shape (n_categories,), optional
        Numeric value of each column for ordinal, interval and ratio. By
        default the categories of a :class:`LabelCounts` when they are
        numbers, else the column index.

    Returns
    -------
    float
        NaN, with an :class:`~agreement.UndefinedMeasureWarning`, when there
        are no pairable values or the expected disagreement is zero.

    References
    ----------
    Krippendorff, K. (1980). Content Analysis. Written per item as in
    Nørregaard & Derczynski, Sparse Probability of Agreement, eq. 5-6;
    worked in Gwet's formulation by Datasaur, "Krippendorff's Alpha
    Calculation" (Datasaur's documentation).

    Examples
    --------
    Datasaur, Table 2 (Labeler A vs Reviewer, six spans; columns EVE, ORG,
    PER, TITLE, YEAR): alpha = 14/25.

    >>> t = [[1, 0, 0, 1, 0], [0, 0, 2, 0, 0], [0, 0, 2, 0, 0],
    ...      [0, 0, 0, 0, 2], [0, 0, 0, 0, 2], [0, 1, 1, 0, 0]]
    >>> round(krippendorff_alpha(t), 4)
    0.56
    """
    x, metric = resolve_metric(counts, level, values)
    observed, expected, total = _sums(x, None, metric)
    value = float(_alpha_from_sums(observed, expected, total)[0])
    if np.isnan(value):
        return warn_undefined("Krippendorff's alpha", _warn_reason(float(total[0]), float(expected[0])))
    return value


def coincidence_matrix(counts: ArrayLike | LabelCounts) -> NDArray[np.float64]:
    """Krippendorff's coincidence matrix over the pairable items.

    .. math:: o_{ck} = \\sum_i \\frac{n_{ic}(n_{ik} - [c = k])}{n_i - 1}

    Returns
    -------
    ndarray, with shape (n_categories, n_categories)
        Its row sums are the pairable values per category.
    """
    x = as_count_matrix(counts)
    inverse = pairable_inverse(row_sums(x)[0])
    weighted = x * inverse[:, None]
    return weighted.T @ x - np.diag(weighted.sum(axis=0))


def expected_disagreement(
    counts: ArrayLike | LabelCounts, *, level: Level = "nominal", values: ArrayLike | None = None
) -> float:
    """Krippendorff's expected disagreement ``D_e`` over the pairable values.

    Returns
    -------
    float
        NaN, with a warning, when fewer than two values are pairable.
    """
    x, metric = resolve_metric(counts, level, values)
    _, expected, total = _sums(x, None, metric)
    if total[0] <= 1:
        return warn_undefined("The expected disagreement", _warn_reason(float(total[0]), 0.0))
    return float(expected[0] / (total[0] * (total[0] - 1.0)))


def alpha_item_disagreement(
    counts: ArrayLike | LabelCounts,
    *,
    level: Level = "nominal",
    values: ArrayLike | None = None,
    marginals: ArrayLike | None = None,
) -> NDArray[np.float64]:
    """Each item's observed disagreement: the mean squared distance of its pairs.

    .. math:: d_i = \\frac{1}{n_i(n_i-1)} \\sum_{c,k} n_{ic} n_{ik} \\delta^2_{ck}

    The project's :math:`D_o = \\sum_i n_i d_i / n` (Nørregaard & Derczynski
    2022, eq. 5), so a single task can be scored against the project's
    expected disagreement as ``1 - d_i / D_e``.

    Parameters
    ----------
    counts, level, values
        As in :func:`krippendorff_alpha`.
    marginals : array_like, with shape (n_categories,), optional
        For ordinal: the project's pairable values per category (in the
        columns' order), which fix the ordinal distances. By default those of
        ``counts``.

    Returns
    -------
    ndarray, with shape (n_items,)
        NaN for items with fewer than two annotations.
    """
    x, metric = resolve_metric(counts, level, values)
    n, q = row_sums(x)
    inverse = pairable_inverse(n)
    interval_values = metric.values
    if metric.order is not None:
        if marginals is None:
            marginals = (inverse > 0) @ x
        interval_values = _midranks(np.asarray(marginals, dtype=np.float64), metric.order)
    if interval_values is not None:
        sums = _interval_terms(n, x @ interval_values, x @ interval_values**2)
    elif metric.delta is not None:
        sums = ((x @ metric.delta) * x).sum(axis=1)
    else:
        sums = n * n - q
    return np.where(inverse > 0, sums * inverse / np.where(n > 0, n, 1.0), np.nan)
