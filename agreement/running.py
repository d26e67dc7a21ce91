"""Running sums for live agreement: SPA and Krippendorff's alpha under item updates.

A live service changes one item at a time (an annotation is created, edited
or deleted). Recomputing from the whole count matrix would cost O(items x
categories) per event; these sums cost O(categories^2) per changed item and
give the same values as the batch functions (``tests/agreement/test_running.py``
drives random streams and compares).

Kept per item: its count vector. Kept in total, over the pairable items
(``n_i >= 2``):

* for SPA, :math:`\\sum_i k_i \\hat P_i` and :math:`\\sum_i k_i` for each simple
  weighing scheme (seed 004, eq. 7);
* for alpha, the coincidence matrix
  :math:`O = \\sum_i x_i x_i^\\top / (n_i - 1)` and the pairable values per
  category :math:`n_c`: the observed disagreement is
  :math:`\\sum_{c,k} O_{ck} \\delta^2_{ck}` (the diagonal of :math:`\\delta^2` is
  zero) and the expected :math:`\\sum_{c,k} n_c n_k \\delta^2_{ck}`, for every
  level, the ordinal distances following the current marginals.
"""

from __future__ import annotations

from collections.abc import Hashable
from typing import Literal

import numpy as np
from numpy.typing import ArrayLike, NDArray

from agreement.alpha import LevelName, distance_matrix
from agreement.undefined import warn_undefined

__all__ = ["RunningAgreement"]

SimpleScheme = Literal["flat", "annotations", "annotations_m1", "edges"]
_SCHEMES: tuple[SimpleScheme, ...] = ("flat", "annotations", "annotations_m1", "edges")


def _scheme_terms(n: float, q: float) -> NDArray[np.float64]:
    """``[k_s P, k_s]`` for each simple scheme ``s`` of one item with ``n`` annotations and sum of squares ``q``.

    Shape ``(4, 2)``; zeros when the item is not pairable.
    """
    if n < 2:
        return np.zeros((len(_SCHEMES), 2))
    p = (q - n) / (n * (n - 1.0))  # sum_c n_c (n_c - 1) / (n (n - 1))
    edges = n * (n - 1.0) / 2.0
    return np.array([[p, 1.0], [n * p, n], [(n - 1.0) * p, n - 1.0], [edges * p, edges]])


