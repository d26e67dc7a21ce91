"""A control's rows as integer codes: what a project's state holds, scored without putting them into words.

A table of rows (:attr:`plugin.mapping.MappedControl.rows`) names every item,
annotator and label; a project's state holds them as codes
(:mod:`plugin.state.codes`). Putting a million tasks' items into words and
hashing the words again to count them cost more than the measures themselves.
:class:`CodedRows` gives what the measures read (the count matrix, each
annotator's label of each item, the sparse counts of free text) from the codes
directly, equal to what :func:`agreement.label_counts` and
:func:`agreement.annotator_labels` make of the table: items in the order first
seen, annotators in the order their names sort, the same categories.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from functools import cached_property
from typing import Any, NamedTuple

import numpy as np
import pandas as pd

from agreement import AnnotatorLabels, LabelCounts, RankedLabels
from agreement.counts import SparseCounts, code_labels, count_matrix, sparse_counts
from agreement.uniques import narrowest_type, unique_inverse
from plugin.mapping.item_names import split_item_names

__all__ = ["CodedRows", "RankedItems", "name_order"]


def name_order(names: Sequence[Any]) -> tuple[np.ndarray, np.ndarray]:
    """Names as text in the order they sort, and each name's place in that order.

    Annotators are ordered so wherever a control's rows are read by name (the tables, their codes): a stable sort of
    their names as text.

    >>> sorted_names, place = name_order(["b", 2, "a"])
    >>> sorted_names.tolist(), place.tolist()
    (['2', 'a', 'b'], [2, 0, 1])
    """
    text = np.array([str(name) for name in names], dtype=object)
    order = np.argsort(text, kind="stable")
    place = np.empty(len(order), dtype=np.intp)
    place[order] = np.arange(len(order))
    return text[order], place


class RankedItems(NamedTuple):
    """A multiple-choice control's items with their primary and secondary labels, and each item's class.

    What the augmented kappa (Marasini, Quatto & Ripamonti 2016) and the classes of Rosenberg & Binkowski (2004)
    read, computed once for the tasks' scores and the project's.
    """

    labels: RankedLabels
    """:func:`agreement.augmented.ranked_labels` of the ranked rows."""
    classes: pd.Series
    """Each item's class, :func:`agreement.augmented.classify_items`' ``item_class``."""


@dataclass(frozen=True, eq=False)
class CodedRows:
    """Every row ``(item, annotator, label)`` of one control, as codes.

    Attributes
    ----------
    item : ndarray of int
        Each row's item, numbered from 0 over the control's items.
    annotator : ndarray of int
        Each row's annotator: a code into :attr:`annotators`.
    label : ndarray of int
        Each row's label: a code into :attr:`labels` (where a label is None or NaN, the row has none).
    labels : tuple
        Every label, by code.
    annotators : tuple of str
        Every annotator, by code.
    item_kinds : ndarray of int
        Each item's name with its task's id taken off (``":PER"`` for ``"17:PER"``), a code into :attr:`kinds`:
        what a label set's item asks about, read without naming every item.
    kinds : tuple of str
    ranked : RankedItems, optional
        A multiple-choice control's ranked items, when the project's state computed them with the tasks' scores.
    n_answered : int, optional
        The annotations behind the rows: distinct task and annotator pairs (the rows hold no task).
    """

    item: np.ndarray
    annotator: np.ndarray
    label: np.ndarray
    labels: tuple[Any, ...]
    annotators: tuple[str, ...]
    item_kinds: np.ndarray
    kinds: tuple[str, ...]
    ranked: RankedItems | None = None
    n_answered: int | None = None

    @property
    def n_rows(self) -> int:
        """Rows, a label or not: the annotations of the control's items."""
        return len(self.item)

    @cached_property
    def _missing(self) -> np.ndarray:
        """Whether each label (by code) is missing (None or NaN)."""
        return np.asarray(pd.isna(pd.Series(list(self.labels), dtype=object)), dtype=bool)

    @cached_property
    def present(self) -> np.ndarray:
        """Whether each row has a label."""
        return ~self._missing[self.label] if self._missing.any() else np.ones(self.n_rows, dtype=bool)

    def n_annotators(self) -> int:
        """Annotators with a row."""
        return int(np.count_nonzero(np.bincount(self.annotator, minlength=len(self.annotators))))

    def n_items(self) -> int:
        """Items with a row."""
        return len(self._items[0])

    def n_labels(self) -> int:
        """Distinct labels given (a missing one is none)."""
        return int(np.count_nonzero(self._used_labels() & ~self._missing))

    def _used_labels(self) -> np.ndarray:
        """Whether each label (by code) is on a row."""
        return np.bincount(self.label, minlength=len(self.labels)) > 0

    def categories(self, categories: Sequence[Any] | None) -> tuple[np.ndarray, pd.Index]:
        """Each label code's column among the categories, and the categories (the sorted labels given if None).

        A missing label's column is -1. The labels are typed as pandas types a table's column of them (ratings
        are int64, or float64 beside a missing one), so the categories are those of the table.

        Raises
        ------
        ValueError
            Naming the labels outside ``categories``, as :func:`agreement.counts.code_labels` does.
        """
        used = np.flatnonzero(self._used_labels())
        values = pd.Series([self.labels[code] for code in used.tolist()])
        given = values.notna().to_numpy()
        columns, cats = code_labels(values[given], categories)
        lookup = np.full(len(self.labels), -1, dtype=np.intp)
        lookup[used[given]] = columns
        return lookup, cats

    def _first_seen(self, rows: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
        """The distinct items of ``rows`` (default: every row) in the order first seen, and each row's place.

        Rows come in the order of their items, each task's after the last's (the usual case): the items are the
        heads of their runs, found in one pass with no hashing or sort.
        """
        items = self.item if rows is None else self.item[rows]
        if len(items) < 2:
            return items.copy(), np.zeros(len(items), dtype=np.intp)
        if bool((items[1:] >= items[:-1]).all()):
            heads = np.empty(len(items), dtype=bool)
            heads[0] = True
            np.not_equal(items[1:], items[:-1], out=heads[1:])
            return items[heads], np.cumsum(heads, dtype=np.intp) - 1
        return unique_inverse(items, sort=False)[:2]

    @cached_property
    def _items(self) -> tuple[np.ndarray, np.ndarray]:
        """:meth:`_first_seen` of every row."""
        return self._first_seen()

    def label_counts(self, categories: Sequence[Any] | None) -> LabelCounts:
        """What :func:`agreement.label_counts` gives for the rows' table.

        Every item with a row is a row of counts, a label or not, in the order first seen; the items are numbered
        (their names are not needed to count).
        """
        lookup, cats = self.categories(categories)
        items, place = self._items
        present = self.present
        counts = count_matrix(place[present], lookup[self.label[present]], (len(items), len(cats)))
        return LabelCounts(counts=counts, items=pd.RangeIndex(len(items)), categories=cats)

    def item_order(self) -> np.ndarray:
        """The items of :meth:`label_counts`' rows, in its order."""
        return self._items[0]

    def sparse_counts(self, categories: Sequence[Any] | None) -> tuple[SparseCounts, pd.Index]:
        """What :func:`plugin.state.scoring.sparse_rows` gives for the rows' table: sparse counts and categories."""
        lookup, cats = self.categories(categories)
        items, place = self._items
        present = self.present
        counts = sparse_counts(place[present], lookup[self.label[present]], n_categories=len(cats),
                               n_items=len(items))
        return counts, cats

    def annotator_labels(self, categories: Sequence[Any] | None = None) -> AnnotatorLabels:
        """What :func:`agreement.annotator_labels` gives for the rows' table.

        The rows with a label, items in the order first seen, annotators in the order their names sort.

        Raises
        ------
        ValueError
            If an annotator labeled an item twice.
        """
        lookup, cats = self.categories(categories)
        present = self.present
        every = bool(present.all())
        rows = np.arange(self.n_rows) if every else np.flatnonzero(present)
        items, item_place = self._items if every else self._first_seen(rows)
        who = self.annotator if every else self.annotator[rows]
        used, place = unique_inverse(who)
        names, rank = name_order([self.annotators[code] for code in used.tolist()])
        codes = np.full((len(items), len(used)), -1, dtype=narrowest_type(len(cats)))
        codes[item_place, rank[place]] = lookup[self.label if every else self.label[rows]]
        if int((codes >= 0).sum()) != len(rows):
            raise ValueError("An annotator labeled an item more than once; a count table takes one label per "
                             "annotator and item.")
        return AnnotatorLabels(codes=codes, items=pd.RangeIndex(len(items)), annotators=pd.Index(names),
                               categories=cats)

    def item_labels(self, labels: Sequence[str] | None) -> np.ndarray:
        """The label each of :meth:`label_counts`' items asks about, in a label set (``"17:r1:PER"``: ``PER``).

        Read from each item's name without its task (:attr:`kinds`) with the rule of
        :func:`plugin.mapping.item_names.split_item_names`, each kind once.
        """
        found = split_item_names(list(self.kinds), labels)[1]
        return found[self.item_kinds[self.item_order()]]
