"""Mathet's gamma: agreement on units that annotators both place and label.

Mathet, Widlöcher & Métivier (2015), "The Unified and Holistic Method Gamma (γ) for Inter-Annotator Agreement
Measure and Alignment", *Computational Linguistics* 41(3):

.. math:: \\gamma = 1 - \\frac{D_o}{D_e}

``D_o`` is the disorder of the best alignment of the annotators' units (:mod:`agreement.alignment`): its total
disorder over the average number of units per annotator. ``D_e`` is the expected disorder, the mean disorder of
continua sampled at random with the corpus's statistics (§5.2, "statistical" sampling, as pygamma-agreement's default
``StatisticalContinuumSampler`` does): for every annotator of a sampled continuum, a number of units drawn from a
normal law fitted to the numbers of units per annotator, gaps between consecutive units and unit lengths drawn from
normal laws fitted to the corpus's, labels drawn with the corpus's label frequencies.

A task's gamma is the task's own disorder against the project's expected disorder, as a task's alpha uses the
project's expected disagreement: ``1 - D_o(task) / D_e(project)``, computed live from the task's units alone.

The module is larger than 600 lines because the expected disorder is the observed disorder of sampled continua: both
run through the same private chunked dissimilarity and alignment pass (``_disorders`` and its ``PAIRS_AT_ONCE`` and
``UNITS_AT_ONCE`` chunk sizes), so splitting them apart would only export those internals to a second module.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from itertools import pairwise
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray
from scipy import sparse
from scipy.sparse.csgraph import connected_components

from agreement.alignment import alignment_reach, alignment_totals, matrix_entries
from agreement.ranges import block_edges, ranges
from agreement.set_partition import CROWDED_REASON, too_many_candidates
from agreement.undefined import warn_undefined
from agreement.units import Units

__all__ = ["ExpectedDisorder", "GammaResult", "ObservedDisorder", "dissimilarity", "expected_disorder", "gamma",
           "gamma_of", "observed_disorder", "task_gamma", "task_gammas"]

_Z95 = 1.959963984540054  # the 97.5% quantile of the standard normal law
_MIN_LENGTH = 1e-6  # pyannote.core's segment precision: pygamma redraws sampled units shorter than this


@dataclass(frozen=True)
class ObservedDisorder:
    """Each continuum's best-alignment disorder.

    Attributes
    ----------
    total : ndarray of float, with shape (n_docs,)
        The best alignment's total disorder on each continuum (0 where it is not defined).
    units_per_annotator : ndarray of float, with shape (n_docs,)
        The average number of units per annotator on each continuum; 0 where fewer than two annotators annotated
        it or nobody marked a unit, or it is ``unaligned``, and its disorder is not defined.
    unaligned : ndarray of bool, with shape (n_docs,)
        Continua left unaligned: a group of their units that overlap would need more than
        :data:`agreement.set_partition.MAX_CANDIDATES` candidate unitary alignments (many annotators marking the
        same place), and no exact best alignment is sought.
    """

    total: NDArray[np.float64]
    units_per_annotator: NDArray[np.float64]
    unaligned: NDArray[np.bool_]

    @property
    def per_task(self) -> NDArray[np.float64]:
        """Each continuum's disorder, total over units per annotator (NaN where not defined)."""
        with np.errstate(invalid="ignore", divide="ignore"):
            return np.where(self.units_per_annotator > 0, self.total / self.units_per_annotator, np.nan)

    @property
    def value(self) -> float:
        """The corpus's disorder: the summed total disorders over the summed units per annotator (NaN if none)."""
        weight = float(self.units_per_annotator.sum())
        return float(self.total.sum()) / weight if weight > 0 else float("nan")


@dataclass(frozen=True)
class ExpectedDisorder:
    """The expected disorder estimated from sampled continua.

    Attributes
    ----------
    value : float
        The mean disorder of the sampled corpora.
    low, high : float
        Its 95% sampling interval, ``value ∓ 1.96 s / sqrt(n_samples)``.
    precision : float
        The interval's half-width relative to the value (Mathet et al. 2015, §5.3: the error ``e`` of
        ``n = (1.96 cv / e)^2`` samples).
    samples : ndarray of float, with shape (n_samples,)
        Each sampled corpus's disorder.
    seed : int
        The seed of the sampling.
    """

    value: float
    low: float
    high: float
    precision: float
    samples: NDArray[np.float64]
    seed: int


