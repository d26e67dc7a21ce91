"""Augmented kappa for items that carry a primary and an optional secondary label.

Rosenberg & Binkowski, "Augmenting the kappa statistic to determine
interannotator reliability for multiply labeled data points" (seed 000).

Each annotator's labels become an annotation matrix M (items x labels): 1 for
a label given alone, ``p`` for the primary and ``1 - p`` for the secondary of
a pair, 0 otherwise (section 5.1, 0.5 <= p <= 1). For two annotators A and B:

.. math::

    p(A) = \\frac{1}{N} \\sum_{x,y} M_A[x,y]\\, M_B[x,y], \\qquad
    p(E) = \\sum_y Freq_A[y]\\, Freq_B[y], \\quad Freq[y] = \\frac{1}{N}\\sum_x M[x,y],

    \\kappa' = \\frac{p(A) - p(E)}{1 - p(E)}.

At p = 1 secondary labels are ignored and kappa' is Cohen's kappa on the
primary labels. Sweeping p from 1.0 to 0.5 shows how annotators use the
secondary label, and per-item kappa' at p = 1.0 and p = 0.5 sorts items into
the four classes of section 6.
"""

from __future__ import annotations

from dataclasses import dataclass
from itertools import combinations

import numpy as np
import pandas as pd
from numpy.typing import ArrayLike, NDArray

from agreement.counts import code_labels, require_columns, shown
from agreement.itemsums import unit_weights
from agreement.undefined import warn_undefined
from agreement.uniques import duplicated_rows

__all__ = [
    "ITEM_CLASSES",
    "AugmentedKappa",
    "RankedLabels",
    "augmented_batch",
    "augmented_item_kappa",
    "augmented_kappa",
    "augmented_sweep",
    "classify_items",
    "item_classes",
    "ranked_labels",
]

ITEM_CLASSES = ("constant high", "constant low", "better at p=1.0", "better at p=0.5")
DEFAULT_SWEEP = (1.0, 0.9, 0.8, 0.7, 0.6, 0.5)


def _check_p(p: float) -> None:
    if not 0.5 <= p <= 1.0:
        raise ValueError(f"p must lie between 0.5 and 1 (the primary label's weight); got {p}.")


@dataclass(frozen=True)
class RankedLabels:
    """Every annotator's primary and secondary labels, as indicator arrays.

    Attributes
    ----------
    single, primary, secondary : ndarray of bool, with shape (n_annotators, n_items, n_labels)
        ``single[a, x, y]``: annotator ``a`` gave item ``x`` only label ``y``;
        ``primary`` / ``secondary``: label ``y`` was the first / second of two.
    items, annotators, categories : pandas.Index
    """

    single: NDArray[np.bool_]
    primary: NDArray[np.bool_]
    secondary: NDArray[np.bool_]
    items: pd.Index
    annotators: pd.Index
    categories: pd.Index

    def matrix(self, annotator: int, *, p: float) -> NDArray[np.float64]:
        """Annotation matrix M of annotator number ``annotator`` at weight ``p`` (section 5.1)."""
        _check_p(p)
        return (self.single[annotator] + p * self.primary[annotator]
                + (1.0 - p) * self.secondary[annotator]).astype(np.float64)

    def rated(self, annotator: int) -> NDArray[np.bool_]:
        """Which items annotator number ``annotator`` labeled."""
        return (self.single[annotator] | self.primary[annotator]).any(axis=1)


def ranked_labels(
    table: pd.DataFrame,
    *,
    item: str = "item",
    annotator: str = "annotator",
    label: str = "label",
    rank: str = "rank",
    categories: ArrayLike | None = None,
) -> RankedLabels:
    """Read primary and secondary labels from a long table.

    Parameters
    ----------
    table : pandas.DataFrame
        One row per label: item, annotator, label, and rank (1 for the
        primary or only label, 2 for the secondary).
    categories : array_like, optional
        All labels, in order; by default the sorted distinct labels.

    Raises
    ------
    ValueError
        If a rank is not 1 or 2, an annotator gave an item two labels of one
        rank, or a secondary label without a primary one.
    """
    require_columns(table, [item, annotator, label, rank])
    ranks = pd.to_numeric(table[rank], errors="coerce")
    if not ranks.isin([1, 2]).all():
        bad = table[rank][~ranks.isin([1, 2])].iloc[0]
        raise ValueError(f"rank must be 1 (primary) or 2 (secondary); found {shown(bad)}.")
    keys = table[[item, annotator]].assign(_rank=ranks.to_numpy())
    duplicated = duplicated_rows([keys[item], keys[annotator], keys["_rank"]])
    if duplicated.any():
        row = keys[duplicated].iloc[0]
        raise ValueError(
            f"Annotator {shown(row[annotator])} gave item {shown(row[item])} two labels of rank {int(row['_rank'])}."
        )
    has_primary = keys[keys["_rank"] == 1].set_index([item, annotator]).index
    secondary_keys = keys[keys["_rank"] == 2].set_index([item, annotator]).index
    orphans = ~secondary_keys.isin(has_primary)
    if orphans.any():
        it, an = secondary_keys[orphans][0]
        raise ValueError(f"Annotator {shown(an)} gave item {shown(it)} a secondary label but no primary one.")
    item_codes, items = pd.factorize(table[item], sort=False)
    annotator_codes, annotators = pd.factorize(table[annotator], sort=True)
    label_codes, cats = code_labels(table[label], categories)
    shape = (len(annotators), len(items), len(cats))
    is_secondary = (ranks == 2).to_numpy()
    paired_index = pd.MultiIndex.from_arrays([table[item], table[annotator]])
    paired = paired_index.isin(secondary_keys)
    arrays = {name: np.zeros(shape, dtype=bool) for name in ("single", "primary", "secondary")}
    for name, mask in (("single", ~paired), ("primary", paired & ~is_secondary), ("secondary", is_secondary)):
        arrays[name][annotator_codes[mask], item_codes[mask], label_codes[mask]] = True
    return RankedLabels(items=pd.Index(items), annotators=pd.Index(annotators), categories=cats, **arrays)


