"""Augmented kappa for items that carry a primary and an optional secondary label.

Rosenberg & Binkowski, "Augmenting the kappa statistic to determine
interannotator reliability for multiply labeled data points" (HLT-NAACL 2004).

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
from typing import NamedTuple

import numpy as np
import pandas as pd
from numpy.typing import ArrayLike, NDArray

from agreement.counts import code_labels, require_columns, shown
from agreement.itemsums import unit_weights
from agreement.ranges import run_pairs
from agreement.undefined import warn_undefined
from agreement.uniques import duplicated_rows, unique_inverse

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
    """Every annotator's primary and secondary labels, one row per annotator and item they labeled.

    Held sparse: memory O(labels given), whatever the numbers of annotators,
    items and categories (a dense indicator array of annotators x items x
    labels grows with their product).

    Attributes
    ----------
    row_annotator, row_item : ndarray of intp
        Each row's annotator (in :attr:`annotators`) and item (in :attr:`items`).
    row_first : ndarray of intp
        The row's only or primary label (in :attr:`categories`).
    row_second : ndarray of intp
        Its secondary label, -1 where it has none.
    items, annotators, categories : pandas.Index
    """

    row_annotator: NDArray[np.intp]
    row_item: NDArray[np.intp]
    row_first: NDArray[np.intp]
    row_second: NDArray[np.intp]
    items: pd.Index
    annotators: pd.Index
    categories: pd.Index

    def _indicator(self, rows: NDArray[np.bool_], labels: NDArray[np.intp]) -> NDArray[np.bool_]:
        out = np.zeros((len(self.annotators), len(self.items), len(self.categories)), dtype=bool)
        out[self.row_annotator[rows], self.row_item[rows], labels[rows]] = True
        return out

    @property
    def single(self) -> NDArray[np.bool_]:
        """Dense indicator, shape (n_annotators, n_items, n_labels).

        Entry ``[a, x, y]``: annotator ``a`` gave item ``x`` only label ``y``.
        """
        return self._indicator(self.row_second < 0, self.row_first)

    @property
    def primary(self) -> NDArray[np.bool_]:
        """Dense indicator: label ``y`` was the first of two."""
        return self._indicator(self.row_second >= 0, self.row_first)

    @property
    def secondary(self) -> NDArray[np.bool_]:
        """Dense indicator: label ``y`` was the second of two."""
        return self._indicator(self.row_second >= 0, self.row_second)

    def weights(self, *, p: float) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
        """Each row's weight on its first and on its second label in M at weight ``p`` (section 5.1).

        1 and 0 for a single label, ``p`` and ``1 - p`` for a pair.
        """
        _check_p(p)
        paired = self.row_second >= 0
        return np.where(paired, p, 1.0), np.where(paired, 1.0 - p, 0.0)

    def matrix(self, annotator: int, *, p: float) -> NDArray[np.float64]:
        """Annotation matrix M of annotator number ``annotator`` at weight ``p`` (section 5.1)."""
        first, second = self.weights(p=p)
        mine = np.flatnonzero(self.row_annotator == annotator)
        out = np.zeros((len(self.items), len(self.categories)))
        out[self.row_item[mine], self.row_first[mine]] = first[mine]
        paired = mine[self.row_second[mine] >= 0]
        out[self.row_item[paired], self.row_second[paired]] += second[paired]  # one row an item: no repeats
        return out

    def rated(self, annotator: int) -> NDArray[np.bool_]:
        """Which items annotator number ``annotator`` labeled."""
        out = np.zeros(len(self.items), dtype=bool)
        out[self.row_item[self.row_annotator == annotator]] = True
        return out


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
    item_codes, items = pd.factorize(table[item], sort=False)
    annotator_codes, annotators = pd.factorize(table[annotator], sort=True)
    label_codes, cats = code_labels(table[label], categories)
    is_secondary = (ranks == 2).to_numpy()
    key = item_codes.astype(np.int64) * max(len(annotators), 1) + annotator_codes
    duplicated = duplicated_rows([key * 2 + is_secondary])
    if duplicated.any():
        at = int(np.argmax(duplicated))
        raise ValueError(f"Annotator {shown(table[annotator].iloc[at])} gave item {shown(table[item].iloc[at])} "
                         f"two labels of rank {2 if is_secondary[at] else 1}.")
    primaries, secondaries = np.flatnonzero(~is_secondary), np.flatnonzero(is_secondary)
    sorter = np.argsort(key[primaries], kind="stable")
    found = np.searchsorted(key[primaries], key[secondaries], sorter=sorter).clip(max=max(len(primaries) - 1, 0))
    at = sorter[found] if len(primaries) else found
    orphans = (key[primaries][at] != key[secondaries]) if len(primaries) else np.ones(len(secondaries), dtype=bool)
    if orphans.any():
        row = int(secondaries[np.argmax(orphans)])
        raise ValueError(f"Annotator {shown(table[annotator].iloc[row])} gave item {shown(table[item].iloc[row])} "
                         "a secondary label but no primary one.")
    second = np.full(len(primaries), -1, dtype=np.intp)
    second[at] = label_codes[secondaries]
    return RankedLabels(row_annotator=annotator_codes[primaries].astype(np.intp),
                        row_item=item_codes[primaries].astype(np.intp), row_first=label_codes[primaries],
                        row_second=second, items=pd.Index(items), annotators=pd.Index(annotators), categories=cats)


class _PairRows(NamedTuple):
    """Every two rows of :class:`RankedLabels` on one item (annotators ``a < b``).

    Sorted by item, then pair.
    """

    a: NDArray[np.intp]
    b: NDArray[np.intp]
    pair: NDArray[np.intp]
    """Each one's pair, in the order of :func:`itertools.combinations` of the annotators."""
    n_pairs: int