@dataclass(frozen=True)
class GammaResult:
    """A corpus's gamma with its parts.

    Attributes
    ----------
    value : float
        ``1 - observed / expected``.
    observed, expected : float
        ``D_o`` and ``D_e``.
    low, high : float
        Gamma at the ends of the expected disorder's sampling interval (``low`` is ``-inf`` when that interval
        reaches 0: too few samples to bound gamma from below).
    seed, n_samples : int
        How ``D_e`` was sampled.
    precision : float
        The relative half-width of ``D_e``'s sampling interval.
    """

    value: float
    observed: float
    expected: float
    low: float
    high: float
    seed: int
    n_samples: int
    precision: float


def dissimilarity(start: ArrayLike, end: ArrayLike, label: ArrayLike, *, alpha: float = 1.0, beta: float = 1.0,
                  delta_empty: float = 1.0, label_distance: ArrayLike | None = None) -> NDArray[np.float64]:
    """The combined dissimilarity between every two units (Mathet et al. 2015, §3).

    .. math::

        d_{pos}(u, v) = \\left(\\frac{|s_u - s_v| + |e_u - e_v|}{(e_u - s_u) + (e_v - s_v)}\\right)^2
        \\Delta_\\varnothing, \\qquad d_{cat}(u, v) = \\mathrm{dist}(l_u, l_v)\\, \\Delta_\\varnothing,

    .. math:: d(u, v) = \\alpha\\, d_{pos}(u, v) + \\beta\\, d_{cat}(u, v)

    ``d_pos`` is the "sporadic" positional dissimilarity of the paper and of pygamma-agreement; ``dist`` is 1 for
    different labels and 0 for equal ones unless ``label_distance`` gives it.

    Parameters
    ----------
    start, end : array_like, with shape (n_units,)
    label : array_like of int, with shape (n_units,)
        Label codes.
    alpha, beta : float
        The weights of the positional and the categorical dissimilarity.
    delta_empty : float
        Δ∅, the dissimilarity of a unit with the empty unit, the scale of both.
    label_distance : array_like, with shape (n_labels, n_labels), optional
        The distance between labels, in [0, 1], indexed by label code.

    Returns
    -------
    ndarray of float, with shape (n_units, n_units)

    Examples
    --------
    Units [1, 5) and [2, 6) with the same label (DKPro's pygamma fixture 1): ((1 + 1) / (4 + 4))² = 0.0625.

    >>> float(dissimilarity([1, 2], [5, 6], [0, 0])[0, 1])
    0.0625
    """
    s, e = np.asarray(start, dtype=float), np.asarray(end, dtype=float)
    codes = np.asarray(label, dtype=np.intp)
    return _pair_dissimilarity(s[:, None], e[:, None], codes[:, None], s[None, :], e[None, :], codes[None, :],
                               alpha=alpha, beta=beta, delta_empty=delta_empty, label_distance=label_distance)


def _pair_dissimilarity(s_u: NDArray[np.float64], e_u: NDArray[np.float64], l_u: NDArray[np.intp],
                        s_v: NDArray[np.float64], e_v: NDArray[np.float64], l_v: NDArray[np.intp], *, alpha: float,
                        beta: float, delta_empty: float, label_distance: ArrayLike | None) -> NDArray[np.float64]:
    """:func:`dissimilarity` of units ``u`` and ``v``, elementwise (broadcast)."""
    position = ((np.abs(s_u - s_v) + np.abs(e_u - e_v)) / ((e_u - s_u) + (e_v - s_v))) ** 2
    if label_distance is None:
        category = (l_u != l_v).astype(float)
    else:
        category = np.asarray(label_distance, dtype=float)[l_u, l_v]
    return delta_empty * (alpha * position + beta * category)


PAIRS_AT_ONCE = 4_000_000
"""Unit pairs whose dissimilarities are held at once at most (a project's continua are aligned in chunks)."""

UNITS_AT_ONCE = 100_000
"""Units whose neighbours within reach are found at once at most (a project's continua, a chunk at a time)."""


