"""Bootstrap confidence intervals over items, seeded and vectorized.

Items are resampled with replacement. For item-level measures (SPA, alpha,
Fleiss, the augmented kappa) the distinct rows of the count matrix are drawn
with multinomial counts, which is the same distribution as drawing items and
costs O(distinct rows) per resample; for two-rater measures the contingency
table's cells are drawn with multinomial counts, which again is item
resampling. Every resample goes through the measure's own batch function, so
the interval is of exactly the estimator that was reported. Klemens (2012)
reports bootstrap standard errors for kappa and P_I this way.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Callable
from dataclasses import dataclass
from functools import partial

import numpy as np
from numpy.typing import ArrayLike, NDArray

from agreement.alpha import Level, alpha_batch, resolve_metric
from agreement.augmented import augmented_batch
from agreement.counts import LabelCounts, as_contingency_table, as_count_matrix
from agreement.itemsums import compress_rows, unit_weights
from agreement.kappa import fleiss_batch
from agreement.pairwise import TWO_RATER_MEASURES
from agreement.spa import WeighingScheme, spa_batch
from agreement.undefined import UndefinedMeasureWarning

__all__ = ["ITEM_MEASURES", "ConfidenceInterval", "bootstrap_ci", "bootstrap_distinct", "bootstrap_items",
           "bootstrap_table", "canonical_rows"]

ITEM_MEASURES = ("spa", "alpha", "fleiss", "augmented")
BatchOverItems = Callable[[NDArray[np.float64], NDArray[np.float64]], NDArray[np.float64]]
BatchOverTables = Callable[[NDArray[np.float64]], NDArray[np.float64]]
_CELLS_PER_CHUNK = 4_000_000


@dataclass(frozen=True)
class ConfidenceInterval:
    """A point estimate with its percentile bootstrap interval.

    Attributes
    ----------
    estimate : float
        The measure on the data as given.
    low, high : float
        Percentile interval bounds.
    standard_error : float
        Standard deviation of the resampled values.
    confidence : float
        Nominal coverage, e.g. 0.95.
    n_resamples : int
        Resamples drawn.
    n_undefined : int
        Resamples on which the measure was undefined (left out).
    """

    estimate: float
    low: float
    high: float
    standard_error: float
    confidence: float
    n_resamples: int
    n_undefined: int


def _check(n_resamples: int, confidence: float) -> None:
    if not 0.0 < confidence < 1.0:
        raise ValueError(f"confidence must lie strictly between 0 and 1; got {confidence}.")
    if n_resamples < 2:
        raise ValueError(f"The bootstrap needs at least 2 resamples; got {n_resamples}.")


def _summarize(estimate: float, draws: NDArray[np.float64], confidence: float) -> ConfidenceInterval:
    valid = draws[~np.isnan(draws)]
    undefined = int(draws.size - valid.size)
    if undefined:
        warnings.warn(
            f"The measure was undefined on {undefined} of {draws.size} bootstrap resamples; "
            "the interval is taken over the others.",
            UndefinedMeasureWarning,
            stacklevel=3,
        )
    if valid.size < 2:
        low = high = se = float("nan")
    else:
        low, high = (float(q) for q in np.quantile(valid, [(1 - confidence) / 2, (1 + confidence) / 2]))
        se = float(valid.std(ddof=1))
    return ConfidenceInterval(float(estimate), low, high, se, confidence, int(draws.size), undefined)


def canonical_rows(counts: NDArray[np.float64]) -> NDArray[np.float64]:
    """Each item's counts in decreasing order, columns empty in every row dropped.

    SPA (and any measure of each item's counts alone, not of which
    categories hold them) is the same on these rows; resampling them gives
    the same interval whatever order the categories came in, and whether the
    categories are known at all (the live sums keep nominal items packed).

    Examples
    --------
    >>> canonical_rows(np.array([[0., 2., 1., 0.], [3., 0., 0., 0.]])).tolist()
    [[2.0, 1.0], [3.0, 0.0]]
    """
    ordered = -np.sort(-np.asarray(counts, dtype=np.float64), axis=1)
    if ordered.size == 0:
        return ordered
    return ordered[:, : max(1, int((ordered > 0).sum(axis=1).max()))]


def bootstrap_items(
    x: NDArray[np.float64],
    batch: BatchOverItems,
    *,
    n_resamples: int = 1000,
    confidence: float = 0.95,
    seed: int | None = None,
) -> ConfidenceInterval:
    """Percentile interval of an item-level batch measure, resampling the rows of ``x``.

    Parameters
    ----------
    x : ndarray, with shape (n_items, width)
        One row per item.
    batch : callable
        ``batch(rows, weights)`` giving one value per row of ``weights``
        (shape ``(B, n_rows)``), such as :func:`agreement.spa.spa_batch`.
    n_resamples, confidence, seed
        Number of resamples, nominal coverage, and the random seed.
    """
    _check(n_resamples, confidence)
    estimate = float(batch(x, unit_weights(x.shape[0]))[0])
    rows, multiplicity = compress_rows(x)
    return bootstrap_distinct(rows, multiplicity, batch, n_resamples=n_resamples, confidence=confidence, seed=seed,
                              estimate=estimate)


def bootstrap_distinct(
    rows: NDArray[np.float64],
    multiplicity: NDArray[np.int64],
    batch: BatchOverItems,
    *,
    n_resamples: int = 1000,
    confidence: float = 0.95,
    seed: int | None = None,
    estimate: float | None = None,
) -> ConfidenceInterval:
    """:func:`bootstrap_items` of items given by their distinct rows and multiplicities.

    The items' distinct rows are ``rows``, each held by ``multiplicity`` items.

    Resampling ``n`` items with replacement draws each distinct row a
    multinomial number of times (probabilities ``multiplicity / n``); given
    the rows in the order :func:`agreement.itemsums.compress_rows` gives
    them, the draws are those :func:`bootstrap_items` makes from the items
    themselves with the same seed. A caller that keeps the distinct rows as
    items change (the timeline) resamples without the items.

    Parameters
    ----------
    rows : ndarray, with shape (U, width)
    multiplicity : ndarray of int, with shape (U,)
    batch, n_resamples, confidence, seed
        As in :func:`bootstrap_items`.
    estimate : float, optional
        The measure on the items (by default ``batch`` weighted by the multiplicities).
    """
    _check(n_resamples, confidence)
    if estimate is None:
        estimate = float(batch(rows, multiplicity[None, :].astype(np.float64))[0]) if len(rows) else math.nan
    n_items = int(multiplicity.sum())
    if n_items == 0:
        return _summarize(estimate, np.full(n_resamples, np.nan), confidence)
    rng = np.random.default_rng(seed)
    probabilities = multiplicity / n_items
    chunk = max(1, _CELLS_PER_CHUNK // max(rows.shape[0], 1))
    draws = np.concatenate([
        batch(rows, rng.multinomial(n_items, probabilities, size=min(chunk, n_resamples - start)).astype(np.float64))
        for start in range(0, n_resamples, chunk)
    ])
    return _summarize(estimate, draws, confidence)


def bootstrap_table(
    table: ArrayLike,
    batch: BatchOverTables,
    *,
    n_resamples: int = 1000,
    confidence: float = 0.95,
    seed: int | None = None,
) -> ConfidenceInterval:
    """Percentile interval of a two-rater batch measure, resampling the items of a table.

    Parameters
    ----------
    table : array_like, with shape (n_categories, n_categories)
        Contingency table of whole counts.
    batch : callable
        ``batch(tables)`` giving one value per table of a ``(B, C, C)`` stack.
    """
    _check(n_resamples, confidence)
    t = as_contingency_table(table)
    if not np.allclose(t, np.round(t)):
        raise ValueError("Bootstrapping a contingency table needs whole counts of items.")
    estimate = float(batch(t[None])[0])
    n_items = round(t.sum())
    if n_items == 0:
        return _summarize(estimate, np.full(n_resamples, np.nan), confidence)
    rng = np.random.default_rng(seed)
    draws = rng.multinomial(n_items, t.ravel() / t.sum(), size=n_resamples).reshape(n_resamples, *t.shape)
    return _summarize(estimate, batch(draws.astype(np.float64)), confidence)


def bootstrap_ci(
    data: ArrayLike | LabelCounts,
    measure: str,
    *,
    n_resamples: int = 1000,
    confidence: float = 0.95,
    seed: int | None = None,
    level: Level = "nominal",
    values: ArrayLike | None = None,
    weights: WeighingScheme = "annotations_m1",
) -> ConfidenceInterval:
    """Bootstrap confidence interval of any measure of this package, by name.

    Parameters
    ----------
    data : array_like or LabelCounts
        A count matrix (items x categories) for ``"spa"``, ``"alpha"``,
        ``"fleiss"`` and ``"gwet"`` (AC1, or AC2 at ``level``); ``[M_A | M_B]`` (items x 2 labels) for ``"augmented"``;
        a contingency table for ``"cohen"``, ``"scott"``, ``"pabak"``,
        ``"percent"`` and ``"information"``.
    measure : str
        The measure's name.
    n_resamples : int, default 1000
    confidence : float, default 0.95
    seed : int, optional
        Seed of the random generator; the same seed gives the same interval.
    level, values
        For ``"alpha"``: as in :func:`agreement.krippendorff_alpha`; for
        ``"gwet"``: the weights' level and the categories' values.
    weights
        For ``"spa"``: the weighing scheme.

    Examples
    --------
    >>> ci = bootstrap_ci([[2, 0], [0, 2], [1, 1], [2, 0]], "spa", n_resamples=200, seed=1)
    >>> round(ci.estimate, 3)
    0.75
    """
    if measure in TWO_RATER_MEASURES:
        return bootstrap_table(data, TWO_RATER_MEASURES[measure], n_resamples=n_resamples, confidence=confidence,
                               seed=seed)
    if measure == "alpha":
        x, metric = resolve_metric(data, level, values)
        batch: BatchOverItems = partial(alpha_batch, metric=metric)
    elif measure == "spa":
        x, batch = as_count_matrix(data), partial(spa_batch, weights=weights)
    elif measure == "fleiss":
        x, batch = as_count_matrix(data), fleiss_batch
    elif measure == "gwet":
        from agreement.gwet import LEVEL_WEIGHTS, agreement_weights, gwet_batch

        x = as_count_matrix(data)
        batch = partial(gwet_batch, weights=agreement_weights(x.shape[1], kind=LEVEL_WEIGHTS[level], values=values))
    elif measure == "augmented":
        x, batch = np.asarray(data, dtype=np.float64), augmented_batch
    else:
        known = ", ".join([*ITEM_MEASURES, *TWO_RATER_MEASURES])
        raise ValueError(f"Unknown measure {measure!r}; choose one of: {known}.")
    return bootstrap_items(x, batch, n_resamples=n_resamples, confidence=confidence, seed=seed)
