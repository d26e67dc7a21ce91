"""Information in agreement, P_I: a complexity-adjusted agreement index.

Klemens, "Mutual Information as a Measure of Intercoder Agreement" (2012).
Where kappa subtracts a model of chance agreement, P_I divides the mutual
information carried by the agreeing cells by the coders' mean entropy:

.. math::

    IA_w(X, Y) = \\sum_{i,j} w_{ij}\\, p_{ij} \\log_2 \\frac{p_{ij}}{p_{i\\cdot}\\, p_{\\cdot j}}, \\qquad
    P_I = \\frac{IA(X, Y)}{(H(X) + H(Y)) / 2}

with :math:`w = I` (eq. 2, agreement cells only) or a weight matrix for
ordinal partial credit. For several coders the pairwise terms are pooled:
:math:`P_I(X, Y, Z) = \\sum 2 IA / \\sum (H + H)` over the pairs.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike, NDArray

from agreement.counts import as_contingency_table
from agreement.undefined import warn_undefined

__all__ = [
    "InformationAgreement",
    "category_ratios",
    "information_agreement",
    "information_agreement_many",
    "information_batch",
    "klemens_ordinal_weights",
]


@dataclass(frozen=True)
class InformationAgreement:
    """Information-theoretic agreement of two coders (Klemens 2012), in bits.

    Attributes
    ----------
    information : float
        IA, the (weighted) mutual information in the agreement cells.
    entropy_first, entropy_second : float
        H(X) and H(Y), each coder's entropy.
    p_i : float
        :math:`P_I = IA / ((H(X) + H(Y)) / 2)`; NaN when both entropies are 0.
    ratios : ndarray, with shape (n_categories,)
        :math:`R_i = p_{ii} / (p_{i\\cdot} p_{\\cdot i})` per category.
    """

    information: float
    entropy_first: float
    entropy_second: float
    p_i: float
    ratios: NDArray[np.float64]


def _xlogx_ratio(joint: NDArray, expected: NDArray) -> NDArray[np.float64]:
    """``p log2(p / e)`` elementwise, with ``0 log 0 = 0``."""
    positive = joint > 0
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(positive, joint * np.log2(np.where(positive, joint / np.where(positive, expected, 1.0), 1.0)),
                        0.0)


def _entropy(p: NDArray[np.float64]) -> NDArray[np.float64]:
    return -_xlogx_ratio(p, np.ones_like(p)).sum(axis=-1)


def _weights(weights: ArrayLike | None, size: int) -> NDArray[np.float64]:
    if weights is None:
        return np.eye(size)
    w = np.asarray(weights, dtype=np.float64)
    if w.shape != (size, size):
        raise ValueError(f"The weight matrix must be {size} x {size}, like the table; got shape {w.shape}.")
    if not np.isfinite(w).all() or (w < 0).any() or (w > 1).any():
        raise ValueError("Weights must lie between 0 and 1.")
    return w


def _parts(tables: NDArray[np.float64], weights: NDArray[np.float64]) -> tuple[NDArray, NDArray, NDArray]:
    """Per table of a ``(B, C, C)`` stack: IA, H(X), H(Y)."""
    total = tables.sum(axis=(1, 2))
    joint = tables / np.where(total > 0, total, 1.0)[:, None, None]
    rows = joint.sum(axis=2)
    cols = joint.sum(axis=1)
    information = (weights * _xlogx_ratio(joint, rows[:, :, None] * cols[:, None, :])).sum(axis=(1, 2))
    return information, _entropy(rows), _entropy(cols)


def information_batch(tables: NDArray[np.float64], *, weights: ArrayLike | None = None) -> NDArray[np.float64]:
    """P_I for each table of a ``(B, C, C)`` stack; NaN where both entropies are 0."""
    information, h_first, h_second = _parts(tables, _weights(weights, tables.shape[1]))
    mean_entropy = (h_first + h_second) / 2.0
    defined = mean_entropy > 0
    return np.where(defined, information / np.where(defined, mean_entropy, 1.0), np.nan)


def category_ratios(table: ArrayLike) -> NDArray[np.float64]:
    """Klemens' per-category ratio :math:`R_i = p_{ii} / (p_{i\\cdot}\\, p_{\\cdot i})` (Klemens 2012).

    ``R_i > 1``: the coders agree on category ``i`` more often than
    independent coders would, and the category adds to P_I; ``R_i < 1``
    subtracts. NaN for a category one of the coders never used.
    """
    t = as_contingency_table(table)
    total = t.sum()
    if total == 0:
        return np.full(t.shape[0], np.nan)
    joint = t / total
    expected = joint.sum(axis=1) * joint.sum(axis=0)
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(expected > 0, np.diag(joint) / np.where(expected > 0, expected, 1.0), np.nan)


def information_agreement(table: ArrayLike, *, weights: ArrayLike | None = None) -> InformationAgreement:
    """Information in agreement and P_I of two coders (Klemens 2012, eq. 1-4).

    .. math::

        P_I = \\frac{IA(X, Y)}{(H(X) + H(Y))/2}, \\qquad
        IA = \\sum_{i,j} w_{ij}\\, p_{ij} \\log_2\\frac{p_{ij}}{p_{i\\cdot} p_{\\cdot j}}

    Parameters
    ----------
    table : array_like, with shape (n_categories, n_categories)
        Contingency table (counts or joint proportions): rows the first
        coder, columns the second.
    weights : array_like, with shape (n_categories, n_categories), optional
        :math:`w_{ij}` in [0, 1]; the identity by default (agreement cells
        only). :func:`klemens_ordinal_weights` gives the paper's ordinal
        partial credit.

    Returns
    -------
    InformationAgreement
        ``p_i`` is NaN, with a warning, when both coders used a single
        category (no information to agree on).

    References
    ----------
    Klemens, B. (2012). Mutual Information as a Measure of Intercoder Agreement.

    Examples
    --------
    Klemens 2012, Table 3 (printed IA = 0.279, P_I = 0.185):

    >>> r = information_agreement([[.2, 0, 0], [.05, .06, .19], [.15, .14, .21]])
    >>> round(r.information, 3), round(r.p_i, 3)
    (0.279, 0.186)
    """
    t = as_contingency_table(table)
    information, h_first, h_second = (float(v[0]) for v in _parts(t[None], _weights(weights, t.shape[0])))
    if t.sum() == 0:
        p_i = warn_undefined("P_I", "no item was labeled by both coders")
    elif h_first + h_second == 0:
        p_i = warn_undefined("P_I", "both coders used a single category, so there is no information to agree on")
    else:
        p_i = information / ((h_first + h_second) / 2.0)
    return InformationAgreement(information, h_first, h_second, p_i, category_ratios(t))


def information_agreement_many(tables: Iterable[ArrayLike], *, weights: ArrayLike | None = None) -> float:
    """P_I for several coders from their pairwise tables (Klemens 2012, "Many raters").

    .. math::

        P_I(X, Y, Z) = \\frac{2IA(X,Y) + 2IA(X,Z) + 2IA(Y,Z)}
                            {(H(X)+H(Y)) + (H(X)+H(Z)) + (H(Y)+H(Z))}

    Each pair's entropies are computed over the items that pair labeled, so
    the coders need not have labeled the same items.

    Parameters
    ----------
    tables : iterable of array_like
        One contingency table per pair of coders, all over the same categories.
    weights : array_like, optional
        As in :func:`information_agreement`.
    """
    stack = [as_contingency_table(t) for t in tables]
    if not stack:
        return warn_undefined("P_I", "no pair of coders was given")
    sizes = {t.shape for t in stack}
    if len(sizes) != 1:
        raise ValueError("All pairwise tables must have the same categories (the same shape).")
    nonempty = np.stack([t for t in stack if t.sum() > 0]) if any(t.sum() > 0 for t in stack) else None
    if nonempty is None:
        return warn_undefined("P_I", "no pair of coders labeled an item in common")
    information, h_first, h_second = _parts(nonempty, _weights(weights, nonempty.shape[1]))
    denominator = float((h_first + h_second).sum())
    if denominator == 0:
        return warn_undefined("P_I", "every coder used a single category, so there is no information to agree on")
    return float(2.0 * information.sum() / denominator)


def klemens_ordinal_weights(n_categories: int) -> NDArray[np.float64]:
    """Klemens' (2012) example weights for ordinal partial credit (section 3.1).

    :math:`w_{ij}` is 1 on the diagonal, 1/2 one step away, 1/4 two steps
    away and 0 beyond.
    """
    distance = np.abs(np.subtract.outer(np.arange(n_categories), np.arange(n_categories)))
    return np.select([distance == 0, distance == 1, distance == 2], [1.0, 0.5, 0.25], 0.0)