def _components_within_reach(doc: NDArray[np.intp], annotator: NDArray[np.intp], start: NDArray[np.float64],
                             end: NDArray[np.float64], label: NDArray[np.intp], *, reach: float, alpha: float,
                             beta: float, delta_empty: float, label_distance: ArrayLike | None
                             ) -> tuple[NDArray[np.intp], NDArray[np.intp], NDArray[np.intp]]:
    """Each unit's connected component among the units of its continuum, and the pairs within reach.

    Two units of different annotators are connected when their dissimilarity is at most ``reach``; the second and
    third arrays are those pairs, each once.

    Only pairs that can be that near are compared. Since ``d(u, v) >= Δ∅ (α d_pos(u, v) + f)``, with ``f`` the
    least categorical term (0 unless a label distance or β is negative), a pair within reach has
    ``|s_u - s_v| <= |s_u - s_v| + |e_u - e_v| <= r (l_u + l_v)`` with ``r = sqrt((reach / Δ∅ - f) / α)`` and ``l``
    a unit's length: the intervals ``[s - r l, s + r l]`` of the two units overlap. A unit is compared with the
    units whose interval starts within its own (a sort, never all against all), and without a positional term
    (``α <= 0``) with every unit of its continuum; in either case at most :data:`PAIRS_AT_ONCE` pairs at a time.
    """
    n = len(doc)
    distances = np.array([0.0, 1.0]) if label_distance is None else np.asarray(label_distance, dtype=float)
    floor = min(0.0, beta * float(distances.min(initial=0.0)), beta * float(distances.max(initial=0.0)))
    radius = np.sqrt((reach / delta_empty - floor) / alpha) if alpha > 0 and delta_empty > 0 else np.inf
    low = start - radius * np.abs(end - start) if np.isfinite(radius) else start
    order = np.lexsort((low, doc))
    d = doc[order]
    opens = np.ones(n, dtype=bool)
    opens[1:] = d[1:] != d[:-1]
    rank = np.cumsum(opens) - 1
    first = np.flatnonzero(opens)
    last = np.append(first[1:], n)[rank]  # where each unit's continuum ends, in this order
    if np.isfinite(radius):
        lo = low[order]
        hi = start[order] + radius * np.abs(end[order] - start[order])
        # one increasing line for all continua (each from its first interval), so one search finds every overlap
        base = lo[first][rank]
        key = rank * (float((hi - base).max()) + 1.0) + (lo - base)
        margin = 1e-9 * (hi - lo) + 1e-12 * float(np.abs(key).max())  # rounding in the line never drops a pair
        stop = np.minimum(np.searchsorted(key, key + (hi - lo) + margin, side="right"), last)
    else:
        stop = last
    count = stop - np.arange(n) - 1
    edges: list[tuple[NDArray[np.intp], NDArray[np.intp]]] = []
    cuts = block_edges(count, at_most=PAIRS_AT_ONCE)  # slices of units, of at most about PAIRS_AT_ONCE pairs
    for begin, finish in pairwise(cuts):
        here = np.arange(begin, finish)
        u = order[np.repeat(here, count[begin:finish])]
        v = order[ranges(here + 1, count[begin:finish])]
        apart = annotator[u] != annotator[v]
        u, v = u[apart], v[apart]
        cost = _pair_dissimilarity(start[u], end[u], label[u], start[v], end[v], label[v], alpha=alpha, beta=beta,
                                   delta_empty=delta_empty, label_distance=label_distance)
        near = cost <= reach
        edges.append((u[near], v[near]))
    u, v = (np.concatenate(side) for side in zip(*edges, strict=True)) if edges else (np.zeros(0, np.intp),) * 2
    graph = sparse.coo_array((np.ones(len(u)), (u, v)), shape=(n, n))
    return connected_components(graph, directed=False)[1].astype(np.intp), u, v


