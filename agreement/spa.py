"""Sparse Probability of Agreement (SPA) for incompletely annotated data.

Nørregaard & Derczynski, "Sparse Probability of Agreement" (2022). SPA
estimates the probability that two random annotators agree on a random item
when not every annotator labeled every item, which is the state of a
Label Studio project while labeling is under way.

Notes on the paper
------------------
The variance of an item's agreement, used by the inverse-variance schemes, is
printed three ways in the paper: eq. 20-21 (main text), eq. 41 (Appendix A) and
eq. 50 / 22-23 (Appendix B). Brute-force enumeration of every labeling for
small n and C (``tests/agreement/test_spa.py``) shows that eq. 41 and eq. 50
are right and that the printed eq. 20 is not: its constant should be
``1 / (4 N^2 C^n)``, not ``1 / (N^2 C^4)``, and the factor in ``K_csp`` is
``2^{I(n_0 != n_1)}`` (outside ``K_csp``, as in eq. 39), not ``2^{I(n_0 = n_1)}``.
Eq. 22 also lacks the ``1 / N^2`` of eq. 50.

Rather than the O(n^2 C^2) sums, this module uses the closed form that the
multinomial factorial moments give for the same variance,

.. math::

    \\operatorname{var}[\\hat P] = \\frac{2\\,[s_2(1-s_2) + 2(n-2)(s_3 - s_2^2)]}{n(n-1)},
    \\qquad s_k = \\sum_c p_c^k,

which equals eq. 41 / 50 (checked by enumeration). With a uniform class
distribution it reduces to :math:`2(C-1) / (C^2 n(n-1))`, so ``inv_var``
weights are exactly proportional to the number of edges, for every C: the
paper's observation that ``inv_var`` is "almost identical to edges" and
"constant with respect to the number of classes" (section 6.1, Table 1) holds
exactly.
"""

from __future__ import annotations

from typing import Literal, get_args

import numpy as np
from numpy.typing import ArrayLike, NDArray

from agreement.counts import LabelCounts, as_count_matrix
from agreement.itemsums import item_agreement_terms, n_batches, row_blocks, row_sums, weighted_sum
from agreement.undefined import warn_undefined

__all__ = ["WeighingScheme", "item_agreement", "item_agreement_variance", "spa", "spa_batch", "spa_weights"]

WeighingScheme = Literal["flat", "annotations", "annotations_m1", "edges", "inv_var", "inv_var_class"]
WEIGHING_SCHEMES: tuple[str, ...] = get_args(WeighingScheme)


def _check_scheme(scheme: str) -> None:
    if scheme not in WEIGHING_SCHEMES:
        raise ValueError(f"Unknown SPA weighing scheme {scheme!r}; choose one of: {', '.join(WEIGHING_SCHEMES)}.")


def item_agreement(counts: ArrayLike | LabelCounts) -> NDArray[np.float64]:
    """Each item's probability that two of its annotations agree (eq. 1 / 7).

    .. math:: \\hat P_i = \\frac{1}{n_i(n_i-1)} \\sum_c n_{ic}(n_{ic}-1)

    Parameters
    ----------
    counts : array_like or LabelCounts, with shape (n_items, n_categories)

    Returns
    -------
    ndarray, with shape (n_items,)
        NaN for items with fewer than two annotations, where agreement is
        undefined (Nørregaard & Derczynski 2022, eq. 15-16).
    """
    n, q = row_sums(as_count_matrix(counts))
    return np.where(n >= 2, item_agreement_terms(n, q), np.nan)


