"""The kappa family: Cohen, Scott / Siegel & Castellan, Fleiss, PABAK, prevalence and bias.

Di Eugenio & Glass, "The Kappa Statistic: A Second Look" (2004): every
member is :math:`\\kappa = (P(A) - P(E)) / (1 - P(E))`; they differ in P(E).

* Cohen's :math:`\\kappa_{Co}`: each coder's own category distribution,
  :math:`P(E) = \\sum_j p_{j,1} p_{j,2}`.
* Scott's :math:`\\pi` = Siegel & Castellan's :math:`\\kappa_{S\\&C}`: one pooled
  distribution, :math:`P(E) = \\sum_j p_j^2`, :math:`p_j = \\sum_i n_{ij} / (Nk)`.
* Fleiss' kappa: Scott's pi for many coders, from per-item counts.
* PABAK (Byrt, Bishop & Carlin 1993): kappa adjusted for prevalence and bias,
  :math:`2P(A) - 1` for two categories.

The paper recommends reporting :math:`\\kappa_{Co}`, :math:`\\kappa_{S\\&C}` and
:math:`2P(A) - 1` together; :func:`kappa_report` does, with the prevalence and
bias indices that explain their differences.

Notes on the paper
------------------
Some printed values do not follow from the paper's own contingency tables; the
tests keep the values derived from the tables:

* Example 1 prints :math:`\\kappa_{Co} = 0.6724` and :math:`\\kappa_{S\\&C} = 0.6632`
  (truncated); the tables give 0.672489 and 0.663300.
* Example 2 says :math:`\\kappa_{Co}` "becomes 0.6632"; its table
  (70, 10 / 15, 55) gives 0.663677 (P(E) = 0.504444).
* Example 3 prints :math:`\\kappa = -0.048`; its table gives P(E) = 0.905 as
  printed, hence :math:`\\kappa = -0.005 / 0.095 = -0.052632`.
* Example 5 prints P(E) = 0.52 and :math:`\\kappa_{Co} = 0.27`; the table gives
  P(E) = 0.51 and :math:`\\kappa_{Co} = 0.285714` (:math:`\\kappa_{S\\&C} = 0.283887`,
  not the printed 0.27).
* Example 6 prints :math:`\\kappa_{Co} = 0.418`; its table gives P(E) = 0.45 as
  printed, hence :math:`\\kappa_{Co} = 0.2 / 0.55 = 0.363636`
  (:math:`\\kappa_{S\\&C} = 0.283887`, printed 0.27; 2P(A) - 1 = 0.3 as printed).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike, NDArray

from agreement.counts import LabelCounts, as_contingency_table, as_count_matrix
from agreement.itemsums import item_agreement_terms, n_batches, row_blocks, row_sums, weighted_sum
from agreement.undefined import warn_undefined

__all__ = [
    "KappaReport",
    "bias_index",
    "cohen_kappa",
    "fleiss_batch",
    "fleiss_kappa",
    "kappa_report",
    "pabak",
    "prevalence_index",
    "scott_pi",
    "table_measure_batch",
]


def _proportions(tables: NDArray[np.float64]) -> tuple[NDArray, NDArray, NDArray, NDArray]:
    """Per table in a ``(B, C, C)`` stack: N, P(A), first's and second's marginal proportions."""
    total = tables.sum(axis=(1, 2))
    safe = np.where(total > 0, total, 1.0)
    observed = np.trace(tables, axis1=1, axis2=2) / safe
    first = tables.sum(axis=2) / safe[:, None]
    second = tables.sum(axis=1) / safe[:, None]
    return total, observed, first, second


def _chance_corrected(observed: NDArray, expected: NDArray, total: NDArray) -> NDArray[np.float64]:
    defined = (total > 0) & (expected < 1.0 - 1e-12)
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(defined, (observed - expected) / np.where(defined, 1.0 - expected, 1.0), np.nan)


def table_measure_batch(tables: NDArray[np.float64], *, measure: str) -> NDArray[np.float64]:
    """A two-rater measure for each table of a ``(B, C, C)`` stack.

    ``measure`` is one of ``"cohen"``, ``"scott"``, ``"pabak"``,
    ``"percent"``; the public functions below document each.
    """
    total, observed, first, second = _proportions(tables)
    if measure == "cohen":
        return _chance_corrected(observed, (first * second).sum(axis=1), total)
    if measure == "scott":
        return _chance_corrected(observed, (((first + second) / 2.0) ** 2).sum(axis=1), total)
    if measure == "pabak":
        k = tables.shape[1]
        return _chance_corrected(observed, np.full_like(observed, 1.0 / k if k else 1.0), total)
    if measure == "percent":
        return np.where(total > 0, observed, np.nan)
    raise ValueError(f"Unknown two-rater measure {measure!r}.")


def _single(table: ArrayLike, measure: str, name: str) -> float:
    t = as_contingency_table(table)
    value = float(table_measure_batch(t[None], measure=measure)[0])
    if np.isnan(value):
        if t.sum() == 0:
            return warn_undefined(name, "no item was labeled by both annotators")
        if measure == "pabak":
            return warn_undefined(name, "there are fewer than two categories")
        return warn_undefined(name, "the expected agreement is 1 (both annotators used a single category)")
    return value


def cohen_kappa(table: ArrayLike, *, weights: str | ArrayLike | None = None,
                values: ArrayLike | None = None) -> float:
    """Cohen's kappa, chance agreement from each coder's own marginals (Di Eugenio & Glass 2004).

    Optionally weighted (Cohen 1968).

    .. math::

        \\kappa_{Co} = \\frac{P(A) - P(E)}{1 - P(E)}, \\qquad
        P(E) = \\sum_j p_{j,1}\\, p_{j,2}

    Weighted (Cohen 1968), with disagreement weights :math:`v_{jk} = 1 - w_{jk}`:

    .. math::

        \\kappa_w = 1 - \\frac{\\sum_{jk} v_{jk}\\, p_{jk}}{\\sum_{jk} v_{jk}\\, p_{j,1}\\, p_{k,2}}

    Parameters
    ----------
    table : array_like, with shape (n_categories, n_categories)
        Contingency table: rows the first annotator's labels, columns the
        second's, over the items both labeled.
    weights : {"linear", "quadratic"} or array_like, optional
        Agreement weights between categories: linear
        :math:`1 - |x_j - x_k| / (x_{max} - x_{min})`, quadratic with the
        difference squared, or a (C, C) matrix with ones on the diagonal.
        None: unweighted.
    values : array_like, optional
        The categories' values for the weights (default their ranks 1..C, as
        scikit-learn's ``cohen_kappa_score(weights=...)``).

    Returns
    -------
    float
        NaN, with a warning, for an empty table or P(E) = 1.

    References
    ----------
    Cohen, J. (1960). A coefficient of agreement for nominal scales.
    Di Eugenio, B. and Glass, M. (2004). The Kappa Statistic: A Second Look.

    Examples
    --------
    Di Eugenio & Glass 2004, Example 1 (printed 0.6724, truncated):

    >>> round(cohen_kappa([[70, 25], [0, 55]]), 6)
    0.672489

    Weighted, three ordered categories (by hand: quadratic disagreement
    weights 1/4 between neighbours and 1 two apart; observed disagreement
    (1/4)(0.1 + 0.1 + 0.1) = 0.075; chance from the marginals (0.5, 0.4, 0.1)
    and (0.5, 0.3, 0.2) is 0.1375 + 0.07 + 0.0575 = 0.265; so 1 - 0.075 / 0.265):

    >>> round(cohen_kappa([[4, 1, 0], [1, 2, 1], [0, 0, 1]], weights="quadratic"), 6)
    0.716981
    """
    if weights is None:
        return _single(table, "cohen", "Cohen's kappa")
    from agreement.gwet import agreement_weights

    t = as_contingency_table(table)
    disagreement = 1.0 - agreement_weights(t.shape[0], kind=weights, values=values)  # type: ignore[arg-type]
    total = t.sum()
    if total == 0:
        return warn_undefined("Weighted kappa", "no item was labeled by both annotators")
    p = t / total
    chance = float((disagreement * np.outer(p.sum(axis=1), p.sum(axis=0))).sum())
    if chance <= 1e-15:
        return warn_undefined("Weighted kappa", "the expected disagreement is 0 (both annotators used a single "
                                                "category)")
    return 1.0 - float((disagreement * p).sum()) / chance


def scott_pi(table: ArrayLike) -> float:
    """Scott's pi, i.e. Siegel & Castellan's kappa: pooled marginals (Di Eugenio & Glass 2004).

    .. math::

        \\kappa_{S\\&C} = \\frac{P(A) - P(E)}{1 - P(E)}, \\qquad
        P(E) = \\sum_j \\Big(\\frac{p_{j,1} + p_{j,2}}{2}\\Big)^2

    Parameters
    ----------
    table : array_like, with shape (n_categories, n_categories)

    Examples
    --------
    Di Eugenio & Glass 2004, Example 1 (printed 0.6632, truncated):

    >>> round(scott_pi([[70, 25], [0, 55]]), 6)
    0.6633
    """
    return _single(table, "scott", "Scott's pi")


def pabak(table: ArrayLike) -> float:
    """Prevalence- and bias-adjusted kappa (Byrt, Bishop & Carlin 1993; Di Eugenio & Glass 2004).

    .. math:: PABAK = \\frac{k\\,P(A) - 1}{k - 1}

    with ``k`` the number of categories (the table's size); for two
    categories this is the paper's :math:`2P(A) - 1`.

    Examples
    --------
    Di Eugenio & Glass 2004, Example 6:

    >>> round(pabak([[40, 35], [0, 25]]), 6)
    0.3
    """
    return _single(table, "pabak", "PABAK")


def prevalence_index(table: ArrayLike) -> float:
    """Byrt et al.'s prevalence index :math:`|a - d| / N` of a 2 x 2 table.

    Returns NaN, with a warning, for tables that are not 2 x 2 or empty.
    """
    t = as_contingency_table(table)
    if t.shape != (2, 2):
        return warn_undefined("The prevalence index", "it is defined for two categories only")
    if t.sum() == 0:
        return warn_undefined("The prevalence index", "no item was labeled by both annotators")
    return float(abs(t[0, 0] - t[1, 1]) / t.sum())


def bias_index(table: ArrayLike) -> float:
    """Byrt et al.'s bias index: how far the two coders' marginals differ.

    .. math:: BI = \\tfrac12 \\sum_j |p_{j,1} - p_{j,2}|

    which is :math:`|b - c| / N` for a 2 x 2 table.
    """
    t = as_contingency_table(table)
    if t.sum() == 0:
        return warn_undefined("The bias index", "no item was labeled by both annotators")
    _, _, first, second = _proportions(t[None])
    return float(np.abs(first - second).sum() / 2.0)


@dataclass(frozen=True)
class KappaReport:
    """The numbers Di Eugenio & Glass (2004) recommend reporting together for two coders.

    Attributes
    ----------
    n_items : float
        Items labeled by both coders.
    observed : float
        P(A), the proportion of items on which they agree.
    cohen : float
        Cohen's kappa.
    scott : float
        Scott's pi (Siegel & Castellan's kappa).
    pabak : float
        Prevalence- and bias-adjusted kappa.
    prevalence : float
        Prevalence index (2 x 2 tables only, else NaN).
    bias : float
        Bias index.
    """

    n_items: float
    observed: float
    cohen: float
    scott: float
    pabak: float
    prevalence: float
    bias: float


def kappa_report(table: ArrayLike) -> KappaReport:
    """Cohen's kappa, Scott's pi, PABAK, P(A), prevalence and bias for one table."""
    t = as_contingency_table(table)
    return KappaReport(
        n_items=float(t.sum()),
        observed=float(table_measure_batch(t[None], measure="percent")[0]),
        cohen=cohen_kappa(t),
        scott=scott_pi(t),
        pabak=pabak(t),
        prevalence=prevalence_index(t) if t.shape == (2, 2) else float("nan"),
        bias=bias_index(t),
    )


def fleiss_batch(x: NDArray[np.float64], w: NDArray[np.float64] | None) -> NDArray[np.float64]:
    """Fleiss' kappa for each batch of item weights ``w`` (shape ``(B, n_rows)``)."""
    n_items = np.zeros(n_batches(w))
    agreement = np.zeros(n_batches(w))
    totals = np.zeros((n_batches(w), x.shape[1]))
    for block in row_blocks(x, w, squares=True):
        pairable = block.w * (block.n >= 2)
        n_items += pairable.sum(axis=1)
        agreement += weighted_sum(pairable, item_agreement_terms(block.n, block.q))
        totals += weighted_sum(pairable, block.x)
    grand = totals.sum(axis=1)
    observed = agreement / np.where(n_items > 0, n_items, 1.0)
    expected = ((totals / np.where(grand > 0, grand, 1.0)[:, None]) ** 2).sum(axis=1)
    return _chance_corrected(observed, expected, n_items)