def _disorders(doc: NDArray[np.intp], annotator: NDArray[np.intp], start: NDArray[np.float64],
               end: NDArray[np.float64], label: NDArray[np.intp], n_annotators: NDArray[np.intp], *, alpha: float,
               beta: float, delta_empty: float, label_distance: ArrayLike | None) -> ObservedDisorder:
    """Best-alignment disorders of continua given end to end.

    Units are ordered by ``doc``, each one's annotator coded in ``range(n_annotators[doc])``.

    No unitary alignment of a best alignment holds two units further apart than the reach of
    :func:`agreement.alignment.alignment_reach`, so a continuum's best alignment is the union of those of its
    components of units within reach of each other (:func:`_components_within_reach`), and its disorder their
    sum. Continua with as many annotators are aligned together, about :data:`UNITS_AT_ONCE` units at a time, their
    components a chunk of at most about :data:`PAIRS_AT_ONCE` unit pairs at a time
    (:func:`agreement.alignment.alignment_totals`).
    """
    size = np.bincount(doc, minlength=len(n_annotators))
    total = np.zeros(len(n_annotators))
    unaligned = np.zeros(len(n_annotators), dtype=bool)
    defined = (n_annotators >= 2) & (size > 0)
    bounds = np.concatenate([[0], np.cumsum(size)])
    options = {"alpha": alpha, "beta": beta, "delta_empty": delta_empty, "label_distance": label_distance}
    for n in np.unique(n_annotators[defined]).tolist():
        docs = np.flatnonzero(defined & (n_annotators == n))
        cuts = block_edges(size[docs], at_most=UNITS_AT_ONCE)
        for first_doc, last_doc in pairwise(cuts):  # continua of at most about UNITS_AT_ONCE units
            chunk = docs[first_doc:last_doc]
            owner, disorder, left = _component_disorders(ranges(bounds[chunk], size[chunk]), doc, annotator, start,
                                                         end, label, n_annotators=n, **options)
            total += np.bincount(owner, weights=disorder, minlength=len(total))
            unaligned[left] = True
    total[unaligned] = 0.0
    weight = np.where(defined & ~unaligned, size / np.maximum(n_annotators, 1), 0.0)
    return ObservedDisorder(total, weight, unaligned)


def _component_disorders(units: NDArray[np.intp], doc: NDArray[np.intp], annotator: NDArray[np.intp],
                         start: NDArray[np.float64], end: NDArray[np.float64], label: NDArray[np.intp], *,
                         n_annotators: int, alpha: float, beta: float, delta_empty: float,
                         label_distance: ArrayLike | None
                         ) -> tuple[NDArray[np.intp], NDArray[np.float64], NDArray[np.intp]]:
    """Each component's continuum and best-alignment disorder, for components of units within reach.

    The components of units within reach of each other among ``units`` (continua of ``n_annotators``), aligned a chunk
    of at most about :data:`PAIRS_AT_ONCE` pairs at a time. A continuum's disorder is the sum over its components.
    A component of more than :data:`agreement.set_partition.MAX_CANDIDATES` candidate groups is not aligned
    (:func:`agreement.set_partition.too_many_candidates`): the third array holds the continua of such components.
    """
    options = {"alpha": alpha, "beta": beta, "delta_empty": delta_empty, "label_distance": label_distance}
    reach = alignment_reach(n_annotators, delta_empty=delta_empty)
    component, pair_u, pair_v = _components_within_reach(doc[units], annotator[units], start[units], end[units],
                                                         label[units], reach=reach, **options)
    too_many = too_many_candidates(component, annotator[units], pair_u, pair_v)
    left = np.unique(doc[units[too_many[component]]])
    kept = ~too_many[component]
    units, component = units[kept], np.unique(component[kept], return_inverse=True)[1].astype(np.intp)
    units = units[np.argsort(component, kind="stable")]  # components end to end
    part = np.bincount(component).astype(np.intp)
    owner = doc[units[np.cumsum(part) - part]]
    unit_bounds = np.concatenate([[0], np.cumsum(part)])
    disorder = np.zeros(len(part))
    cuts = block_edges(part * part, at_most=PAIRS_AT_ONCE)
    for first, last in pairwise(cuts):
        chunk = units[unit_bounds[first]:unit_bounds[last]]
        s, e, code = start[chunk], end[chunk], label[chunk]
        row, column = matrix_entries(part[first:last])  # each component's matrix, its entries' units in chunk
        cost = _pair_dissimilarity(s[row], e[row], code[row], s[column], e[column], code[column], **options)
        disorder[first:last] = alignment_totals(annotator[chunk], part[first:last], cost, n_annotators=n_annotators,
                                                delta_empty=delta_empty, connected=True)
    return owner, disorder, left


