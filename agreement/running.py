"""Running sums for live agreement: SPA and Krippendorff's alpha under item updates.

A live service changes one item at a time (an annotation is created, edited
or deleted). Recomputing from the whole count matrix would cost O(items x
categories) per event; these sums cost O(nonzero counts) per changed item for
nominal data (O(categories^2) when the full coincidence matrix is kept, which
ordinal, interval and ratio alpha need), and give the same values as the batch
functions (``tests/agreement/test_running.py``
drives random streams and compares).

Kept per item: its count vector. Kept in total, over the pairable items
(``n_i >= 2``):

* for SPA, :math:`\\sum_i k_i \\hat P_i` and :math:`\\sum_i k_i` for each simple
  weighing scheme (Nørregaard & Derczynski 2022, eq. 7);
* for alpha, the pairable values per category :math:`n_c` and the coincidence
  matrix :math:`O = \\sum_i x_i x_i^\\top / (n_i - 1)`: the observed
  disagreement is :math:`\\sum_{c,k} O_{ck} \\delta^2_{ck}` (the diagonal of
  :math:`\\delta^2` is zero) and the expected
  :math:`\\sum_{c,k} n_c n_k \\delta^2_{ck}`, for every level, the ordinal
  distances following the current marginals. Nominal alpha needs only the
  scalar :math:`\\sum_{c \\ne k} O_{ck} = \\sum_i (n_i^2 - \\sum_c x_{ic}^2) / (n_i - 1)`,
  so a control with thousands of categories (free text) keeps O(categories)
  memory and O(annotations) time per update.

Items are stored sparse (their non-zero columns), so memory is
O(annotations + categories), never items x categories; each item is one
``bytes`` object of its columns and counts (about 70 bytes for an item of two
labels, where two small arrays took 230), since a project holds millions.

:class:`RunningAgreement` has more than 20 methods because every measure it offers reads the same sums, and every
change keeps all of them in step: splitting it would copy the sums between objects on every event.
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence
from itertools import pairwise
from typing import Any, Literal

import numpy as np
from numpy.typing import ArrayLike, NDArray

from agreement.alpha import LevelName, distance_matrix
from agreement.counts import SparseCounts
from agreement.undefined import warn_undefined

__all__ = ["RunningAgreement"]

_SMALL = 8
"""Items with at most this many distinct labels are applied with plain floats, the others vectorized."""

SimpleScheme = Literal["flat", "annotations", "annotations_m1", "edges"]
_SCHEMES: tuple[SimpleScheme, ...] = ("flat", "annotations", "annotations_m1", "edges")


def _pack(columns: NDArray[np.intp], counts: NDArray[np.float64]) -> bytes:
    """An item's sparse counts as one compact object: its columns, then its counts, as float64."""
    return np.concatenate([columns, counts]).astype(np.float64, copy=False).tobytes()


def _unpack(blob: bytes) -> tuple[NDArray[np.intp], NDArray[np.float64]]:
    """The columns and counts :func:`_pack` packed."""
    values = np.frombuffer(blob, dtype=np.float64)
    half = len(values) // 2
    return values[:half].astype(np.intp), values[half:]


def _pairable_terms(n: Any, q: Any) -> tuple[Any, ...]:
    """``k_s P, k_s`` for each simple scheme ``s`` (in :data:`_SCHEMES` order), flattened.

    Of pairable items (``n >= 2``) with ``n`` annotations and sum of squares ``q``: floats for one item, arrays for
    many.
    """
    p = (q - n) / (n * (n - 1.0))  # sum_c n_c (n_c - 1) / (n (n - 1))
    edges = n * (n - 1.0) / 2.0
    return (p, n ** 0.0, n * p, n, (n - 1.0) * p, n - 1.0, edges * p, edges)  # n ** 0: one per item


def _scheme_terms(n: float, q: float) -> tuple[float, ...]:
    """:func:`_pairable_terms` of one item: zeros when it is not pairable."""
    return (0.0,) * (2 * len(_SCHEMES)) if n < 2 else _pairable_terms(n, q)