def item_agreement_variance(n: ArrayLike, probabilities: ArrayLike) -> NDArray[np.float64]:
    """Variance of one item's agreement over all labelings (Nørregaard & Derczynski 2022, Appendix A-B).

    Annotations are drawn independently from the class distribution
    ``probabilities``; see the module notes for the closed form and how it
    was checked against eq. 41 and eq. 50.

    Parameters
    ----------
    n : array_like
        Numbers of annotations per item (any shape).
    probabilities : array_like, with shape (..., n_categories)
        Class distribution; a leading shape broadcasts against ``n``.

    Returns
    -------
    ndarray
        ``inf`` where ``n < 2`` (Nørregaard & Derczynski 2022, section 5.5), else the variance.
    """
    p = np.asarray(probabilities, dtype=np.float64)
    s2 = (p**2).sum(axis=-1)
    s3 = (p**3).sum(axis=-1)
    n = np.asarray(n, dtype=np.float64)
    with np.errstate(divide="ignore", invalid="ignore"):
        var = 2.0 * (s2 * (1.0 - s2) + 2.0 * (n - 2.0) * (s3 - s2**2)) / (n * (n - 1.0))
    return np.where(n >= 2, var, np.inf)


def _inverse_variance(n: NDArray[np.float64], probabilities: NDArray[np.float64]) -> NDArray[np.float64]:
    """Inverse-variance weights; a one-class distribution (zero variance) takes its limit."""
    var = item_agreement_variance(n, probabilities)
    degenerate = np.isclose((probabilities**2).sum(axis=-1), 1.0)
    # As the distribution collapses onto one class, var -> 4 eps / n, so the
    # normalized weights tend to n (the `annotations` scheme); every pairable
    # item then agrees fully, and SPA is 1 whatever the weights.
    limit = np.where(n >= 2, n, 0.0)
    with np.errstate(divide="ignore"):
        weights = np.where(np.isfinite(var) & (var > 0), 1.0 / var, 0.0)
    return np.where(degenerate, limit, weights)


def spa_weights(
    n: ArrayLike,
    *,
    scheme: WeighingScheme = "annotations_m1",
    probabilities: ArrayLike | None = None,
) -> NDArray[np.float64]:
    """Item weights ``k_i`` of a weighing scheme (Nørregaard & Derczynski 2022, section 5).

    ============== ============================================================
    flat           1
    annotations    n_i
    annotations_m1 n_i - 1 (the paper's recommendation)
    edges          n_i (n_i - 1) / 2
    inv_var        1 / var[P_i] with a uniform class distribution (eq. 20-21,
                   Appendix A); proportional to edges
    inv_var_class  1 / var[P_i] with the class distribution ``probabilities``
                   (eq. 22-23, Appendix B)
    ============== ============================================================

    Items with fewer than two annotations weigh 0 in every scheme.

    Parameters
    ----------
    n : array_like
        Numbers of annotations per item.
    scheme : str
        One of the names above.
    probabilities : array_like, optional
        The class distribution, required for ``inv_var`` (its length gives C)
        and ``inv_var_class``.
    """
    _check_scheme(scheme)
    n = np.asarray(n, dtype=np.float64)
    pairable = n >= 2
    if scheme in ("inv_var", "inv_var_class"):
        if probabilities is None:
            raise ValueError(f"The {scheme} scheme needs the class distribution (probabilities).")
        p = np.asarray(probabilities, dtype=np.float64)
        if scheme == "inv_var":
            p = np.full(p.shape[-1], 1.0 / p.shape[-1])
        return np.where(pairable, _inverse_variance(n, p), 0.0)
    raw = {
        "flat": np.ones_like(n),
        "annotations": n,
        "annotations_m1": n - 1.0,
        "edges": n * (n - 1.0) / 2.0,
    }[scheme]
    return np.where(pairable, raw, 0.0)