def observed_disorder(units: Units, *, alpha: float = 1.0, beta: float = 1.0, delta_empty: float = 1.0,
                      label_distance: ArrayLike | None = None) -> ObservedDisorder:
    """Each continuum's best-alignment disorder, ``D_o`` (Mathet et al. 2015, §4).

    .. math:: D_o = \\frac{\\sum_{\\bar u \\in \\hat a} \\delta(\\bar u)}{\\bar p}

    with ``â`` the best alignment and ``p̄`` the average number of units per annotator; every annotator who
    annotated the continuum counts, those who marked nothing there included. The corpus's value sums both over
    its continua.

    Parameters
    ----------
    units : Units
    alpha, beta, delta_empty, label_distance
        See :func:`dissimilarity`.

    Returns
    -------
    ObservedDisorder

    Examples
    --------
    DKPro's pygamma fixture 2: pygamma-agreement's best-alignment disorder is 0.70833.

    >>> import pandas as pd
    >>> from agreement.units import units_from_frame
    >>> frame = pd.DataFrame({"doc": 1, "annotator": ["A"] * 4 + ["B"] * 2, "label": list("abab") + list("ab"),
    ...                       "start": [1, 6, 20, 30, 2, 31], "end": [5, 10, 24, 34, 6, 35]})
    >>> round(observed_disorder(units_from_frame(frame)).value, 5)
    0.70833
    """
    order = np.argsort(units.doc, kind="stable")
    doc = units.doc[order]
    # each unit's annotator coded among those who annotated its continuum (a unit's annotator always did)
    rank = np.cumsum(units.present, axis=1, dtype=np.int32) - 1
    disorder = _disorders(doc, rank[doc, units.annotator[order]].astype(np.intp), units.start[order],
                          units.end[order], units.label[order], units.present.sum(axis=1), alpha=alpha, beta=beta,
                          delta_empty=delta_empty, label_distance=label_distance)
    if (n_left := int(disorder.unaligned.sum())) > 0:
        warn_undefined(f"The best-alignment disorder of {n_left} continu{'um' if n_left == 1 else 'a'}",
                       CROWDED_REASON)
    return disorder


@dataclass(frozen=True)
class _Statistics:
    """The corpus statistics the statistical sampler draws from (pygamma's StatisticalContinuumSampler)."""

    count: tuple[float, float]
    gap: tuple[float, float]
    length: tuple[float, float]
    labels: NDArray[np.intp]
    weights: NDArray[np.float64]


def _statistics(units: Units) -> _Statistics:
    """Mean and population SD of units per annotator, of gaps and of lengths; label frequencies.

    Gaps are, for each annotator on each continuum, the gap before the first unit (when it starts after 0) and
    between consecutive units (negative where they overlap), with one gap of 0 as pygamma-agreement adds.
    """
    # one key per (continuum, annotator), in their order: a count is a bincount, and the sort has one key less
    owner = units.doc * units.present.shape[1] + units.annotator
    counts = np.bincount(owner, minlength=units.present.size).reshape(units.present.shape).astype(float)
    order = np.lexsort((units.end, units.start, owner))
    key, s, e = owner[order], units.start[order], units.end[order]
    first = np.ones(len(order), dtype=bool)
    first[1:] = key[1:] != key[:-1]
    gaps = np.concatenate([[0.0], s[first][s[first] > 0], s[~first] - e[np.flatnonzero(~first) - 1]])
    lengths = e - s
    frequency = np.bincount(units.label, minlength=len(units.labels)).astype(float)
    labels = np.flatnonzero(frequency)
    per_annotator = counts[units.present]
    return _Statistics((float(per_annotator.mean()), float(per_annotator.std())),
                       (float(gaps.mean()), float(gaps.std())), (float(lengths.mean()), float(lengths.std())),
                       labels, frequency[labels] / frequency.sum())


