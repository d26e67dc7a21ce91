"""The augmented kappa's per-item classes, kept up to date item by item.

This is the live path of Rosenberg & Binkowski (2004), section 6.

:func:`agreement.augmented.classify_items` needs, for every pair of
annotators, the pair's chance agreement over the items both labeled,

.. math:: p(E)_{ab} = \\sum_y \\bar M_a[y]\\, \\bar M_b[y], \\qquad
          \\bar M_a = \\frac{1}{n_{ab}} \\sum_{x \\in ab} M_a[x],

a corpus-wide quantity. Here each pair keeps :math:`n_{ab}` and the sums of
both annotators' rows of M at p = 1 and p = 0.5, so replacing one item costs
O(k^2 L) for its k annotators and L labels, and an item's class is computed
from its own rows and those sums: the same numbers a batch computation over
every item gives.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable
from itertools import combinations
from typing import Any

import numpy as np

from agreement.augmented import item_classes

__all__ = ["RunningAugmented"]

WEIGHTS = (1.0, 0.5)
"""The two weights p the classes compare."""

Rows = dict[str, dict[Any, float]]


def _rows(labels: Iterable[tuple[str, Any, int]], p: float) -> Rows:
    """Each annotator's row of M at weight p.

    1 for a single label, p and 1 - p for a primary and a secondary.
    """
    given: dict[str, dict[int, Any]] = defaultdict(dict)
    for annotator, label, rank in labels:
        given[annotator][int(rank)] = label
    out: Rows = {}
    for annotator, ranks in given.items():
        if 2 in ranks and 1 in ranks:
            out[annotator] = {ranks[1]: p, ranks[2]: 1.0 - p} if ranks[1] != ranks[2] else {ranks[1]: 1.0}
        elif 1 in ranks:
            out[annotator] = {ranks[1]: 1.0}
    return out


def _dot(first: dict[Any, float], second: dict[Any, float]) -> float:
    return sum(weight * second.get(label, 0.0) for label, weight in first.items())


class RunningAugmented:
    """Per-pair sums of the annotation matrices, and each item's rows, for the per-item kappa' and class.

    Examples
    --------
    >>> sums = RunningAugmented()
    >>> sums.set_item("x", [("a", "cat", 1), ("b", "cat", 1)])
    >>> sums.set_item("y", [("a", "dog", 1), ("b", "cat", 1), ("b", "dog", 2)])
    >>> sums.item_kappa("x", p=1.0), sums.item_kappa("y", p=1.0), sums.item_kappa("y", p=0.5)
    (1.0, -1.0, 0.0)
    """

    def __init__(self) -> None:
        # pair -> p -> (n_ab, sum of a's rows, sum of b's rows)
        self._pairs: dict[tuple[str, str], dict[float, list[Any]]] = {}
        # item -> its (annotator, label, rank) triples; its rows of M are derived when needed (a project holds
        # millions of items, and two weights of nested dicts per item took ten times the memory)
        self._items: dict[Any, tuple[tuple[str, Any, int], ...]] = {}

    def _add(self, rows_by_p: dict[float, Rows], sign: float) -> None:
        annotators = sorted(rows_by_p[WEIGHTS[0]])
        for a, b in combinations(annotators, 2):
            pair = self._pairs.setdefault((a, b), {p: [0.0, defaultdict(float), defaultdict(float)]
                                                   for p in WEIGHTS})
            for p in WEIGHTS:
                entry = pair[p]
                entry[0] += sign
                for label, weight in rows_by_p[p][a].items():
                    entry[1][label] += sign * weight
                for label, weight in rows_by_p[p][b].items():
                    entry[2][label] += sign * weight
            if pair[WEIGHTS[0]][0] <= 0:
                del self._pairs[(a, b)]

    def add_labels(self, labels: Iterable[tuple[str, Any, int]], *, sign: float = 1.0) -> None:
        """Add (``sign=1``) or take away (``sign=-1``) one item's labels, without keeping them.

        For a caller that holds its items' labels itself, compactly;
        :meth:`set_item` is the keyed form.
        """
        kept = tuple(labels)
        rows = {p: _rows(kept, p) for p in WEIGHTS}
        if rows[WEIGHTS[0]]:
            self._add(rows, sign)

    def set_item(self, item: Any, labels: Iterable[tuple[str, Any, int]]) -> None:
        """Replace ``item``'s labels with ``labels``: ``(annotator, label, rank)``, rank 1 or 2."""
        self.remove_item(item)
        kept = tuple((annotator, label, int(rank)) for annotator, label, rank in labels)
        if _rows(kept, WEIGHTS[0]):
            self._items[item] = kept
            self.add_labels(kept)

    def remove_item(self, item: Any) -> None:
        """Forget ``item`` (nothing happens for an item never set)."""
        labels = self._items.pop(item, None)
        if labels is not None:
            self.add_labels(labels, sign=-1.0)

    def expected(self, first: str, second: str, *, p: float) -> float:
        """The pair's chance agreement :math:`p(E)` at weight p (NaN if the pair labeled no item together)."""
        entry = self._pairs.get((min(first, second), max(first, second)), {}).get(p)
        if not entry or entry[0] <= 0:
            return float("nan")
        n, sums_a, sums_b = entry
        return sum(value * sums_b.get(label, 0.0) for label, value in sums_a.items()) / (n * n)

    def item_kappa(self, item: Any, *, p: float) -> float:
        """kappa' of one item at weight p (:meth:`labels_kappa` of its labels); NaN for an item never set."""
        labels = self._items.get(item)
        return self.labels_kappa(labels, p=p) if labels is not None else float("nan")

    def labels_kappa(self, labels: Iterable[tuple[str, Any, int]], *, p: float) -> float:
        """kappa' of an item with ``labels`` at weight p.

        The mean over its pairs of :math:`(M_a[x] M_b[x] - p(E)) / (1 - p(E))`.

        Pairs whose p(E) is 1 (no variation to correct for) are left out, as
        in :func:`agreement.augmented.augmented_item_kappa`; NaN when none is left.
        """
        rows = _rows(labels, p)
        if not rows:
            return float("nan")
        values = []
        for a, b in combinations(sorted(rows), 2):
            expected = self.expected(a, b, p=p)
            if expected < 1.0 - 1e-12:
                values.append((_dot(rows[a], rows[b]) - expected) / (1.0 - expected))
        return float(np.mean(values)) if values else float("nan")

    def item_class(self, item: Any, *, tolerance: float = 0.1, high: float = 0.6) -> str | None:
        """The item's class of Rosenberg & Binkowski 2004 (:func:`agreement.augmented.item_classes`).

        None while undefined.
        """
        return self.labels_class(self._items.get(item, ()), tolerance=tolerance, high=high)

    def labels_class(self, labels: Iterable[tuple[str, Any, int]], *, tolerance: float = 0.1,
                     high: float = 0.6) -> str | None:
        """The class of an item with ``labels`` (added to these sums), or None while undefined."""
        kept = tuple(labels)
        found = str(item_classes([self.labels_kappa(kept, p=1.0)], [self.labels_kappa(kept, p=0.5)],
                                 tolerance=tolerance, high=high)[0])
        return found or None