def _pair_rows(ranked: RankedLabels) -> _PairRows:
    """The annotator pairs of every item, O(rows x the most annotators of an item).

    Pairs that share no item are never formed.
    """
    order = np.lexsort((ranked.row_annotator, ranked.row_item))
    first, second = run_pairs(ranked.row_item[order])  # every pair of an item's annotators, once
    a, b = order[first], order[second]
    code = ranked.row_annotator[a].astype(np.int64) * len(ranked.annotators) + ranked.row_annotator[b]
    by_item = np.lexsort((code, ranked.row_item[a]))
    distinct, pair = unique_inverse(code[by_item])
    return _PairRows(a[by_item], b[by_item], pair, len(distinct))


def _pair_terms(ranked: RankedLabels, rows: _PairRows, *, p: float
                ) -> tuple[NDArray[np.float64], NDArray[np.float64], NDArray[np.float64]]:
    """At weight ``p``: each pair row's ``sum_y M_a[x, y] M_b[x, y]``, and per pair its items and p(E).

    Per pair: its items ``n`` and its p(E) (section 5.2; NaN for a pair with no item).
    """
    first, second = ranked.weights(p=p)
    a, b, pair, n_pairs = rows
    fa, sa, fb, sb = ranked.row_first[a], ranked.row_second[a], ranked.row_first[b], ranked.row_second[b]
    observed = (first[a] * first[b] * (fa == fb) + first[a] * second[b] * (fa == sb)
                + second[a] * first[b] * (sa == fb) + second[a] * second[b] * (sa == sb))  # a weight 0 where no second
    width = len(ranked.categories)
    cells = n_pairs * width

    def frequencies(row: NDArray[np.intp]) -> NDArray[np.float64]:
        """Per pair and label, the annotator's column total of M over the pair's items."""
        spots = pair * width
        total = (np.bincount(spots + ranked.row_first[row], weights=first[row], minlength=cells)
                 + np.bincount(spots + ranked.row_second[row].clip(min=0), weights=second[row], minlength=cells))
        return total.reshape(n_pairs, width)

    n = np.bincount(pair, minlength=n_pairs).astype(np.float64)
    with np.errstate(invalid="ignore", divide="ignore"):
        expected = (frequencies(a) * frequencies(b)).sum(axis=1) / n**2
    return observed, n, expected