def _sample(statistics: _Statistics, n_annotators: NDArray[np.intp], rng: np.random.Generator,
            ) -> tuple[NDArray[np.intp], NDArray[np.intp], NDArray[np.float64], NDArray[np.float64], NDArray[np.intp]]:
    """One sampled continuum for each entry of ``n_annotators``, end to end.

    Returns each unit's continuum (ordered), annotator, start, end and label.
    """
    slot_doc = np.repeat(np.arange(len(n_annotators)), n_annotators)
    slot_annotator = np.arange(len(slot_doc)) - np.repeat(np.cumsum(n_annotators) - n_annotators, n_annotators)
    count = np.abs(np.trunc(rng.normal(*statistics.count, size=len(slot_doc)))).astype(np.intp)
    # pygamma gives an annotator at least one unit while the continuum is still empty: its first annotator
    first_slot = np.cumsum(n_annotators) - n_annotators
    count[first_slot] = np.maximum(count[first_slot], 1)
    n = int(count.sum())
    gap = rng.normal(*statistics.gap, size=n)
    length = np.abs(rng.normal(*statistics.length, size=n))
    short = length < _MIN_LENGTH
    for _ in range(100):  # redrawn as pygamma does; lengths that stay too short (a tiny mean) are clipped
        if not short.any():
            break
        length[short] = np.abs(rng.normal(*statistics.length, size=int(short.sum())))
        short = length < _MIN_LENGTH
    length = np.maximum(length, _MIN_LENGTH)
    label = statistics.labels[rng.choice(len(statistics.labels), size=n, p=statistics.weights)]
    slot = np.repeat(np.arange(len(slot_doc)), count)
    reach = np.cumsum(gap + length)
    offset = np.concatenate([[0.0], reach])[np.cumsum(count) - count][slot]
    end = reach - offset
    start = end - length
    return slot_doc[slot], slot_annotator[slot], start, end, label  # slots, and so units, are by continuum


def expected_disorder(units: Units, *, n_samples: int = 30, seed: int = 0, max_docs: int = 100, alpha: float = 1.0,
                      beta: float = 1.0, delta_empty: float = 1.0, label_distance: ArrayLike | None = None,
                      leave_out: ArrayLike | None = None) -> ExpectedDisorder:
    """The expected disorder ``D_e``: the mean disorder of continua sampled with the corpus's statistics.

    Mathet et al. (2015), §5.2, statistical sampling as pygamma-agreement's default sampler does it: every
    annotator of a sampled continuum gets ``|N(μ_n, σ_n)|`` units (at least one for the continuum's first), laid
    one after the other with gaps ``N(μ_g, σ_g)`` and lengths ``|N(μ_l, σ_l)|``, with labels drawn with the corpus's
    frequencies; the means and SDs are the corpus's. A sampled corpus has one sampled continuum for each
    continuum annotated by at least two annotators, with as many annotators (at most ``max_docs`` continua drawn at
    random among them, so that a sample's cost does not grow with the project); its disorder is
    :attr:`ObservedDisorder.value`. ``D_e`` is the mean over ``n_samples`` sampled corpora.

    Parameters
    ----------
    units : Units
    n_samples : int
        How many sampled corpora (pygamma's default is 30).
    seed : int
        The seed of the sampling; the same seed gives the same ``D_e``.
    max_docs : int
        The most continua in one sampled corpus.
    alpha, beta, delta_empty, label_distance
        See :func:`dissimilarity`.
    leave_out : array_like of bool, with shape (n_docs,), optional
        Continua left out of the corpus's statistics and of the sampled corpora's shape: those
        :func:`observed_disorder` left ``unaligned``, so that ``D_e`` is sampled from the corpus ``D_o`` measures.

    Returns
    -------
    ExpectedDisorder
    """
    if n_samples < 1:
        raise ValueError(f"The expected disorder needs at least one sample, not {n_samples}.")
    if leave_out is not None and np.any(leave_out):
        left = np.asarray(leave_out, dtype=bool)
        units = replace(units.select(~left[units.doc]), present=units.present & ~left[:, None])
    counts = units.present.sum(axis=1)
    eligible = np.sort(counts[counts >= 2])  # only how many annotators each has matters: sorted, order is moot
    if units.n_units == 0 or len(eligible) == 0:
        value = warn_undefined("Gamma's expected disorder", "no continuum has units from at least two annotators")
        return ExpectedDisorder(value, value, value, value, np.full(n_samples, np.nan), seed)
    statistics = _statistics(units)
    rng = np.random.default_rng(seed)
    # every sampled continuum of every sampled corpus is aligned at once: one mixed-integer program for all
    parts: list[tuple[NDArray[Any], ...]] = []
    sizes, corpus, n_docs = [], [], 0
    for i in range(n_samples):
        chosen = eligible if len(eligible) <= max_docs else rng.choice(eligible, size=max_docs, replace=False)
        doc, *rest = _sample(statistics, chosen, rng)
        parts.append((doc + n_docs, *rest))
        n_docs += len(chosen)
        sizes.append(chosen)
        corpus.append(np.full(len(chosen), i))
    doc, who, start, end, label = (np.concatenate(column) for column in zip(*parts, strict=True))
    disorders = _disorders(doc, who, start, end, label, np.concatenate(sizes), alpha=alpha, beta=beta,
                           delta_empty=delta_empty, label_distance=label_distance)
    if disorders.unaligned.any():  # a sample left out would bias the mean: nothing is sampled rather
        value = warn_undefined("Gamma's expected disorder", f"in {int(disorders.unaligned.sum())} of the sampled "
                                                            f"continua, {CROWDED_REASON}")
        return ExpectedDisorder(value, value, value, value, np.full(n_samples, np.nan), seed)
    within = np.concatenate(corpus)
    samples = (np.bincount(within, weights=disorders.total, minlength=n_samples)
               / np.bincount(within, weights=disorders.units_per_annotator, minlength=n_samples))
    value = float(samples.mean())
    half = _Z95 * float(samples.std(ddof=1)) / np.sqrt(n_samples) if n_samples > 1 else float("nan")
    return ExpectedDisorder(value, value - half, value + half, float(half / value) if value > 0 else float("nan"),
                            samples, seed)