def _weighted_agreement(n: NDArray[np.float64], q: NDArray[np.float64], scheme: str
                        ) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """``k_i P_i`` and ``k_i`` per row for the schemes whose weights depend on ``n_i`` only.

    ``k_i P_i`` simplifies, since :math:`P_i = (q_i - n_i) / (n_i (n_i - 1))`:
    flat ``(q - n) / (n (n - 1))``, annotations ``(q - n) / (n - 1)``,
    annotations_m1 ``(q - n) / n``, edges and inv_var ``(q - n) / 2``
    (inv_var is proportional to edges; module notes). Rows with ``n_i < 2``
    get ``k_i = 0``; the caller masks them.
    """
    if scheme == "flat":
        return item_agreement_terms(n, q), np.ones_like(n)
    agree = q - n
    if scheme == "annotations":
        return agree / np.maximum(n - 1.0, 1.0), n
    if scheme == "annotations_m1":
        return agree / np.maximum(n, 2.0), n - 1.0
    return agree / 2.0, n * (n - 1.0) / 2.0  # edges, inv_var


def spa_batch(
    x: NDArray[np.float64], w: NDArray[np.float64] | None, *, weights: WeighingScheme = "annotations_m1"
) -> NDArray[np.float64]:
    """SPA for each batch of item weights ``w``; see :func:`spa`.

    ``w`` has shape ``(B, n_rows)``; None: unit weights.
    """
    _check_scheme(weights)
    numerator = np.zeros(n_batches(w))
    denominator = np.zeros(n_batches(w))
    if weights == "inv_var_class":
        totals = sum((weighted_sum(block.w, block.x) for block in row_blocks(x, w)),
                     np.zeros((n_batches(w), x.shape[1])))
        with np.errstate(divide="ignore", invalid="ignore"):
            probabilities = (totals / totals.sum(axis=1, keepdims=True))[:, None, :]
        for block in row_blocks(x, w, squares=True):
            k = np.where(block.n >= 2, _inverse_variance(block.n[None, :], probabilities), 0.0)
            p = item_agreement_terms(block.n, block.q)
            numerator += (block.w * k * p).sum(axis=1)
            denominator += (block.w * k).sum(axis=1)
    else:
        for block in row_blocks(x, w, squares=True):
            pairable = block.w * (block.n >= 2)
            weighted, k = _weighted_agreement(block.n, block.q, weights)
            numerator += weighted_sum(pairable, weighted)
            denominator += weighted_sum(pairable, k)
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(denominator > 0, numerator / np.where(denominator > 0, denominator, 1.0), np.nan)


def spa(counts: ArrayLike | LabelCounts, *, weights: WeighingScheme = "annotations_m1") -> float:
    """Sparse Probability of Agreement (Nørregaard & Derczynski 2022, eq. 7).

    .. math::

        \\bar P_{spa} = \\frac{1}{\\mathbf{1}^\\top \\mathbf{k}} \\sum_i k_i \\hat P_i,
        \\qquad \\hat P_i = \\frac{1}{n_i(n_i-1)} \\sum_c n_{ic}(n_{ic}-1)

    An unbiased estimate of the probability of agreement of the fully
    annotated data when annotations are missing at random (Nørregaard &
    Derczynski 2022, section 4); on complete data it equals Fleiss'
    :math:`\\bar P`.

    Parameters
    ----------
    counts : array_like or LabelCounts, with shape (n_items, n_categories)
    weights : str, default "annotations_m1"
        The weighing scheme ``k``; see :func:`spa_weights`. For
        ``inv_var_class`` the class distribution is estimated from all labels
        in ``counts`` pooled.

    Returns
    -------
    float
        NaN, with an :class:`~agreement.UndefinedMeasureWarning`, when no item
        has two or more annotations.

    References
    ----------
    Nørregaard, J. and Derczynski, L. Sparse Probability of Agreement.

    Examples
    --------
    Figure 1 of the paper: 11 annotations, 5 + 3 + 2 + 1, so 14 of 55 edges agree.

    >>> round(spa([[5, 3, 2, 1]]), 4)
    0.2545
    """
    x = as_count_matrix(counts)
    value = float(spa_batch(x, None, weights=weights)[0])
    if np.isnan(value):
        return warn_undefined("SPA", "no item has two or more annotations")
    return value