def fleiss_kappa(counts: ArrayLike | LabelCounts, *, method: str = "pooled") -> float:
    """Fleiss' kappa from per-item counts (Fleiss 1971; Di Eugenio & Glass 2004; Nørregaard & Derczynski 2022 eq. 3-4).

    .. math::

        \\kappa = \\frac{\\bar P - \\bar P_e}{1 - \\bar P_e}, \\qquad
        \\bar P = \\frac{1}{I}\\sum_i \\frac{\\sum_c n_{ic}(n_{ic}-1)}{n_i(n_i-1)}, \\qquad
        \\bar P_e = \\sum_c p_c^2

    Items with fewer than two annotations are left out. With the same number
    of annotations on every item this is Fleiss' kappa exactly; with varying
    numbers, :math:`\\bar P` is SPA with flat weights and :math:`p_c` the pooled
    proportion of each category.

    Gwet's generalisation to missing ratings (``method="gwet"``, what the
    irrCAC packages compute) takes :math:`p_c` as the mean over items of each
    item's share :math:`n_{ic} / n_i`, so that an item with many ratings
    weighs no more than one with few. The two agree when every item has the
    same number of ratings, and differ otherwise: on the 4 raters x 12 units
    of Krippendorff (2011) and Gwet (2014), with two items rated once or
    twice, the pooled form gives 0.760766 and Gwet's 0.761169. See
    :func:`agreement.gwet.fleiss_gwet` for its standard error.

    Parameters
    ----------
    counts : array_like or LabelCounts, with shape (n_items, n_categories)
    method : {"pooled", "gwet"}, default "pooled"

    Returns
    -------
    float
        NaN, with a warning, when no item has two annotations or
        :math:`\\bar P_e = 1`.
    """
    if method == "gwet":
        from agreement.gwet import fleiss_gwet

        return fleiss_gwet(counts).value
    if method != "pooled":
        raise ValueError(f"Unknown method {method!r}; choose pooled or gwet.")
    x = as_count_matrix(counts)
    value = float(fleiss_batch(x, None)[0])
    if np.isnan(value):
        if not (row_sums(x)[0] >= 2).any():
            return warn_undefined("Fleiss' kappa", "no item has two or more annotations")
        return warn_undefined("Fleiss' kappa", "the expected agreement is 1 (every annotation is in one category)")
    return value