def _gamma(observed: float, expected: float) -> float:
    """``1 - D_o / D_e``, NaN with a warning where it is not defined.

    No disorder is perfect agreement: gamma is 1 when ``D_o = 0`` whatever ``D_e`` (as pygamma-agreement does;
    otherwise identical annotators with one label and equal units would have ``D_e = 0`` and no gamma).
    """
    if np.isnan(observed):
        return warn_undefined("Gamma", "no continuum has units from at least two annotators")
    if observed == 0:
        return 1.0
    if not expected > 0:
        return warn_undefined("Gamma", f"the expected disorder is {expected}, not positive")
    return float(1.0 - observed / expected)


def gamma(units: Units, *, n_samples: int = 30, seed: int = 0, max_docs: int = 100, alpha: float = 1.0,
          beta: float = 1.0, delta_empty: float = 1.0, label_distance: ArrayLike | None = None) -> GammaResult:
    """Mathet's gamma of a corpus, with the sampling interval of its expected disorder.

    .. math:: \\gamma = 1 - \\frac{D_o}{D_e}

    (Mathet, Widlöcher & Métivier 2015), with ``D_o`` from :func:`observed_disorder` and ``D_e`` from
    :func:`expected_disorder`; ``low`` and ``high`` are gamma at the ends of ``D_e``'s 95% sampling interval.

    Parameters
    ----------
    units : Units
    n_samples, seed, max_docs
        See :func:`expected_disorder`.
    alpha, beta, delta_empty, label_distance
        See :func:`dissimilarity`.

    Returns
    -------
    GammaResult

    Examples
    --------
    >>> import pandas as pd
    >>> from agreement.units import units_from_frame
    >>> frame = pd.DataFrame({"doc": 1, "annotator": list("AAABBB"), "label": list("abaaba"),
    ...                       "start": [1, 6, 11, 2, 7, 12], "end": [5, 10, 15, 6, 11, 16]})
    >>> result = gamma(units_from_frame(frame), seed=1)
    >>> result.observed, result.low < result.value < result.high
    (0.0625, True)
    """
    options = {"alpha": alpha, "beta": beta, "delta_empty": delta_empty, "label_distance": label_distance}
    observed = observed_disorder(units, **options).value
    expected = expected_disorder(units, n_samples=n_samples, seed=seed, max_docs=max_docs, **options)
    return gamma_of(observed, expected)