class RunningAgreement:
    """SPA and alpha sufficient statistics, updated one item at a time.

    Parameters
    ----------
    n_categories : int
        Initial number of categories; :meth:`set_item` widens it as needed.

    Examples
    --------
    >>> live = RunningAgreement(3)
    >>> live.set_item("t1", [2, 1, 0])   # P = 1/3, weight n - 1 = 2
    >>> live.set_item("t2", [0, 2, 0])   # P = 1,   weight 1
    >>> round(live.spa(), 4)
    0.5556
    >>> live.remove_item("t2")
    >>> round(live.spa(), 4)
    0.3333
    """

    def __init__(self, n_categories: int = 0) -> None:
        self._items: dict[Hashable, NDArray[np.float64]] = {}
        self._coincidence: NDArray[np.float64] = np.zeros((n_categories, n_categories))
        self._totals: NDArray[np.float64] = np.zeros(n_categories)
        self._spa = np.zeros((len(_SCHEMES), 2))
        self._annotations = 0.0

    @property
    def n_categories(self) -> int:
        """Current number of categories."""
        return int(self._totals.shape[0])

    @property
    def n_items(self) -> int:
        """Items with at least one annotation."""
        return len(self._items)

    @property
    def pairable_totals(self) -> NDArray[np.float64]:
        """Pairable values per category (a copy): the marginals that place ordinal distances."""
        return self._totals.copy()

    @property
    def n_annotations(self) -> float:
        """Annotations over all items."""
        return self._annotations

    def _widen(self, size: int) -> None:
        if size > self.n_categories:
            grown = np.zeros((size, size))
            grown[: self.n_categories, : self.n_categories] = self._coincidence
            self._coincidence = grown
            self._totals = np.concatenate([self._totals, np.zeros(size - self.n_categories)])

    def _apply(self, x: NDArray[np.float64], sign: float) -> None:
        n = float(x.sum())
        self._annotations += sign * n
        self._spa += sign * _scheme_terms(n, float(x @ x))
        if n >= 2:
            self._coincidence += np.outer(x, x * (sign / (n - 1.0)))
            self._totals += sign * x

    def set_item(self, key: Hashable, counts: ArrayLike) -> None:
        """Replace the counts of item ``key`` (add it if new): O(categories^2).

        ``counts`` may be shorter than the current number of categories (the
        rest are zero) or longer (the categories grow).

        Raises
        ------
        ValueError
            For counts that are not a vector of finite, non-negative numbers.
        """
        x = np.asarray(counts, dtype=np.float64)
        if x.ndim != 1 or not np.isfinite(x).all() or (x < 0).any():
            raise ValueError("An item's counts must be a vector of finite, non-negative numbers.")
        self._widen(len(x))
        if len(x) < self.n_categories:
            x = np.concatenate([x, np.zeros(self.n_categories - len(x))])
        old = self._items.get(key)
        if old is not None and old.tobytes() == x.tobytes():
            return  # a repeated delivery, or an item of a re-mapped task that did not change
        self.remove_item(key)
        if x.sum() > 0:
            self._items[key] = x
            self._apply(x, +1.0)

    def remove_item(self, key: Hashable) -> None:
        """Forget item ``key`` (nothing happens if it is unknown)."""
        old = self._items.pop(key, None)
        if old is not None:
            self._apply(np.concatenate([old, np.zeros(self.n_categories - len(old))]), -1.0)

    def item(self, key: Hashable) -> NDArray[np.float64] | None:
        """The counts of item ``key``, or None."""
        x = self._items.get(key)
        return None if x is None else np.concatenate([x, np.zeros(self.n_categories - len(x))])

    def count_matrix(self) -> tuple[list[Hashable], NDArray[np.float64]]:
        """All items and their counts, for a batch computation over the same data."""
        keys = list(self._items)
        matrix = np.zeros((len(keys), self.n_categories))
        for row, key in enumerate(keys):
            x = self._items[key]
            matrix[row, : len(x)] = x
        return keys, matrix

    def spa(self, *, weights: SimpleScheme = "annotations_m1") -> float:
        """SPA from the running sums (seed 004, eq. 7); NaN with a warning when no item is pairable."""
        if weights not in _SCHEMES:
            raise ValueError(f"Live SPA supports the schemes {', '.join(_SCHEMES)}; got {weights!r}.")
        numerator, denominator = self._spa[_SCHEMES.index(weights)]
        if denominator <= 1e-12:
            return warn_undefined("SPA", "no item has two or more annotations")
        return float(numerator / denominator)

    def _delta(self, level: LevelName, values: ArrayLike | None) -> NDArray[np.float64]:
        if level == "nominal":
            return 1.0 - np.eye(self.n_categories)
        if level == "ordinal":
            return distance_matrix("ordinal", values=values, marginals=self._totals)
        v = np.arange(self.n_categories, dtype=np.float64) if values is None else np.asarray(values, dtype=float)
        if v.shape != (self.n_categories,):
            raise ValueError(f"values must give one number per category ({self.n_categories}); got {v.shape}.")
        return distance_matrix(level, values=v)

    def expected_disagreement(self, *, level: LevelName = "nominal", values: ArrayLike | None = None) -> float:
        """Krippendorff's ``D_e`` over the pairable values; NaN with a warning when fewer than two."""
        total = float(self._totals.sum())
        if total <= 1:
            return warn_undefined("The expected disagreement", "no item has two or more annotations")
        delta = self._delta(level, values)
        return float(self._totals @ delta @ self._totals / (total * (total - 1.0)))

    def alpha(self, *, level: LevelName = "nominal", values: ArrayLike | None = None) -> float:
        """Krippendorff's alpha from the running sums; NaN with a warning when undefined."""
        total = float(self._totals.sum())
        if total <= 1 + 1e-9:
            return warn_undefined("Krippendorff's alpha", "no item has two or more annotations, so there are no "
                                                          "pairable values")
        delta = self._delta(level, values)
        expected = float(self._totals @ delta @ self._totals)
        if expected <= 1e-9 * total * total:
            return warn_undefined("Krippendorff's alpha", "the expected disagreement is zero (every pairable value "
                                                          "is the same)")
        observed = float((self._coincidence * delta).sum())
        return 1.0 - (total - 1.0) * observed / expected