class RunningAgreement:
    """SPA and alpha sufficient statistics, updated one item at a time.

    Parameters
    ----------
    n_categories : int
        Initial number of categories; :meth:`set_item` widens it as needed.
    coincidence : bool, default True
        Keep the full coincidence matrix (O(categories^2) memory and time per
        update), which alpha at the ordinal, interval and ratio levels needs.
        Without it only nominal alpha is available, at O(non-zero counts) per
        update.

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

    def __init__(self, n_categories: int = 0, *, coincidence: bool = True) -> None:
        self._items: dict[Hashable, bytes] = {}  # per item, its packed columns and counts (_pack)
        self._keep_coincidence = coincidence
        self._size = n_categories
        self._coincidence: NDArray[np.float64] = np.zeros((n_categories, n_categories) if coincidence else (0, 0))
        self._totals: NDArray[np.float64] = np.zeros(max(n_categories, 4))
        self._nominal_observed = 0.0
        self._total = 0.0  # sum of the totals, and of their squares: nominal D_e in O(1)
        self._total_squares = 0.0
        self._spa = [0.0] * (2 * len(_SCHEMES))  # per scheme, sum k_s P and sum k_s
        self._annotations = 0.0
        self._shares = np.zeros(max(n_categories, 4))  # sum over rated items of x_ik / n_i: Gwet's pi, times n
        self._rated = 0
        self._keyless = 0  # items added by apply_items (their counts are the caller's)

    @property
    def n_categories(self) -> int:
        """Current number of categories."""
        return self._size

    @property
    def n_items(self) -> int:
        """Items with at least one annotation."""
        return len(self._items) + self._keyless

    @property
    def pairable_totals(self) -> NDArray[np.float64]:
        """Pairable values per category (a copy): the marginals that place ordinal distances."""
        return self._totals[: self._size].copy()

    @property
    def n_annotations(self) -> float:
        """Annotations over all items."""
        return self._annotations

    def _widen(self, size: int) -> None:
        if size <= self._size:
            return
        if size > len(self._totals):  # grow geometrically: a stream of new labels costs amortised O(1) each
            grown = np.zeros(max(size, 2 * len(self._totals)))
            grown[: len(self._totals)] = self._totals
            self._totals = grown
            shares = np.zeros(len(grown))
            shares[: len(self._shares)] = self._shares
            self._shares = shares
        if self._keep_coincidence:
            wider = np.zeros((size, size))
            wider[: self._size, : self._size] = self._coincidence
            self._coincidence = wider
        self._size = size

    def _apply(self, columns: NDArray[np.intp], x: NDArray[np.float64], sign: float) -> None:
        if len(x) > _SMALL:
            self._apply_wide(columns, x, sign)
            return
        # An item of a few labels (nearly every item): plain floats, where a dozen numpy calls on arrays of two
        # elements cost ten times as much.
        cols, xs = columns.tolist(), x.tolist()
        n = float(sum(xs))
        q = float(sum(v * v for v in xs))
        self._annotations += sign * n
        self._spa = [total + sign * term for total, term in zip(self._spa, _scheme_terms(n, q), strict=True)]
        if n >= 1:
            shares = self._shares
            for c, v in zip(cols, xs, strict=True):
                shares[c] += sign * v / n
            self._rated += int(sign)
        if n >= 2:
            self._nominal_observed += sign * (n * n - q) / (n - 1.0)
            totals = self._totals
            change = 0.0
            for c, v in zip(cols, xs, strict=True):
                before = float(totals[c])
                after = before + sign * v
                totals[c] = after
                change += after * after - before * before
            self._total += sign * n
            self._total_squares += change
            if self._keep_coincidence:
                coincidence, scale = self._coincidence, sign / (n - 1.0)
                for ci, vi in zip(cols, xs, strict=True):
                    for cj, vj in zip(cols, xs, strict=True):
                        coincidence[ci, cj] += vi * vj * scale

    def _apply_wide(self, columns: NDArray[np.intp], x: NDArray[np.float64], sign: float) -> None:
        """:meth:`_apply` for an item of many labels, vectorized."""
        n = float(x.sum())
        q = float(x @ x)
        self._annotations += sign * n
        self._spa = [total + sign * term for total, term in zip(self._spa, _scheme_terms(n, q), strict=True)]
        if n >= 1:
            self._shares[columns] += sign * x / n
            self._rated += int(sign)
        if n >= 2:
            self._nominal_observed += sign * (n * n - q) / (n - 1.0)
            before = self._totals[columns]
            after = before + sign * x
            self._totals[columns] = after  # columns are distinct
            self._total += sign * n
            self._total_squares += float(after @ after - before @ before)
            if self._keep_coincidence:
                self._coincidence[np.ix_(columns, columns)] += np.outer(x, x * (sign / (n - 1.0)))

    def set_item(self, key: Hashable, counts: ArrayLike) -> None:
        """Replace the counts of item ``key`` (add it if new).

        ``counts`` may be shorter than the current number of categories (the
        rest are zero) or longer (the categories grow). The cost is O(non-zero
        counts), squared when the coincidence matrix is kept.

        Raises
        ------
        ValueError
            For counts that are not a vector of finite, non-negative numbers.
        """
        x = np.asarray(counts, dtype=np.float64)
        if x.ndim != 1 or not np.isfinite(x).all() or (x < 0).any():
            raise ValueError("An item's counts must be a vector of finite, non-negative numbers.")
        columns = np.flatnonzero(x)
        self.set_sparse_item(key, columns, x[columns], n_categories=len(x))

    def set_sparse_item(self, key: Hashable, columns: ArrayLike, counts: ArrayLike, *,
                        n_categories: int | None = None, validate: bool = True) -> None:
        """Replace the counts of item ``key`` given as its non-zero ``columns`` and their ``counts``.

        The live path's form of :meth:`set_item`: O(non-zero counts), whatever
        the number of categories.

        Parameters
        ----------
        key : hashable
        columns : array_like of int
        counts : array_like of float
        n_categories : int, optional
            Widen the categories to at least this many.
        validate : bool, default True
            Check and sort ``columns`` and ``counts``. A caller that builds
            them as sorted distinct columns with positive counts (an intp and a
            float64 array) passes False and saves the checks, the larger part
            of an update's cost for items of a few annotations.

        Raises
        ------
        ValueError
            For columns that are not distinct non-negative integers, or counts
            that are not finite and positive (when validating).
        """
        if validate:
            c: NDArray[np.intp] = np.asarray(columns, dtype=np.intp).reshape(-1)
            x: NDArray[np.float64] = np.asarray(counts, dtype=np.float64).reshape(-1)
            if c.shape != x.shape or (c < 0).any() or len(np.unique(c)) != len(c):
                raise ValueError("An item's columns must be distinct non-negative integers, one per count.")
            if not np.isfinite(x).all() or (x <= 0).any():
                raise ValueError("An item's counts must be a vector of finite, non-negative numbers.")
            order = np.argsort(c, kind="stable")
            c, x = c[order], x[order]
        else:
            c, x = columns, counts  # type: ignore[assignment]
        self._widen(max(n_categories or 0, int(c[-1]) + 1 if len(c) else 0))
        packed = _pack(c, x)
        if self._items.get(key) == packed:
            return  # a repeated delivery, or an item of a re-mapped task that did not change
        self.remove_item(key)
        if len(c):
            self._items[key] = packed
            self._apply(c, x, +1.0)

    def apply_items(self, indptr: ArrayLike, columns: ArrayLike, counts: ArrayLike, *, sign: float = 1.0) -> None:
        """Add (``sign=1``) or take away (``sign=-1``) many items' counts at once, without keeping them.

        For a caller that holds the items itself, compactly (a project's
        state keeps each task's rows as codes and derives its items' counts
        when it needs them): one vectorized update for a whole page of tasks,
        where :meth:`set_sparse_item` costs a Python call per item. Taking
        away an item that was never added is the caller's error; the sums
        cannot tell.

        Parameters
        ----------
        indptr : array_like of int
            Item ``i``'s non-zero counts are ``columns[indptr[i]:indptr[i + 1]]``
            and ``counts[...]`` (CSR layout; distinct columns within an item).
        columns : array_like of int
        counts : array_like of float
            Positive.
        sign : {1.0, -1.0}

        Examples
        --------
        >>> live = RunningAgreement(3)
        >>> live.apply_items([0, 2, 3], [0, 1, 1], [2.0, 1.0, 2.0])   # items [2, 1, 0] and [0, 2, 0]
        >>> round(live.spa(), 4), live.n_items
        (0.5556, 2)
        >>> live.apply_items([0, 1], [1], [2.0], sign=-1.0)
        >>> round(live.spa(), 4), live.n_items
        (0.3333, 1)
        """
        bounds = np.asarray(indptr, dtype=np.intp)
        c = np.asarray(columns, dtype=np.intp)
        x = np.asarray(counts, dtype=np.float64)
        if len(bounds) < 2 or len(c) == 0:
            return
        self._widen(int(c.max()) + 1)
        sizes = np.diff(bounds)
        if len(sizes) <= _SMALL:  # a task's few items (the live path): plain floats beat a dozen numpy calls
            for start, end in pairwise(bounds.tolist()):
                if end > start:
                    self._keyless += int(sign)
                    self._apply(c[start:end], x[start:end], sign)
            return
        owner = np.repeat(np.arange(len(sizes)), sizes)
        n = np.bincount(owner, weights=x, minlength=len(sizes))
        q = np.bincount(owner, weights=x * x, minlength=len(sizes))
        rated = n >= 1
        self._keyless += int(sign) * int(rated.sum())
        self._annotations += sign * float(n.sum())
        np.add.at(self._shares, c[rated[owner]], sign * (x / np.where(n > 0, n, 1.0)[owner])[rated[owner]])
        self._rated += int(sign) * int(rated.sum())
        pairable = n >= 2
        if not pairable.any():
            return
        n2, q2 = n[pairable], q[pairable]
        self._spa = [total + sign * float(term.sum())
                     for total, term in zip(self._spa, _pairable_terms(n2, q2), strict=True)]
        self._nominal_observed += sign * float(((n2 * n2 - q2) / (n2 - 1.0)).sum())
        keep = pairable[owner]
        before = float(self._totals @ self._totals)
        np.add.at(self._totals, c[keep], sign * x[keep])
        self._total += sign * float(n2.sum())
        self._total_squares += float(self._totals @ self._totals) - before
        if self._keep_coincidence:  # every ordered pair of an item's counts, x_c x_k / (n - 1)
            items = np.flatnonzero(pairable)
            lengths = sizes[items]
            starts = bounds[items]
            pairs = lengths * lengths
            first_of = np.repeat(np.arange(len(items)), pairs)
            within = np.arange(int(pairs.sum())) - np.repeat(np.cumsum(pairs) - pairs, pairs)
            left = starts[first_of] + within // lengths[first_of]
            right = starts[first_of] + within % lengths[first_of]
            weight = sign * x[left] * x[right] / (n[items][first_of] - 1.0)
            np.add.at(self._coincidence, (c[left], c[right]), weight)

    def remove_item(self, key: Hashable) -> None:
        """Forget item ``key`` (nothing happens if it is unknown)."""
        old = self._items.pop(key, None)
        if old is not None:
            self._apply(*_unpack(old), -1.0)

    def sparse_item(self, key: Hashable) -> tuple[NDArray[np.intp], NDArray[np.float64]] | None:
        """The non-zero columns and counts of item ``key``, or None."""
        blob = self._items.get(key)
        return None if blob is None else _unpack(blob)

    def item(self, key: Hashable) -> NDArray[np.float64] | None:
        """The counts of item ``key`` as a dense vector, or None."""
        entry = self.sparse_item(key)
        if entry is None:
            return None
        x = np.zeros(self._size)
        x[entry[0]] = entry[1]
        return x

    def dense(self, keys: Sequence[Hashable]) -> NDArray[np.float64]:
        """The counts of ``keys`` (known items) as a dense matrix, with shape (len(keys), n_categories)."""
        matrix = np.zeros((len(keys), self._size))
        for row, key in enumerate(keys):
            columns, x = _unpack(self._items[key])
            matrix[row, columns] = x
        return matrix

    def packed(self, keys: Sequence[Hashable]) -> NDArray[np.float64]:
        """The non-zero counts of ``keys``, left-aligned in a matrix as wide as the fullest item.

        Every nominal per-item measure depends on an item's counts only, not on
        which columns hold them, so this stands for :meth:`dense` there at
        O(items x annotators) memory, whatever the number of categories.
        """
        width = max((len(self._items[key]) // 16 for key in keys), default=0)  # 8 bytes a column, 8 a count
        matrix = np.zeros((len(keys), width))
        for row, key in enumerate(keys):
            x = _unpack(self._items[key])[1]
            matrix[row, : len(x)] = x
        return matrix

    def spa(self, *, weights: SimpleScheme = "annotations_m1") -> float:
        """SPA from the running sums (Nørregaard & Derczynski 2022, eq. 7).

        NaN with a warning when no item is pairable.
        """
        if weights not in _SCHEMES:
            raise ValueError(f"Live SPA supports the schemes {', '.join(_SCHEMES)}; got {weights!r}.")
        index = 2 * _SCHEMES.index(weights)
        numerator, denominator = self._spa[index: index + 2]
        if denominator <= 1e-12:
            return warn_undefined("SPA", "no item has two or more annotations")
        return float(numerator / denominator)

    def rated_columns(self) -> NDArray[np.bool_]:
        """Which categories hold a rating now (on any item, paired or not)."""
        return self._shares[: self._size] > 1e-9

    def gwet_ac1(self, *, n_categories: int | None = None) -> float:
        """Gwet's AC1 from the running sums (see :func:`agreement.gwet_ac`); NaN with a warning when undefined.

        Its percent agreement is SPA with flat weights, and its chance term needs
        each category's share summed over the rated items, both kept here at
        O(non-zero counts) per update.

        Parameters
        ----------
        n_categories : int, optional
            The scale's number of categories ``q``; by default the categories
            that hold a rating now.
        """
        index = 2 * _SCHEMES.index("flat")
        numerator, denominator = self._spa[index: index + 2]
        if denominator <= 1e-12:
            return warn_undefined("Gwet's AC1", "no item has two or more ratings")
        shares = self._shares[: self._size]
        q = int(n_categories) if n_categories is not None else int(self.rated_columns().sum())
        pi = shares / self._rated
        expected = float((pi * (1.0 - pi)).sum() / (q - 1.0)) if q >= 2 else 0.0
        if expected >= 1.0 - 1e-12:
            return warn_undefined("Gwet's AC1", "the chance agreement is 1 (every rating is in one category)")
        return (float(numerator / denominator) - expected) / (1.0 - expected)

    def fleiss_kappa(self) -> float:
        """Fleiss' kappa, pooled (:func:`agreement.fleiss_kappa`), from the running sums.

        NaN with a warning when undefined.

        :math:`\\bar P` is SPA with flat weights and :math:`\\bar P_e = \\sum_c p_c^2`
        with :math:`p_c` the pairable values of category ``c`` over all pairable
        values, both kept here: O(1), whatever the number of categories.
        """
        index = 2 * _SCHEMES.index("flat")
        numerator, denominator = self._spa[index: index + 2]
        if denominator <= 1e-12:
            return warn_undefined("Fleiss' kappa", "no item has two or more annotations")
        chance = self._total_squares / (self._total * self._total)
        if chance >= 1.0 - 1e-12:
            return warn_undefined("Fleiss' kappa", "the expected agreement is 1 (every annotation is in one category)")
        return (float(numerator / denominator) - chance) / (1.0 - chance)

    @classmethod
    def of_counts(cls, counts: SparseCounts, *, coincidence: bool = False) -> RunningAgreement:
        """The sums of ``counts`` (:class:`agreement.counts.SparseCounts`).

        A batch computation's way to SPA, alpha, AC1 and Fleiss' kappa in memory O(annotations + categories) (nominal
        alpha only without ``coincidence``).
        """
        sums = cls(counts.n_categories, coincidence=coincidence)
        sums.apply_items(counts.indptr, counts.columns, counts.counts)
        return sums

    def _check_level(self, level: LevelName) -> None:
        if level != "nominal" and not self._keep_coincidence:
            raise ValueError(f"{level.capitalize()} alpha needs the coincidence matrix; these sums were made "
                             "without it (coincidence=False), which serves nominal alpha only.")

    def _delta(self, level: LevelName, values: ArrayLike | None) -> NDArray[np.float64]:
        totals = self.pairable_totals
        if level == "ordinal":
            return distance_matrix("ordinal", values=values, marginals=totals)
        v = np.arange(self._size, dtype=np.float64) if values is None else np.asarray(values, dtype=float)
        if v.shape != (self._size,):
            raise ValueError(f"values must give one number per category ({self._size}); got {v.shape}.")
        return distance_matrix(level, values=v)

    def _observed_expected(self, level: LevelName, values: ArrayLike | None) -> tuple[float, float]:
        """``sum O delta`` and ``n' delta n`` at ``level``; O(1) for nominal."""
        self._check_level(level)
        if level == "nominal":
            return self._nominal_observed, self._total * self._total - self._total_squares
        totals = self.pairable_totals
        delta = self._delta(level, values)
        return float((self._coincidence * delta).sum()), float(totals @ delta @ totals)

    def expected_disagreement(self, *, level: LevelName = "nominal", values: ArrayLike | None = None) -> float:
        """Krippendorff's ``D_e`` over the pairable values; NaN with a warning when fewer than two."""
        total = self._total
        if total <= 1:
            return warn_undefined("The expected disagreement", "no item has two or more annotations")
        _, expected = self._observed_expected(level, values)
        return expected / (total * (total - 1.0))

    def alpha(self, *, level: LevelName = "nominal", values: ArrayLike | None = None) -> float:
        """Krippendorff's alpha from the running sums; NaN with a warning when undefined."""
        total = self._total
        if total <= 1 + 1e-9:
            return warn_undefined("Krippendorff's alpha", "no item has two or more annotations, so there are no "
                                                          "pairable values")
        observed, expected = self._observed_expected(level, values)
        if expected <= 1e-9 * total * total:
            return warn_undefined("Krippendorff's alpha", "the expected disagreement is zero (every pairable value "
                                                          "is the same)")
        return 1.0 - (total - 1.0) * observed / expected