def gamma_of(observed: float, expected: ExpectedDisorder) -> GammaResult:
    """Gamma from a corpus's observed disorder and an expected disorder already sampled.

    .. math:: \\gamma = 1 - \\frac{D_o}{D_e}

    with ``low`` and ``high`` at the ends of ``D_e``'s sampling interval, as :func:`gamma` gives them; for a
    caller that holds ``D_e`` (sampled once per pass) and the corpus's ``D_o``.

    Parameters
    ----------
    observed : float
        ``D_o`` (:attr:`ObservedDisorder.value`).
    expected : ExpectedDisorder

    Returns
    -------
    GammaResult

    Examples
    --------
    >>> expected = ExpectedDisorder(0.5, 0.4, 0.6, 0.2, np.array([0.4, 0.6]), 0)
    >>> result = gamma_of(0.1, expected)
    >>> round(result.value, 6), round(result.low, 6), round(result.high, 6)
    (0.8, 0.75, 0.833333)
    """
    n_samples, seed = len(expected.samples), expected.seed
    if np.isnan(observed) or np.isnan(expected.value):
        value = warn_undefined("Gamma", "no continuum has units from at least two annotators")
        return GammaResult(value, observed, expected.value, value, value, seed, n_samples, expected.precision)
    value = _gamma(observed, expected.value)
    low, high = (_bound(observed, expected.low), _bound(observed, expected.high)) if not np.isnan(value) else (value,
                                                                                                            value)
    return GammaResult(value, observed, expected.value, low, high, seed, n_samples, expected.precision)


def _bound(observed: float, expected: float) -> float:
    """Gamma at one end of D_e's interval.

    It is -inf where the interval reaches 0 (too few samples to bound gamma).
    """
    if observed == 0:
        return 1.0
    return float(1.0 - observed / expected) if expected > 0 else float("-inf")


def task_gammas(units: Units, expected_disorder: float, *, alpha: float = 1.0, beta: float = 1.0,
                delta_empty: float = 1.0, label_distance: ArrayLike | None = None) -> NDArray[np.float64]:
    """Every task's gamma: its own best-alignment disorder against the project's expected disorder.

    .. math:: \\gamma_t = 1 - \\frac{D_o(t)}{D_e}

    NaN for a task that fewer than two annotators annotated or where nobody marked a unit.

    Parameters
    ----------
    units : Units
    expected_disorder : float
        The project's ``D_e`` (:func:`expected_disorder`).
    alpha, beta, delta_empty, label_distance
        See :func:`dissimilarity`.

    Returns
    -------
    ndarray of float, with shape (n_docs,)
    """
    if not expected_disorder > 0:
        raise ValueError(f"A task's gamma needs a positive expected disorder, not {expected_disorder}.")
    per_task = observed_disorder(units, alpha=alpha, beta=beta, delta_empty=delta_empty,
                                 label_distance=label_distance).per_task
    return 1.0 - per_task / expected_disorder


def task_gamma(units_of_one_task: Units, expected_disorder: float, *, alpha: float = 1.0, beta: float = 1.0,
               delta_empty: float = 1.0, label_distance: ArrayLike | None = None) -> float:
    """One task's gamma, live: its best-alignment disorder against the project's expected disorder.

    Parameters
    ----------
    units_of_one_task : Units
        The units of one continuum (``units.docs`` has one entry).
    expected_disorder : float
        The project's ``D_e``.
    alpha, beta, delta_empty, label_distance
        See :func:`dissimilarity`.

    Returns
    -------
    float
        ``1 - D_o(task) / D_e``; NaN with a warning when fewer than two annotators annotated the task or nobody
        marked a unit.

    Examples
    --------
    >>> import pandas as pd
    >>> from agreement.units import units_from_frame
    >>> frame = pd.DataFrame({"doc": 7, "annotator": ["A", "B"], "label": "PER", "start": [1, 2], "end": [5, 6]})
    >>> task_gamma(units_from_frame(frame), 0.5)
    0.875
    """
    if len(units_of_one_task.docs) != 1:
        raise ValueError(f"task_gamma scores one task; these units hold {len(units_of_one_task.docs)} continua "
                         "(use task_gammas for several).")
    value = float(task_gammas(units_of_one_task, expected_disorder, alpha=alpha, beta=beta, delta_empty=delta_empty,
                              label_distance=label_distance)[0])
    if np.isnan(value):
        return warn_undefined("Gamma of a task", "fewer than two annotators annotated it or nobody marked a unit")
    return value
