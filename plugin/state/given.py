"""What a task's annotators gave in one control: the labels and counts a flagged task's reasons name.

A reason a reviewer can act on says what the annotators chose (``sentiment: negative by 2, positive by 1``), not
only a number. It is read from what the project's state holds already: the control's rows of the task (immutable
bytes, :mod:`plugin.state.codes`), decoded only when a flagged task's reasons are put in words
(:func:`plugin.state.flags.reason_words`), and for a span control its matched spans
(:meth:`plugin.state.spans.ScoredTasks.matched`). Nothing is read from Label Studio again.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, NamedTuple

import numpy as np

from agreement.counts import SparseCounts
from agreement.uniques import row_codes
from plugin.mapping.item_names import split_item_names
from plugin.state.codes import ItemKeys, unpack_rows

__all__ = ["Given", "GivenColumn", "sequence_codes"]


class Given(NamedTuple):
    """What the annotators gave one task in one control.

    Attributes
    ----------
    items : tuple of (str, tuple of (object, int))
        Per item, in the order its rows first name it: its name (``""`` for a task's only item; a label set's item
        is named by its label) and each label given with how many annotators gave it, the most given first.
    label_set : bool
        The items are yes/no items, one per label (multiple choices, a multi-path taxonomy).
    spans : tuple of int, optional
        A span control: the spans that found a match in another annotator's, the spans compared, and the pairs of
        annotators compared (:meth:`plugin.state.spans.ScoredTasks.matched`).
    """

    items: tuple[tuple[str, tuple[tuple[Any, int], ...]], ...] = ()
    label_set: bool = False
    spans: tuple[int, int, int] | None = None


def sequence_codes(values: np.ndarray, lengths: np.ndarray) -> np.ndarray:
    """A code per run of ``values`` (cut in runs of ``lengths``, in order): equal runs share it; an empty run: -1.

    >>> sequence_codes(np.array([4, 5, 7, 4, 5, 7]), np.array([2, 1, 0, 2, 1])).tolist()
    [1, 0, -1, 1, 0]
    """
    lengths = np.asarray(lengths, dtype=np.intp)
    out = np.full(len(lengths), -1, dtype=np.int64)
    starts = np.cumsum(lengths) - lengths
    base = 0
    for length in np.unique(lengths[lengths > 0]).tolist():  # runs of one length at a time, as rows
        which = np.flatnonzero(lengths == length)
        _, inverse = np.unique(values[starts[which][:, None] + np.arange(length)], axis=0, return_inverse=True)
        out[which] = base + inverse.reshape(-1)
        base = int(out[which].max()) + 1
    return out


def _counted(places: np.ndarray, columns: np.ndarray, labels: Sequence[Any],
             config_labels: Sequence[str]) -> dict[int, list[tuple[Any, int]]]:
    """Per item place, each label with how many rows give it, the most first.

    Ties go in the config's order, then by the label's text; never by its code, which follows the order labels were
    first read in, and a project read again in another order (the service's passes, a batch read) has others.
    """
    order = {label: at for at, label in enumerate(config_labels)}
    counted: dict[tuple[int, int], int] = {}
    for pair in zip(places.tolist(), columns.tolist(), strict=True):  # a task's few rows: no array sort
        counted[pair] = counted.get(pair, 0) + 1
    out: dict[int, list[tuple[Any, int]]] = {}
    for (place, column), count in counted.items():
        out.setdefault(place, []).append((labels[column], count))
    return {place: sorted(found, key=lambda pair: (-pair[1], order.get(pair[0], len(order)), str(pair[0])))
            for place, found in out.items()}


@dataclass(frozen=True)
class GivenColumn:
    """Where each task of a score table finds what its annotators gave in one control (:class:`Given`), by place.

    Attributes
    ----------
    tasks : ndarray of int
        The tasks, by place.
    rows : ndarray of object
        Each task's rows in the control, as the state holds them (None: none).
    content : ndarray of int
        Per task, a code of its items' keys, labels and counts: tasks with equal codes get equal :class:`Given`
        (-1: no rows).
    keys : ItemKeys
        The control's item keys, which the rows' item codes name.
    labels : sequence
        The control's label by code; codes are only ever added, so rows read later still name their labels.
    label_set : bool
        The items are yes/no items, one per label.
    config_labels : tuple of str
        The config's labels, to read a yes/no item's label from its key.
    spans : ndarray of int, optional
        A span control: per task, its matched spans, spans compared and annotator pairs (-1: none).
    """

    tasks: np.ndarray
    rows: np.ndarray
    content: np.ndarray
    keys: ItemKeys
    labels: Sequence[Any]
    label_set: bool = False
    config_labels: tuple[str, ...] = ()
    spans: np.ndarray | None = None

    @classmethod
    def of(cls, tasks: np.ndarray, rows: np.ndarray, counts: SparseCounts, n_items: np.ndarray,
           key_codes: np.ndarray, *, keys: ItemKeys, labels: Sequence[Any], label_set: bool = False,
           config_labels: tuple[str, ...] = (), spans: np.ndarray | None = None) -> GivenColumn:
        """The column of ``tasks``, from the counts their scores were computed from.

        ``rows`` holds each task's bytes (None: none); ``counts`` the items of the tasks with rows, in order, and
        ``n_items`` how many each of those holds, ``key_codes`` each item's key code.
        """
        sizes = np.diff(counts.indptr)  # cells per item
        item = np.repeat(np.arange(counts.n_items), sizes)
        cells = row_codes([np.asarray(key_codes)[item], counts.columns, counts.counts]) if len(item) else item
        per_task = np.bincount(np.repeat(np.arange(len(n_items)), n_items), weights=sizes,
                               minlength=len(n_items)).astype(np.intp)
        content = np.full(len(tasks), -1, dtype=np.int32)  # held for a pass: 4 bytes a task
        content[np.flatnonzero(np.not_equal(rows, None))] = sequence_codes(cells, per_task)
        return cls(tasks, rows, content, keys, labels, label_set=label_set, config_labels=config_labels, spans=spans)

    def at(self, place: int) -> Given | None:
        """What the annotators gave the task at ``place`` (None: it has no rows and no spans here)."""
        blob = self.rows[place]
        spans = (tuple(self.spans[place].tolist()) if self.spans is not None and self.spans[place, 0] >= 0
                 else None)
        if blob is None and spans is None:
            return None
        items: tuple[tuple[str, tuple[tuple[Any, int], ...]], ...] = ()
        if blob is not None:
            task = int(self.tasks[place])
            codes, rows = unpack_rows(blob, 3)
            names = self._names(task, self.keys.decode(task, codes.tolist()))
            counted = _counted(rows[:, 0], rows[:, 2], self.labels, self.config_labels)
            items = tuple((names[item], tuple(counted[item])) for item in sorted(counted))
        return Given(items, self.label_set, spans)  # type: ignore[arg-type]

    def _names(self, task: int, keys: Sequence[Any]) -> list[str]:
        """Each item's name in words: none for the task's only item, a label set's by its label."""
        own = str(task)
        if self.label_set:
            bases, labels = split_item_names([str(key) for key in keys], self.config_labels)
            return [str(label) if base == own else f"{str(base).removeprefix(own + ':')} {label}"
                    for base, label in zip(bases.tolist(), labels.tolist(), strict=True)]
        return ["" if str(key) == own else str(key).removeprefix(own + ":") for key in keys]

    def codes(self, places: np.ndarray) -> np.ndarray:
        """Per place of ``places``, a code: tasks that share it get the same :class:`Given` (their reasons' words)."""
        columns = [self.content[places]]
        if self.spans is not None:
            columns += [self.spans[places, at] for at in range(self.spans.shape[1])]
        return row_codes(columns)
