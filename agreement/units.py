"""Units along a continuum: the one table every span measure reads.

A *unit* is a stretch ``[start, end)`` of one continuum (a task's text, an
audio file, a time series) that one annotator marked with one label. Pairwise
F1 (Hripcsak & Rothschild 2005), Krippendorff's unitizing alpha (1995, 2004,
2016) and Mathet's gamma (Mathet, Widlöcher & Métivier 2015) all take the
same :class:`Units`, so what one measure calls a unit the others do too.

Everything is integer codes and float arrays, one row a unit: no Python object
per unit, so a project of a million spans is a few tens of megabytes.

Which annotators *annotated* each continuum is part of the data: an annotator
who submitted a task and marked nothing there said "no unit anywhere", which
F1 counts as misses and unitizing alpha as a gap over the whole continuum.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd
from numpy.typing import ArrayLike, NDArray

__all__ = ["Units", "units_from_frame"]


@dataclass(frozen=True)
class Units:
    """Units of several annotators on several continua, as codes.

    Attributes
    ----------
    doc, annotator, label : ndarray of int, with shape (n_units,)
        Codes into :attr:`docs`, :attr:`annotators` and :attr:`labels`.
    start, end : ndarray of float, with shape (n_units,)
        Where each unit begins and ends, ``start < end``.
    docs, annotators, labels : tuple
        What the codes stand for (task ids, annotator names, label names).
    present : ndarray of bool, with shape (n_docs, n_annotators)
        ``present[d, a]``: annotator ``a`` annotated continuum ``d``, whether
        or not they marked a unit there.
    lengths : ndarray of float, with shape (n_docs,)
        Each continuum's length; it begins at 0. Where the length is not known
        it is the end of the last unit.
    """

    doc: NDArray[np.intp]
    annotator: NDArray[np.intp]
    label: NDArray[np.intp]
    start: NDArray[np.float64]
    end: NDArray[np.float64]
    docs: tuple[object, ...]
    annotators: tuple[str, ...]
    labels: tuple[str, ...]
    present: NDArray[np.bool_]
    lengths: NDArray[np.float64]

    def __post_init__(self) -> None:
        n = len(self.doc)
        for name in ("annotator", "label", "start", "end"):
            if len(getattr(self, name)) != n:
                raise ValueError(f"Units need one {name} per unit: {len(getattr(self, name))} for {n} units.")
        if self.present.shape != (len(self.docs), len(self.annotators)):
            raise ValueError(f"present must have shape (docs, annotators) = ({len(self.docs)}, "
                             f"{len(self.annotators)}), not {self.present.shape}.")
        if len(self.lengths) != len(self.docs):
            raise ValueError(f"Units need one length per continuum: {len(self.lengths)} for {len(self.docs)}.")
        for name, names in (("doc", self.docs), ("annotator", self.annotators), ("label", self.labels)):
            low, high = (int(getattr(self, name).min()), int(getattr(self, name).max())) if n else (0, -1)
            if low < 0 or high >= len(names):
                wrong = low if low < 0 else high
                raise ValueError(f"Every unit's {name} must be a code of one of the {len(names)} {name}s given "
                                 f"(0 to {len(names) - 1}), not {wrong}.")
        if n and not (np.all(np.isfinite(self.start)) and np.all(np.isfinite(self.end))):
            raise ValueError("Every unit's start and end must be finite numbers.")
        if n and np.any(self.end <= self.start):
            raise ValueError("Every unit must end after it starts (start < end).")
        if n and np.any(self.start < 0):
            raise ValueError("A continuum begins at 0: no unit may start before it.")
        if n and not np.all(self.present[self.doc, self.annotator]):
            raise ValueError("A unit's annotator must be marked present on its continuum.")

    @property
    def n_units(self) -> int:
        """How many units there are."""
        return len(self.doc)

    def select(self, mask: ArrayLike) -> Units:
        """The units where ``mask`` is true, on the same continua and annotators."""
        keep = np.asarray(mask, dtype=bool)
        return Units(self.doc[keep], self.annotator[keep], self.label[keep], self.start[keep], self.end[keep],
                     self.docs, self.annotators, self.labels, self.present, self.lengths)


def units_from_frame(frame: pd.DataFrame, *, present: pd.DataFrame | None = None,
                     lengths: dict[object, float] | None = None, labels: Sequence[str] | None = None) -> Units:
    """Build :class:`Units` from a long table with columns ``doc, annotator, label, start, end``.

    Parameters
    ----------
    frame : pandas.DataFrame
        One row a unit.
    present : pandas.DataFrame, optional
        Columns ``doc, annotator``: who annotated which continuum. Annotators
        who annotated a continuum and marked nothing are known only from here.
        By default, whoever marked a unit on a continuum annotated it.
    lengths : dict, optional
        A continuum's length by its ``doc``; the others end at their last unit.
    labels : sequence of str, optional
        Every label in order (a control's labels, used or not); by default the
        labels of the units, sorted.

    Returns
    -------
    Units

    Examples
    --------
    >>> frame = pd.DataFrame({"doc": [1, 1], "annotator": ["a", "b"], "label": ["PER", "PER"],
    ...                       "start": [0, 1], "end": [5, 5]})
    >>> units = units_from_frame(frame, lengths={1: 10})
    >>> units.n_units, units.annotators, units.lengths.tolist()
    (2, ('a', 'b'), [10.0])
    """
    missing = {"doc", "annotator", "label", "start", "end"} - set(frame.columns)
    if missing:
        raise ValueError(f"The unit table lacks the columns {sorted(missing)}.")
    who = frame[["doc", "annotator"]] if present is None else pd.concat([frame[["doc", "annotator"]],
                                                                         present[["doc", "annotator"]]])
    docs = pd.Index(pd.unique(who["doc"]))
    annotators = pd.Index(sorted(pd.unique(who["annotator"].astype(str))))
    label_index = pd.Index(sorted(pd.unique(frame["label"].astype(str))) if labels is None else list(labels))
    unknown = set(frame["label"].astype(str)) - set(label_index)
    if unknown:
        raise ValueError(f"The labels {sorted(unknown)} are not among the labels given.")
    mask = np.zeros((len(docs), len(annotators)), dtype=bool)
    mask[docs.get_indexer(who["doc"]), annotators.get_indexer(who["annotator"].astype(str))] = True
    doc = docs.get_indexer(frame["doc"]).astype(np.intp)
    start = frame["start"].to_numpy(dtype=float)
    end = frame["end"].to_numpy(dtype=float)
    extent = np.zeros(len(docs))
    if len(frame):
        np.maximum.at(extent, doc, end)
    if lengths:
        given = np.array([float(lengths.get(d, np.nan)) for d in docs])
        if np.any(given[~np.isnan(given)] < extent[~np.isnan(given)]):
            raise ValueError("A unit ends after the end of its continuum.")
        extent = np.where(np.isnan(given), extent, given)
    return Units(doc, annotators.get_indexer(frame["annotator"].astype(str)).astype(np.intp),
                 label_index.get_indexer(frame["label"].astype(str)).astype(np.intp), start, end,
                 tuple(docs), tuple(annotators), tuple(label_index), mask, extent)
