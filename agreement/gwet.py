"""Gwet's AC1 and AC2, and Fleiss' kappa in Gwet's generalisation, with their analytic variance.

Gwet, K. L. (2014). *Handbook of Inter-Rater Reliability*, 4th ed., Advanced Analytics (chapters 2-5; the
multiple-rater coefficients with missing ratings), and Gwet, K. L. (2008), "Computing inter-rater reliability and
its variance in the presence of high agreement", *British Journal of Mathematical and Statistical Psychology* 61.

For ``n`` rated items (at least one rating), ``n'`` of them rated at least twice, ``q`` categories, ``r_ik`` the
raters who put item ``i`` in category ``k``, ``r_i = sum_k r_ik`` and a weight matrix ``w`` (the identity for
nominal data):

.. math::

    r^\\star_{ik} = \\sum_l w_{kl} r_{il}, \\qquad
    p_a = \\frac{1}{n'} \\sum_{i: r_i \\ge 2} \\sum_k \\frac{r_{ik} (r^\\star_{ik} - 1)}{r_i (r_i - 1)}, \\qquad
    \\pi_k = \\frac{1}{n} \\sum_i \\frac{r_{ik}}{r_i}

* AC1 / AC2: :math:`p_e = \\frac{T_w}{q (q - 1)} \\sum_k \\pi_k (1 - \\pi_k)`, :math:`T_w = \\sum_{kl} w_{kl}`;
* Fleiss' kappa (Gwet's generalisation to missing ratings): :math:`p_e = \\sum_{kl} w_{kl} \\pi_k \\pi_l`;

and the coefficient is :math:`(p_a - p_e) / (1 - p_e)`. Its variance, for items drawn from an infinite
population, is :math:`v = \\frac{1}{n (n - 1)} \\sum_i (c^\\star_i - c)^2`, with the linearised item terms
:math:`c_i = \\frac{n}{n'} \\frac{p_{a|i} - p_e [r_i \\ge 2]}{1 - p_e}` and
:math:`c^\\star_i = c_i - 2 (1 - c) \\frac{p_{e|i} - p_e}{1 - p_e}` (Gwet 2014, section 5.4; the same terms as the
irrCAC packages compute).

Weights (Gwet 2014, chapter 3): ``"quadratic"`` (interval), ``"linear"``, ``"ordinal"`` (the number of category
pairs between two ranks), ``"ratio"``, or a caller's matrix. The values place the categories; by default their
ranks 1..q.

Everything is one pass over the count matrix in row blocks: O(items x categories) time, O(block x categories)
memory, no per-item Python loop; integer counts are read as they come.
"""

from __future__ import annotations

import math
from typing import Literal, NamedTuple

import numpy as np
from numpy.typing import ArrayLike, NDArray

from agreement.counts import LabelCounts
from agreement.itemsums import BLOCK_CELLS
from agreement.undefined import warn_undefined

__all__ = ["GwetEstimate", "agreement_weights", "fleiss_gwet", "gwet_ac", "gwet_batch"]

WeightName = Literal["identity", "quadratic", "linear", "ordinal", "ratio"]
LEVEL_WEIGHTS: dict[str, WeightName] = {"nominal": "identity", "ordinal": "ordinal", "interval": "quadratic",
                                        "ratio": "ratio"}
_BLOCK = 16_384


class GwetEstimate(NamedTuple):
    """A chance-corrected coefficient with its analytic standard error and interval (Gwet 2014, ch. 5).

    Attributes
    ----------
    value : float
    observed, expected : float
        Percent agreement :math:`p_a` and chance agreement :math:`p_e`.
    std_error : float
        From the linearised item terms, items from an infinite population.
    low, high : float
        ``value -/+ t * std_error`` at the confidence asked, within [-1, 1], with ``t`` the quantile of Student's
        t with ``n - 1`` degrees of freedom (``n`` the rated items), as Gwet (2014, section 5.4) and irrCAC
        compute it; on Krippendorff's 12-unit example AC1's interval is (0.461, 1).
    n_items : int
        Items rated at least once.
    """

    value: float
    observed: float
    expected: float
    std_error: float
    low: float
    high: float
    n_items: int