@dataclass(frozen=True)
class AugmentedKappa:
    """Augmented kappa of two annotators (seed 000, section 5).

    Attributes
    ----------
    observed : float
        p(A), the mean per-item agreement sum(M_A * M_B).
    expected : float
        p(E), the dot product of the two label-frequency vectors.
    kappa : float
        kappa' = (p(A) - p(E)) / (1 - p(E)).
    n_items : int
        Items both annotators labeled.
    """

    observed: float
    expected: float
    kappa: float
    n_items: int


def augmented_batch(x: NDArray[np.float64], w: NDArray[np.float64]) -> NDArray[np.float64]:
    """kappa' for each batch of item weights; ``x`` is ``[M_A | M_B]`` (items x 2 labels)."""
    half = x.shape[1] // 2
    first, second = x[:, :half], x[:, half:]
    n = w.sum(axis=1)
    safe = np.where(n > 0, n, 1.0)
    observed = (w @ np.einsum("ij,ij->i", first, second)) / safe
    expected = ((w @ first) * (w @ second)).sum(axis=1) / safe**2
    defined = (n > 0) & (expected < 1.0 - 1e-12)
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(defined, (observed - expected) / np.where(defined, 1.0 - expected, 1.0), np.nan)


def augmented_kappa(first: ArrayLike, second: ArrayLike) -> AugmentedKappa:
    """Augmented kappa of two annotation matrices (seed 000, sections 5.1-5.3).

    .. math::

        \\kappa' = \\frac{p(A) - p(E)}{1 - p(E)}, \\quad
        p(A) = \\frac{\\sum_{x,y} M_A[x,y] M_B[x,y]}{N}, \\quad
        p(E) = \\sum_y Freq_A[y]\\, Freq_B[y]

    Parameters
    ----------
    first, second : array_like, with shape (n_items, n_labels)
        Annotation matrices over the same items, rows summing to 1; see
        :meth:`RankedLabels.matrix`.

    Returns
    -------
    AugmentedKappa
        ``kappa`` is NaN, with a warning, for no items or p(E) = 1.

    References
    ----------
    Rosenberg, A. and Binkowski, E. (2004). Augmenting the kappa statistic to
    determine interannotator reliability for multiply labeled data points.
    """
    a = np.asarray(first, dtype=np.float64)
    b = np.asarray(second, dtype=np.float64)
    if a.ndim != 2 or a.shape != b.shape:
        raise ValueError(f"Both annotation matrices must be items x labels of one shape; got {a.shape} and {b.shape}.")
    n = a.shape[0]
    x = np.hstack([a, b])
    kappa = float(augmented_batch(x, unit_weights(n))[0])
    observed = float(np.einsum("ij,ij->", a, b) / n) if n else float("nan")
    expected = float((a.sum(axis=0) / n) @ (b.sum(axis=0) / n)) if n else float("nan")
    if np.isnan(kappa):
        reason = "no item was labeled by both annotators" if n == 0 else "p(E) is 1 (both used a single label)"
        kappa = warn_undefined("The augmented kappa", reason)
    return AugmentedKappa(observed, expected, kappa, n)


def _pairs(ranked: RankedLabels) -> list[tuple[int, int, NDArray[np.bool_]]]:
    """Annotator pairs with the items both labeled (pairs with none left out)."""
    out = []
    for a, b in combinations(range(len(ranked.annotators)), 2):
        both = ranked.rated(a) & ranked.rated(b)
        if both.any():
            out.append((a, b, both))
    return out


