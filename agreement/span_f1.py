"""Pairwise F1 between annotators who marked spans (Hripcsak & Rothschild 2005).

Hripcsak & Rothschild (2005), "Agreement, the F-measure, and reliability in
information retrieval" (JAMIA 12(3)), show that when the negatives cannot be
counted (every stretch of text that nobody marked is a negative), the
agreement between two annotators A and B is their F-measure, taking either one
as the reference:

.. math:: F_1 = \\frac{2\\,TP}{|A| + |B|}

where TP is the number of spans both marked and |A|, |B| the number each
marked. The counts are kept per (continuum, annotator pair, label), so that a
label's F1 sums them over continua, the total sums over labels too, and a
continuum's (a task's) F1 sums over labels on that continuum alone. Each level
reports the mean and the population standard deviation of the pairs' F1, as
bratiaa does for brat projects.

Two spans of the same label *match* when

- ``match="exact"``: they have the same start and end;
- ``match="overlap"``: their Jaccard overlap
  :math:`|a \\cap b| / |a \\cup b|` is at least ``jaccard``.

A span matches at most one span of the other annotator: the matching is an
optimal assignment (scipy.optimize.linear_sum_assignment) that makes the most
matches and, among those, the largest total Jaccard overlap. Only blocks
where some span has two or more candidates go through the assignment; the
others are matched directly, so the cost is that of sorting the units.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

import numpy as np
import pandas as pd
from numpy.typing import NDArray
from scipy.optimize import linear_sum_assignment

from agreement.intervals import overlapping_pairs
from agreement.ranges import run_pairs
from agreement.undefined import warn_undefined
from agreement.uniques import narrowest, unique_counts, unique_inverse
from agreement.units import Units

__all__ = ["SpanF1", "candidate_pairs", "span_f1", "task_f1"]

Match = Literal["exact", "overlap"]


@dataclass(frozen=True)
class SpanF1:
    """Pairwise F1 counts of one project, per (continuum, annotator pair, label).

    Attributes
    ----------
    doc, annotator_a, annotator_b : ndarray of int, with shape (n_blocks,)
        One row per continuum and pair of annotators who both annotated it
        (``annotator_a < annotator_b``, codes into :attr:`annotators`).
    tp, n_a, n_b : ndarray of int, with shape (n_blocks, n_labels)
        Spans both marked (matched pairs), spans ``a`` marked, spans ``b`` marked.
    matches : ndarray of int, with shape (n_matches, 2)
        Row numbers (into the :class:`~agreement.units.Units` scored) of the
        matched spans, annotator ``a``'s first.
    docs, annotators, labels : tuple
        What the codes stand for.

    Every array is held in the narrowest integer type that holds its values
    (:func:`agreement.uniques.narrowest`): a project's blocks are held beside
    its units, and sums over them are taken in int64.
    """

    doc: NDArray[np.signedinteger]
    annotator_a: NDArray[np.signedinteger]
    annotator_b: NDArray[np.signedinteger]
    tp: NDArray[np.signedinteger]
    n_a: NDArray[np.signedinteger]
    n_b: NDArray[np.signedinteger]
    matches: NDArray[np.signedinteger]
    docs: tuple[object, ...]
    annotators: tuple[str, ...]
    labels: tuple[str, ...]

    @property
    def pair_key(self) -> NDArray[np.int64]:
        """Each block's pair as ``a * n_annotators + b``, in int64 (the codes are held narrower)."""
        return self.annotator_a.astype(np.int64) * len(self.annotators) + self.annotator_b

    @property
    def sizes(self) -> NDArray[np.int64]:
        """``|A| + |B|`` of each block and label, in int64 (the counts are held narrower)."""
        return self.n_a.astype(np.int64) + self.n_b

    def _pair_codes(self) -> tuple[NDArray[np.intp], NDArray[np.intp]]:
        """Each block's pair as a code into the unique pairs, and those pairs' :attr:`pair_key`."""
        pairs, inverse = unique_inverse(self.pair_key)
        return inverse, pairs

    def _pair_sums(self) -> tuple[NDArray[np.intp], NDArray[np.int64], NDArray[np.int64], NDArray[np.int64]]:
        """tp, n_a, n_b summed over continua, with shape (n_pairs, n_labels)."""
        inverse, pairs = self._pair_codes()
        sums = [np.zeros((len(pairs), len(self.labels)), dtype=np.int64) for _ in range(3)]
        for total, part in zip(sums, (self.tp, self.n_a, self.n_b), strict=True):
            np.add.at(total, inverse, part)
        return pairs, sums[0], sums[1], sums[2]

    def pair_table(self) -> pd.DataFrame:
        """One row per annotator pair: continua shared, tp, n_a, n_b and F1, over all labels and continua."""
        inverse, _ = self._pair_codes()
        pairs, tp, n_a, n_b = self._pair_sums()
        n = len(self.annotators)
        tp, n_a, n_b = tp.sum(axis=1), n_a.sum(axis=1), n_b.sum(axis=1)
        names = np.array(self.annotators, dtype=object)
        return pd.DataFrame({"annotator_a": names[pairs // n], "annotator_b": names[pairs % n],
                             "docs": np.bincount(inverse, minlength=len(pairs)),
                             "tp": tp, "n_a": n_a, "n_b": n_b,
                             "f1": _f1(tp, n_a + n_b, "Pairwise F1 of an annotator pair",
                                       "the pair marked no span on the continua they share")})

    def per_label(self) -> pd.DataFrame:
        """Mean and population SD over pairs of each label's F1, counts summed over continua.

        A pair who never used a label has no F1 for it (NaN, left out of the
        label's mean, with a warning); a label no pair used has NaN.
        """
        _, tp, n_a, n_b = self._pair_sums()
        f1 = _f1(tp, n_a + n_b, "Pairwise F1 of a label for an annotator pair",
                 "neither annotator of the pair marked a span with that label")
        mean, sd = _mean_sd(f1, axis=0, what="label", names=self.labels)
        return pd.DataFrame({"mean": mean, "sd": sd, "pairs": np.sum(~np.isnan(f1), axis=0)},
                            index=pd.Index(self.labels, name="label"))

    def per_doc(self) -> pd.DataFrame:
        """Mean and population SD over a continuum's pairs of their F1 there, counts summed over labels.

        Only continua that two annotators annotated have a row. A pair who
        both marked nothing there has no F1 (left out of the mean, with a
        warning); a continuum where nobody marked anything has NaN. (bratiaa
        would give NaN for the whole continuum in the first case.)
        """
        f1, doc_codes, starts = self._doc_f1()
        if np.any(np.isnan(f1)):
            warn_undefined("Pairwise F1 of an annotator pair on a continuum",
                           f"both annotators of a pair marked no span on a continuum they share "
                           f"({int(np.sum(np.isnan(f1)))} such pairs, left out of their continuum's mean)")
        sums = np.add.reduceat(np.nan_to_num(f1), starts) if len(f1) else np.zeros(0)
        counts = np.add.reduceat((~np.isnan(f1)).astype(np.int64), starts) if len(f1) else np.zeros(0, np.int64)
        squares = np.add.reduceat(np.nan_to_num(f1) ** 2, starts) if len(f1) else np.zeros(0)
        with np.errstate(invalid="ignore", divide="ignore"):
            mean = sums / counts
            sd = np.sqrt(np.maximum(squares / counts - mean ** 2, 0.0))
        if np.any(counts == 0):
            warn_undefined("Pairwise F1 of a continuum",
                           f"on {int(np.sum(counts == 0))} continua no annotator marked any span")
        return pd.DataFrame({"mean": mean, "sd": sd, "pairs": counts},
                            index=pd.Index([self.docs[d] for d in doc_codes], name="doc"))

    def _doc_f1(self) -> tuple[NDArray[np.float64], NDArray[np.intp], NDArray[np.intp]]:
        """Each block's F1 over labels, ordered by continuum, with the continua and where each begins."""
        order = np.argsort(self.doc, kind="stable")
        tp = self.tp[order].sum(axis=1)
        total = self.sizes[order].sum(axis=1)
        with np.errstate(invalid="ignore", divide="ignore"):
            f1 = np.where(total > 0, 2.0 * tp / np.maximum(total, 1), np.nan)
        doc_codes, starts = np.unique(self.doc[order], return_index=True)
        return f1, doc_codes, starts

    def total(self) -> tuple[float, float]:
        """Mean and population SD over pairs of their F1, counts summed over labels and continua."""
        table = self.pair_table()
        mean, sd = _mean_sd(table["f1"].to_numpy()[:, None], axis=0, what="project", names=("all labels",))
        return float(mean[0]), float(sd[0])

    @property
    def mean(self) -> float:
        """Mean over annotator pairs of the total F1."""
        return self.total()[0]

    @property
    def sd(self) -> float:
        """Population standard deviation over annotator pairs of the total F1."""
        return self.total()[1]


def _f1(tp: NDArray, total: NDArray, measure: str, reason: str) -> NDArray[np.float64]:
    """``2 tp / total``, NaN (with one warning) where ``total`` is 0."""
    empty = total == 0
    if np.any(empty):
        warn_undefined(measure, f"{reason} ({int(np.sum(empty))} cases)")
    return np.where(empty, np.nan, 2.0 * tp / np.maximum(total, 1))


def _mean_sd(f1: NDArray[np.float64], *, axis: int, what: str,
             names: tuple[str, ...]) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """Mean and population SD over pairs of the defined F1 values; NaN (warned) where none is defined."""
    defined = ~np.isnan(f1)
    count = defined.sum(axis=axis)
    if np.any(count == 0):
        missing = [names[i] for i in np.flatnonzero(count == 0)]
        warn_undefined(f"Pairwise F1 of the {what}", f"no annotator pair has a defined F1 for {missing}")
    with np.errstate(invalid="ignore", divide="ignore"):
        mean = np.where(defined, f1, 0.0).sum(axis=axis) / count
        deviation = np.where(defined, f1 - np.expand_dims(mean, axis), 0.0)
        sd = np.sqrt((deviation ** 2).sum(axis=axis) / count)
    return mean, sd


def candidate_pairs(units: Units, *, jaccard: float) -> tuple[NDArray[np.intp], NDArray[np.intp], NDArray[np.float64]]:
    """Every pair of units of two annotators, same continuum and label, of Jaccard overlap ``>= jaccard``.

    The overlapping pairs come from :func:`agreement.intervals.overlapping_pairs`
    (a sort, never all against all).

    Parameters
    ----------
    units : Units
    jaccard : float
        The least Jaccard overlap :math:`|a \\cap b| / |a \\cup b|`, in (0, 1];
        1 means the same start and end.

    Returns
    -------
    first, second : ndarray of int
        Row numbers of the two units, ``annotator[first] < annotator[second]``.
    overlap : ndarray of float
        Their Jaccard overlap.
    """
    group = units.doc.astype(np.int64) * max(len(units.labels), 1) + units.label
    first, second, inter = overlapping_pairs(group, units.annotator, units.start, units.end)
    union = (units.end[first] - units.start[first]) + (units.end[second] - units.start[second]) - inter
    overlap = inter / union
    keep = overlap >= jaccard
    if jaccard == 1.0:  # the same span, compared as positions (a ratio can round to 1 for far-out floats)
        keep &= (units.start[first] == units.start[second]) & (units.end[first] == units.end[second])
    first, second, overlap = first[keep], second[keep], overlap[keep]
    swap = units.annotator[first] > units.annotator[second]
    first, second = np.where(swap, second, first), np.where(swap, first, second)
    return first, second, overlap


def _matches(units: Units, *, jaccard: float) -> NDArray[np.intp]:
    """One-to-one matches between the units of each annotator pair.

    Chosen for the most matches, then the largest overlap.
    """
    first, second, overlap = candidate_pairs(units, jaccard=jaccard)
    if len(first) == 0:
        return np.zeros((0, 2), dtype=np.intp)
    n_ann = len(units.annotators)
    # a unit's candidates among one other annotator's units: its degree in that pair's bipartite graph
    key_first = first.astype(np.int64) * n_ann + units.annotator[second]
    key_second = second.astype(np.int64) * n_ann + units.annotator[first]
    _, inv1, deg1 = unique_inverse(key_first, counts=True, sort=False)
    _, inv2, deg2 = unique_inverse(key_second, counts=True, sort=False)
    simple = (deg1[inv1] == 1) & (deg2[inv2] == 1)
    chosen = [np.column_stack([first[simple], second[simple]])]
    if not np.all(simple):
        # The ambiguous edges, by block (continuum, pair, label): each block is an assignment problem.
        f, s, w = first[~simple], second[~simple], overlap[~simple]
        block = (units.doc[f].astype(np.int64) * n_ann + units.annotator[f]) * n_ann + units.annotator[s]
        block = block * max(len(units.labels), 1) + units.label[f]
        order = np.argsort(block, kind="stable")
        f, s, w, block = f[order], s[order], w[order], block[order]
        bounds = np.flatnonzero(np.diff(block)) + 1
        for lo, hi in zip(np.r_[0, bounds], np.r_[bounds, len(block)], strict=True):
            rows, row_index = np.unique(f[lo:hi], return_inverse=True)
            cols, col_index = np.unique(s[lo:hi], return_inverse=True)
            # weight 1 per match plus a share of the overlap too small to trade one match for overlap
            weight = np.zeros((len(rows), len(cols)))
            weight[row_index, col_index] = 1.0 + w[lo:hi] / (min(len(rows), len(cols)) + 1.0)
            r, c = linear_sum_assignment(weight, maximize=True)
            real = weight[r, c] > 0
            chosen.append(np.column_stack([rows[r[real]], cols[c[real]]]))
    return np.concatenate(chosen).astype(np.intp)


def span_f1(units: Units, *, match: Match = "exact", jaccard: float = 0.5,
            docs: NDArray[np.intp] | None = None) -> SpanF1:
    """Pairwise F1 (Hripcsak & Rothschild 2005) of every annotator pair on every continuum both annotated.

    .. math:: F_1(A, B) = \\frac{2\\,TP}{|A| + |B|}

    Parameters
    ----------
    units : Units
        The spans; ``units.present`` says who annotated which continuum (an
        annotator who annotated a continuum and marked nothing there counts
        as missing every span of the others).
    match : {"exact", "overlap"}
        ``"exact"``: same start, end and label. ``"overlap"``: same label and
        Jaccard overlap at least ``jaccard``, matched one to one by an optimal
        assignment.
    jaccard : float
        The least Jaccard overlap for ``match="overlap"``, in (0, 1].
    docs : array of int, optional
        Codes of the continua to score (by default all). Scoring one task
        alone this way costs only that task's units and gives exactly the
        batch's values for it.

    Returns
    -------
    SpanF1
        The counts, from which :meth:`SpanF1.per_label`, :meth:`SpanF1.per_doc`,
        :meth:`SpanF1.total` and :meth:`SpanF1.pair_table` are computed.

    Examples
    --------
    >>> from agreement.units import units_from_frame
    >>> frame = pd.DataFrame({"doc": 1, "annotator": ["a", "a", "b", "b"], "label": "PER",
    ...                       "start": [0, 10, 0, 11], "end": [5, 20, 5, 20]})
    >>> units = units_from_frame(frame)
    >>> span_f1(units).mean  # one of two spans each matches exactly: 2 * 1 / (2 + 2)
    0.5
    >>> span_f1(units, match="overlap", jaccard=0.8).mean  # [10, 20) and [11, 20) overlap 0.9
    1.0
    """
    if match not in ("exact", "overlap"):
        raise ValueError(f'match must be "exact" or "overlap", not {match!r}.')
    if not 0 < jaccard <= 1:
        raise ValueError(f"The Jaccard threshold must be in (0, 1], not {jaccard}.")
    present = units.present
    rows = None
    if docs is not None:
        wanted = np.zeros(len(units.docs), dtype=bool)
        wanted[np.asarray(docs, dtype=np.intp)] = True
        rows = np.flatnonzero(wanted[units.doc])
        units = units.select(wanted[units.doc])
        present = present & wanted[:, None]
    n_ann, n_lab = len(units.annotators), len(units.labels)
    matches = _matches(units, jaccard=1.0 if match == "exact" else jaccard)

    # blocks: (continuum, a < b) where both annotated, in that order (nonzero gives each continuum's annotators
    # side by side, in ascending order)
    d, a = np.nonzero(present)
    first, second = run_pairs(d)
    block_key = np.sort((d[first].astype(np.int64) * n_ann + a[first]) * n_ann + a[second])
    block_doc = (block_key // (n_ann * n_ann)).astype(np.intp)
    block_a, block_b = (block_key // n_ann % n_ann).astype(np.intp), (block_key % n_ann).astype(np.intp)

    # spans per (continuum, annotator, label), looked up for each block's two annotators
    cell = (units.doc.astype(np.int64) * n_ann + units.annotator) * n_lab + units.label
    cells, counts = unique_counts(cell)  # units come by continuum: runs, merged

    def lookup(annotator: NDArray[np.intp]) -> NDArray[np.int64]:
        want = ((block_doc.astype(np.int64) * n_ann + annotator) * n_lab)[:, None] + np.arange(n_lab)
        pos = np.minimum(np.searchsorted(cells, want), max(len(cells) - 1, 0))
        found = cells[pos] == want if len(cells) else np.zeros(want.shape, dtype=bool)
        return np.where(found, counts[pos] if len(cells) else 0, 0).astype(np.int64)

    n_a, n_b = lookup(block_a), lookup(block_b)
    tp = np.zeros((len(block_doc), n_lab), dtype=np.int64)
    if len(matches):
        m0 = matches[:, 0]
        key = (units.doc[m0].astype(np.int64) * n_ann + units.annotator[m0]) * n_ann + units.annotator[matches[:, 1]]
        np.add.at(tp, (np.searchsorted(block_key, key), units.label[m0]), 1)
    if rows is not None:
        matches = rows[matches]  # row numbers of the units given, not of the selection
    # held in the narrowest types: a million tasks' F1 blocks are held beside their units
    n_rows = units.n_units if rows is None else int(rows.max(initial=0)) + 1  # the units given
    most = int(counts.max(initial=0)) + 1  # tp, n_a and n_b count a cell's spans at most
    return SpanF1(narrowest(block_doc, len(present)), narrowest(block_a, n_ann), narrowest(block_b, n_ann),
                  *(narrowest(part, most) for part in (tp, n_a, n_b)), narrowest(matches, n_rows),
                  units.docs, units.annotators, units.labels)


def task_f1(units: Units, *, doc: int, match: Match = "exact", jaccard: float = 0.5) -> float:
    """One continuum's pairwise F1: the mean over its annotator pairs, counts summed over labels.

    The same number as ``span_f1(units, ...).per_doc()`` gives for that
    continuum, computed from that continuum's units alone.

    Parameters
    ----------
    units : Units
    doc : int
        The continuum's code (its index in ``units.docs``).
    match, jaccard
        As for :func:`span_f1`.

    Returns
    -------
    float
        NaN (with a warning) when no annotator marked a span there, or fewer
        than two annotated it.
    """
    result = span_f1(units, match=match, jaccard=jaccard, docs=np.array([doc]))
    if len(result.doc) == 0:
        return warn_undefined("Pairwise F1 of a continuum", "fewer than two annotators annotated it")
    return float(result.per_doc()["mean"].iloc[0])