def agreement_weights(n_categories: int, *, kind: WeightName | ArrayLike = "identity",
                      values: ArrayLike | None = None) -> NDArray[np.float64]:
    """Gwet's agreement weights between categories, 1 on the diagonal (Gwet 2014, ch. 3).

    Parameters
    ----------
    n_categories : int
    kind : {"identity", "quadratic", "linear", "ordinal", "ratio"} or array_like
        A name, or a caller's (q, q) matrix with ones on the diagonal and values in [0, 1].
    values : array_like, optional
        The categories' numeric values (default 1..q) for the quadratic, linear and ratio weights.

    Examples
    --------
    >>> agreement_weights(3, kind="quadratic").round(2).tolist()
    [[1.0, 0.75, 0.0], [0.75, 1.0, 0.75], [0.0, 0.75, 1.0]]
    >>> agreement_weights(3, kind="ordinal").round(3).tolist()
    [[1.0, 0.667, 0.0], [0.667, 1.0, 0.667], [0.0, 0.667, 1.0]]
    """
    q = int(n_categories)
    if not isinstance(kind, str):
        w = np.asarray(kind, dtype=np.float64)
        if w.shape != (q, q) or not np.isfinite(w).all() or (w < 0).any() or (w > 1).any() \
                or not np.allclose(np.diag(w), 1.0):
            raise ValueError(f"Agreement weights must be a ({q}, {q}) matrix of values in [0, 1] with ones on the "
                             "diagonal.")
        return w
    if kind == "identity" or q < 2:
        return np.eye(q)
    if kind == "ordinal":
        ranks = np.arange(q)
        between = np.abs(ranks[:, None] - ranks[None, :]) + 1.0
        pairs = between * (between - 1.0) / 2.0
        return 1.0 - pairs / pairs.max()
    v = np.arange(1.0, q + 1.0) if values is None else np.asarray(values, dtype=np.float64)
    if v.shape != (q,) or not np.isfinite(v).all():
        raise ValueError(f"values must give one finite number per category ({q}); got shape {v.shape}.")
    spread = v.max() - v.min()
    if spread <= 0:
        return np.eye(q)
    if kind == "quadratic":
        return 1.0 - ((v[:, None] - v[None, :]) / spread) ** 2
    if kind == "linear":
        return 1.0 - np.abs(v[:, None] - v[None, :]) / spread
    if kind == "ratio":
        if (v <= 0).any():
            raise ValueError("Ratio weights need positive category values.")
        ratio = ((v[:, None] - v[None, :]) / (v[:, None] + v[None, :])) ** 2
        return 1.0 - ratio / ((v.max() - v.min()) / (v.max() + v.min())) ** 2
    raise ValueError(f"Unknown weights {kind!r}; choose identity, quadratic, linear, ordinal, ratio or a matrix.")


def _matrix(counts: ArrayLike | LabelCounts) -> NDArray[np.generic]:
    matrix = counts.counts if isinstance(counts, LabelCounts) else np.asarray(counts)
    if matrix.ndim != 2:
        raise ValueError(f"Counts must be a two-dimensional array of items by categories; got {matrix.ndim} "
                         "dimension(s).")
    if matrix.dtype.kind not in "iuf":
        matrix = matrix.astype(np.float64)
    return matrix


def _check_block(block: NDArray[np.float64]) -> None:
    if not np.isfinite(block).all() or (block < 0).any():
        raise ValueError("Counts must be finite and non-negative.")