def augmented_sweep(ranked: RankedLabels, *, ps: ArrayLike = DEFAULT_SWEEP) -> pd.Series:
    """kappa' at each weight p, averaged over annotator pairs (seed 000, section 6).

    With two annotators this is their kappa'; with more, the mean of each
    pair's kappa' over the items that pair labeled, as the seed averages
    across its three annotators.

    Returns
    -------
    pandas.Series
        Indexed by p.
    """
    pairs = _pairs(ranked)
    values = []
    for p in np.asarray(ps, dtype=np.float64):
        _check_p(float(p))
        kappas = [float(augmented_batch(np.hstack([ranked.matrix(a, p=p)[both], ranked.matrix(b, p=p)[both]]),
                                        unit_weights(int(both.sum())))[0]) for a, b, both in pairs]
        finite = [k for k in kappas if not np.isnan(k)]
        values.append(float(np.mean(finite)) if finite else warn_undefined(
            "The augmented kappa", "no pair of annotators has a defined kappa'"))
    return pd.Series(values, index=pd.Index(np.asarray(ps, dtype=np.float64), name="p"), name="kappa")


def augmented_item_kappa(ranked: RankedLabels, *, p: float) -> pd.Series:
    """Per-item kappa' at weight p (seed 000, section 6).

    For a pair, item x scores :math:`(p(A)_x - p(E)) / (1 - p(E))` with
    :math:`p(A)_x = \\sum_y M_A[x,y] M_B[x,y]` and the pair's corpus p(E); the
    mean over items is the pair's kappa'. With more annotators, each item
    takes the mean over the pairs that labeled it.

    Returns
    -------
    pandas.Series
        Indexed by item; NaN where no pair labeled the item.
    """
    _check_p(p)
    total = np.zeros(len(ranked.items))
    count = np.zeros(len(ranked.items))
    for a, b, both in _pairs(ranked):
        ma, mb = ranked.matrix(a, p=p)[both], ranked.matrix(b, p=p)[both]
        n = both.sum()
        expected = float((ma.sum(axis=0) / n) @ (mb.sum(axis=0) / n))
        if expected >= 1.0 - 1e-12:
            continue
        total[both] += (np.einsum("ij,ij->i", ma, mb) - expected) / (1.0 - expected)
        count[both] += 1
    with np.errstate(invalid="ignore", divide="ignore"):
        return pd.Series(np.where(count > 0, total / np.where(count > 0, count, 1.0), np.nan),
                         index=ranked.items, name="kappa")


def item_classes(kappa_p1: ArrayLike, kappa_p05: ArrayLike, *, tolerance: float = 0.1, high: float = 0.6
                 ) -> NDArray[np.str_]:
    """The class of seed 000, section 6, of items with kappa' ``kappa_p1`` at p=1.0 and ``kappa_p05`` at p=0.5.

    See :func:`classify_items`; ``""`` where kappa' is undefined (NaN).

    Examples
    --------
    >>> item_classes([0.9, 0.2, 0.8, 0.1], [0.85, 0.25, 0.3, 0.7]).tolist()
    ['constant high', 'constant low', 'better at p=1.0', 'better at p=0.5']
    """
    at_one, at_half = np.asarray(kappa_p1, dtype=float), np.asarray(kappa_p05, dtype=float)
    # kappa' is a ratio of small counts, so a difference of exactly ``tolerance`` (or a mean of exactly ``high``) is
    # common; rounded to 9 places, sums taken in another order (live or batch) fall on the same side of the bound.
    difference = np.round(at_one - at_half, 9)
    mean = np.round((at_one + at_half) / 2.0, 9)
    return np.select([difference > tolerance, difference < -tolerance, mean >= high, mean < high],
                     ["better at p=1.0", "better at p=0.5", "constant high", "constant low"], default="")


def classify_items(ranked: RankedLabels, *, tolerance: float = 0.1, high: float = 0.6) -> pd.DataFrame:
    """Sort items into the four classes of seed 000, section 6.

    ================= =========================================================
    constant high     kappa' nearly equal at p=1.0 and p=0.5, and high: a clear
                      example, consistently labeled with a single label
    constant low      nearly equal and low: inconsistently labeled either way
    better at p=1.0   agreement on the primary label, inconsistent secondaries
    better at p=0.5   primary and secondary swapped between annotators
    ================= =========================================================

    Parameters
    ----------
    ranked : RankedLabels
    tolerance : float, default 0.1
        How far apart kappa' at p=1.0 and p=0.5 may be and still count as
        "nearly constant". The seed gives no number; 0.1 is this package's choice.
    high : float, default 0.6
        The mean kappa' at or above which a constant item is "high"; the seed
        uses kappa' > 0.6 to select items for machine learning.

    Returns
    -------
    pandas.DataFrame
        Indexed by item, with columns ``kappa_p1``, ``kappa_p05`` and
        ``item_class`` (NaN class where kappa' is undefined).
    """
    at_one = augmented_item_kappa(ranked, p=1.0)
    at_half = augmented_item_kappa(ranked, p=0.5)
    classes = item_classes(at_one.to_numpy(), at_half.to_numpy(), tolerance=tolerance, high=high)
    defined = pd.Series(classes, index=ranked.items).replace("", None)  # "": kappa' undefined, no class
    item_class = defined.astype(pd.CategoricalDtype(ITEM_CLASSES))
    return pd.DataFrame({"kappa_p1": at_one, "kappa_p05": at_half, "item_class": item_class})