@dataclass(frozen=True)
class AugmentedKappa:
    """Augmented kappa of two annotators (Rosenberg & Binkowski 2004, section 5).

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
    """Augmented kappa of two annotation matrices (Rosenberg & Binkowski 2004, sections 5.1-5.3).

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


def augmented_sweep(ranked: RankedLabels, *, ps: ArrayLike = DEFAULT_SWEEP) -> pd.Series:
    """kappa' at each weight p, averaged over annotator pairs (Rosenberg & Binkowski 2004, section 6).

    With two annotators this is their kappa'; with more, the mean of each
    pair's kappa' over the items that pair labeled, as the paper averages
    across its three annotators. Computed from the pairs' rows, O(labels
    given x annotators an item), without an annotation matrix.

    Returns
    -------
    pandas.Series
        Indexed by p.
    """
    rows = _pair_rows(ranked)
    values = []
    for p in np.asarray(ps, dtype=np.float64):
        observed, n, expected = _pair_terms(ranked, rows, p=float(p))
        defined = expected < 1.0 - 1e-12
        mean = np.bincount(rows.pair, weights=observed, minlength=rows.n_pairs)[defined] / n[defined]
        kappas = (mean - expected[defined]) / (1.0 - expected[defined])
        values.append(float(np.mean(kappas)) if len(kappas) else warn_undefined(
            "The augmented kappa", "no pair of annotators has a defined kappa'"))
    return pd.Series(values, index=pd.Index(np.asarray(ps, dtype=np.float64), name="p"), name="kappa")


def _item_kappa(ranked: RankedLabels, rows: _PairRows, *, p: float) -> NDArray[np.float64]:
    """:func:`augmented_item_kappa`'s values, from the pairs' rows."""
    observed, _, expected = _pair_terms(ranked, rows, p=p)
    kept = (expected < 1.0 - 1e-12)[rows.pair]  # a pair whose p(E) is 1 has no kappa'
    chance = expected[rows.pair[kept]]
    item = ranked.row_item[rows.a[kept]]
    total = np.bincount(item, weights=(observed[kept] - chance) / (1.0 - chance), minlength=len(ranked.items))
    count = np.bincount(item, minlength=len(ranked.items))
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(count > 0, total / np.where(count > 0, count, 1), np.nan)


def augmented_item_kappa(ranked: RankedLabels, *, p: float) -> pd.Series:
    """Per-item kappa' at weight p (Rosenberg & Binkowski 2004, section 6).

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
    return pd.Series(_item_kappa(ranked, _pair_rows(ranked), p=p), index=ranked.items, name="kappa")


def item_classes(kappa_p1: ArrayLike, kappa_p05: ArrayLike, *, tolerance: float = 0.1, high: float = 0.6
                 ) -> NDArray[np.str_]:
    """The class of Rosenberg & Binkowski (2004, section 6) of items from their kappa' at p=1.0 and at p=0.5.

    The items have kappa' ``kappa_p1`` at p=1.0 and ``kappa_p05`` at p=0.5.

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
    """Sort items into the four classes of Rosenberg & Binkowski (2004, section 6).

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
        "nearly constant". The paper gives no number; 0.1 is this package's choice.
    high : float, default 0.6
        The mean kappa' at or above which a constant item is "high"; the paper
        uses kappa' > 0.6 to select items for machine learning.

    Returns
    -------
    pandas.DataFrame
        Indexed by item, with columns ``kappa_p1``, ``kappa_p05`` and
        ``item_class`` (NaN class where kappa' is undefined).
    """
    rows = _pair_rows(ranked)
    at_one = pd.Series(_item_kappa(ranked, rows, p=1.0), index=ranked.items, name="kappa")
    at_half = pd.Series(_item_kappa(ranked, rows, p=0.5), index=ranked.items, name="kappa")
    classes = item_classes(at_one.to_numpy(), at_half.to_numpy(), tolerance=tolerance, high=high)
    defined = pd.Series(classes, index=ranked.items).replace("", None)  # "": kappa' undefined, no class
    item_class = defined.astype(pd.CategoricalDtype(ITEM_CLASSES))
    return pd.DataFrame({"kappa_p1": at_one, "kappa_p05": at_half, "item_class": item_class})