def _estimate(counts: ArrayLike | LabelCounts, weights: NDArray[np.float64] | None, *, chance: str,
              confidence: float, name: str) -> GwetEstimate:
    """The coefficient and its variance.

    ``weights`` None is the identity, never built (free text has thousands of categories, and a q x q matrix would dwarf
    the counts).
    """
    x = _matrix(counts)
    n_rows, q = x.shape
    if weights is not None and weights.shape != (q, q):
        raise ValueError(f"The weights must be ({q}, {q}) for {q} categories; got {weights.shape}.")
    if not 0 < confidence < 1:
        raise ValueError(f"The confidence must lie between 0 and 1; got {confidence}.")
    weight_sum = float(q) if weights is None else float(weights.sum())
    # A block's columns, each contiguous, summed by numpy's own loops and not BLAS, whose threads only slow a
    # machine with busy cores down (agreement.itemsums); this also converts integer counts a block at a time.
    rows = max(64, min(_BLOCK, BLOCK_CELLS // max(q, 1)))
    buffer = np.empty((q, min(rows, n_rows)))

    def columns(start: int) -> NDArray[np.float64]:
        """The columns of a block of rows, in the buffer the next block reuses.

        Rows ``start`` to ``start + rows``, as an array of shape ``(q, m)``.
        """
        block = buffer[:, :min(rows, n_rows - start)]
        np.copyto(block, x[start:start + rows].T, casting="unsafe")
        return block

    def sums(block: NDArray[np.float64]) -> tuple[NDArray[np.float64], NDArray[np.float64], NDArray[np.float64]]:
        """Per item: r_i, sum_k r_ik (r*_ik - 1), and 1 / r_i (0 for unrated items); row products only."""
        r = np.add.reduce(block, axis=0)
        star = block if weights is None else np.einsum("kj,ji->ki", weights, block)
        within = np.einsum("ji,ji->i", block, star) - r
        inverse = np.divide(1.0, r, out=np.zeros_like(r), where=r >= 1)
        return r, within, inverse

    # First pass: n, n', p_a's numerator and the category proportions pi.
    n1 = n2 = 0
    agreement = 0.0
    pi_sum = np.zeros(q)
    for start in range(0, n_rows, rows):
        block = columns(start)
        _check_block(block)
        r, within, inverse = sums(block)
        pair_inverse = np.divide(1.0, r * (r - 1.0), out=np.zeros_like(r), where=r >= 2)
        n1 += int(np.count_nonzero(inverse))
        n2 += int(np.count_nonzero(pair_inverse))
        agreement += float(np.add.reduce(within * pair_inverse))
        pi_sum += np.add.reduce(block * inverse, axis=1)
    if n2 == 0:
        return _undefined(name, "no item has two or more ratings", n1)
    pi = pi_sum / n1
    observed = agreement / n2
    if chance == "gwet":
        expected = float(weight_sum / (q * (q - 1.0)) * (pi * (1.0 - pi)).sum()) if q >= 2 else 0.0
    else:
        expected = float(pi @ pi) if weights is None else float(pi @ weights @ pi)
    if expected >= 1.0 - 1e-12:
        return _undefined(name, "the chance agreement is 1 (every rating is in one category)", n1)
    value = (observed - expected) / (1.0 - expected)
    # Second pass: the linearised item terms and their spread (the variance), over the rated items.
    if chance == "gwet":
        item_chance_of = (weight_sum / (q * (q - 1.0))) * (1.0 - pi) if q >= 2 else np.zeros(q)
    else:
        item_chance_of = pi if weights is None else (weights @ pi + weights.T @ pi) / 2.0
    spread = 0.0
    scale = (n1 / n2) / (1.0 - expected)
    for start in range(0, n_rows, rows):
        block = columns(start)
        r, within, inverse = sums(block)
        paired = r >= 2
        item_observed = np.divide(within, r * (r - 1.0), out=np.zeros_like(r), where=paired)
        item_value = scale * (item_observed - expected * paired)
        item_chance = np.einsum("j,ji->i", item_chance_of, block) * inverse
        linearised = item_value - 2.0 * (1.0 - value) * (item_chance - expected) / (1.0 - expected) - value
        rated = linearised[inverse > 0]
        spread += float(np.add.reduce(rated * rated))
    std_error = math.sqrt(spread / (n1 * (n1 - 1.0))) if n1 > 1 else math.nan
    if n1 > 1:
        from scipy.stats import t as student_t  # here: scipy.stats takes longer to import than the rest of the package

        half = float(student_t.ppf(0.5 + confidence / 2.0, n1 - 1)) * std_error
    else:
        half = math.nan
    return GwetEstimate(float(value), float(observed), expected, std_error, max(-1.0, value - half),
                        min(1.0, value + half), n1)


def gwet_batch(x: NDArray[np.float64], w: NDArray[np.float64] | None, *,
               weights: NDArray[np.float64]) -> NDArray[np.float64]:
    """AC1/AC2 for each row of item weights ``w``, for the bootstrap.

    ``w`` has shape ``(B, n_rows)``; None: every row once.

    ``x`` holds distinct count rows (see :func:`agreement.itemsums.compress_rows`); NaN where undefined.
    """
    x = np.asarray(x, dtype=np.float64)
    q = x.shape[1]
    w = np.ones((1, x.shape[0])) if w is None else np.atleast_2d(w)
    r = x.sum(axis=1)
    rated, paired = r >= 1, r >= 2
    within = np.einsum("ij,ij->i", x, x @ weights.T - 1.0)
    item_observed = np.where(paired, within / np.where(paired, r * (r - 1.0), 1.0), 0.0)
    share = np.where(rated[:, None], x / np.where(rated, r, 1.0)[:, None], 0.0)
    n1, n2 = w @ rated, w @ paired
    with np.errstate(divide="ignore", invalid="ignore"):
        observed = (w @ item_observed) / n2
        pi = (w @ share) / n1[:, None]
        expected = (weights.sum() / (q * (q - 1.0))) * (pi * (1.0 - pi)).sum(axis=1) if q >= 2 else np.zeros(len(w))
        value = (observed - expected) / (1.0 - expected)
    return np.where((n2 > 0) & (expected < 1.0 - 1e-12), value, np.nan)


def _undefined(name: str, reason: str, n_items: int) -> GwetEstimate:
    nan = warn_undefined(name, reason)
    return GwetEstimate(nan, nan, nan, nan, nan, nan, n_items)


def gwet_ac(counts: ArrayLike | LabelCounts, *, level: str = "nominal", values: ArrayLike | None = None,
            weights: WeightName | ArrayLike | None = None, confidence: float = 0.95) -> GwetEstimate:
    """Gwet's AC1 (nominal) or AC2 (weighted), for many raters and missing ratings (Gwet 2014, 2008).

    Parameters
    ----------
    counts : array_like or LabelCounts, with shape (n_items, n_categories)
        How many raters put each item in each category; integer or float, read as it comes. The columns are the
        scale's categories: their number ``q`` enters the chance agreement, so pass the scale's full set (a
        category nobody chose still counts).
    level : {"nominal", "ordinal", "interval", "ratio"}
        Chooses the weights: identity (AC1), ordinal, quadratic or ratio (AC2).
    values : array_like, optional
        The categories' numeric values, for quadratic and ratio weights (default 1..q).
    weights : str or array_like, optional
        Overrides ``level``: a weight name (also ``"linear"``) or a (q, q) matrix.
    confidence : float, default 0.95
        Coverage of the interval.

    Returns
    -------
    GwetEstimate
        The coefficient with :math:`p_a`, :math:`p_e`, its standard error and interval. NaN values, with an
        ``UndefinedMeasureWarning``, when no item has two ratings or :math:`p_e = 1`.

    References
    ----------
    Gwet, K. L. (2014). Handbook of Inter-Rater Reliability, 4th ed., chapters 4 and 5.

    Examples
    --------
    Two raters agree on 18 of 20 items, all of them "yes" (Di Eugenio & Glass 2004, Example 3, has this shape): Fleiss'
    kappa is -0.0526, AC1 is high.

    >>> counts = [[2, 0]] * 18 + [[1, 1]] * 2
    >>> round(gwet_ac(counts).value, 4)
    0.8895

    The 4 raters x 12 units of Gwet (2014) and Krippendorff (2011), values 1..5: AC1 0.77544 (SE 0.14295) as
    Gwet prints, and AC2 with quadratic weights 0.914.

    >>> from agreement.counts import label_counts
    >>> import pandas as pd
    >>> table = pd.read_csv("examples/krippendorff_2011.csv")
    >>> estimate = gwet_ac(label_counts(table))
    >>> round(estimate.value, 5), round(estimate.std_error, 5)
    (0.77544, 0.14295)
    """
    if weights is None:
        if level not in LEVEL_WEIGHTS:
            raise ValueError(f"Unknown level {level!r}; choose nominal, ordinal, interval or ratio.")
        weights = LEVEL_WEIGHTS[level]
    q = _matrix(counts).shape[1]
    if isinstance(weights, str) and weights == "identity":
        return _estimate(counts, None, chance="gwet", confidence=confidence, name="Gwet's AC1")
    w = agreement_weights(q, kind=weights, values=values)
    identity = np.array_equal(w, np.eye(q))
    return _estimate(counts, None if identity else w, chance="gwet", confidence=confidence,
                     name="Gwet's AC1" if identity else "Gwet's AC2")


def fleiss_gwet(counts: ArrayLike | LabelCounts, *, weights: WeightName | ArrayLike = "identity",
                values: ArrayLike | None = None, confidence: float = 0.95) -> GwetEstimate:
    """Fleiss' kappa as Gwet generalises it to missing ratings, with its analytic variance.

    As in Gwet (2014), ch. 5.

    :math:`p_a` as for AC1; chance from the category proportions :math:`\\pi_k` averaged over items,
    :math:`p_e = \\sum_{kl} w_{kl} \\pi_k \\pi_l`. With the same number of ratings on every item this is Fleiss'
    kappa; with varying numbers it differs from :func:`agreement.fleiss_kappa`, which pools the categories over
    all ratings (see there).
    """
    q = _matrix(counts).shape[1]
    w = agreement_weights(q, kind=weights, values=values)
    return _estimate(counts, w, chance="fleiss", confidence=confidence, name="Fleiss' kappa (Gwet)")
