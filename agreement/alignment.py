"""The best alignment of units across annotators, and the optimal matching of overlapping spans.

Mathet, Widlöcher & Métivier (2015), "The Unified and Holistic Method Gamma (γ) for Inter-Annotator Agreement
Measure and Alignment", *Computational Linguistics* 41(3), §4: a *unitary alignment* holds at most one unit of each
of the ``n`` annotators, an annotator without a unit there contributing the empty unit ∅. Its disorder is the mean
dissimilarity over its ``C(n, 2)`` pairs, a pair with an empty unit costing Δ∅. An *alignment* partitions all units
into unitary alignments; the *best* alignment is the one of least total disorder.

Finding it is a set-partitioning problem: choose, among candidate groups of units, groups that cover every unit
exactly once at the least total cost. :mod:`agreement.set_partition` builds the candidate groups
(:func:`~agreement.set_partition.unitary_candidates`) and solves any such problem exactly
(:func:`~agreement.set_partition.solve_set_partition`, re-exported here with ``unitary_candidates``): a component of a
few elements by dynamic programming over its subsets, a larger one as a mixed-integer program. For two annotators the
problem is an assignment problem and :func:`best_alignment` solves it with :func:`scipy.optimize.linear_sum_assignment`
instead. :func:`best_alignments` builds the candidate groups of many continua in one vectorised pass.
:func:`match_overlapping` reuses the set partition to group spans of one text into items: the partition of greatest
total Jaccard overlap whose groups hold at most one span per annotator, every pair overlapping enough.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike, NDArray
from scipy import sparse
from scipy.optimize import linear_sum_assignment
from scipy.sparse.csgraph import connected_components

from agreement.ranges import ranges
from agreement.set_partition import _candidates, _Continua, solve_set_partition, unitary_candidates

__all__ = ["Alignment", "alignment_reach", "alignment_totals", "best_alignment", "best_alignments", "jaccard_matrix",
           "match_overlapping", "matrix_entries", "solve_set_partition", "unitary_candidates"]


@dataclass(frozen=True)
class Alignment:
    """A partition of one continuum's units into unitary alignments.

    Attributes
    ----------
    group : ndarray of int, with shape (n_units,)
        The unitary alignment of each unit, numbered from 0.
    disorder : ndarray of float, with shape (n_groups,)
        Each unitary alignment's disorder (the mean over its pairs).
    """

    group: NDArray[np.intp]
    disorder: NDArray[np.float64]

    @property
    def total(self) -> float:
        """The alignment's total disorder, the sum over its unitary alignments."""
        return float(self.disorder.sum())


def _padded_assignment(cross: NDArray[np.float64], delta_empty: float) -> tuple[NDArray[np.intp], NDArray[np.intp]]:
    """Optimal pairs of a (p, q) cost matrix where leaving a unit alone costs Δ∅.

    It is the assignment padded with ∅.
    """
    p, q = cross.shape
    padded = np.full((p + q, q + p), np.inf)
    padded[:p, :q] = cross
    padded[:p, q:][np.diag_indices(p)] = delta_empty  # a unit of the first annotator with the empty unit
    padded[p:, :q][np.diag_indices(q)] = delta_empty  # a unit of the second annotator with the empty unit
    padded[p:, q:] = 0.0
    rows, cols = linear_sum_assignment(padded)
    real = (rows < p) & (cols < q)
    return rows[real], cols[real]


def _assignment(annotator: NDArray[np.intp], dissimilarity: NDArray[np.float64], delta_empty: float) -> Alignment:
    """Best alignment of two annotators' units: an assignment problem padded with empty units.

    A pair costing 2Δ∅ or more is no better than its two units alone, so the problem splits into the connected
    components of the pairs that cost less; a component of one unit stands alone, one of two units is a pair, and
    the others are solved by :func:`scipy.optimize.linear_sum_assignment` each. A continuum of at most
    :data:`SMALL_ASSIGNMENT` units where a unit is near two others is one padded assignment, without that search
    (a continuum cut within reach, as :func:`alignment_totals` cuts them, is usually one component already).
    """
    first, second = np.flatnonzero(annotator == 0), np.flatnonzero(annotator == 1)
    p, q = len(first), len(second)
    cross = dissimilarity[np.ix_(first, second)]
    near_first, near_second = np.nonzero(cross < 2 * delta_empty)
    if len(set(near_first.tolist())) == len(near_first) and len(set(near_second.tolist())) == len(near_second):
        # no unit is near two others (the usual case): every component is a pair or a unit alone
        pair_first, pair_second = near_first, near_second
    elif p + q <= SMALL_ASSIGNMENT:
        pair_first, pair_second = _padded_assignment(cross, delta_empty)
    else:
        graph = sparse.coo_array((np.ones(len(near_first)), (near_first, p + near_second)), shape=(p + q, p + q))
        _, component = connected_components(graph, directed=False)
        size = np.bincount(component)
        pairs_first = [near_first[size[component[near_first]] == 2]]
        pairs_second = [near_second[size[component[near_first]] == 2]]
        order = np.argsort(component, kind="stable")
        bounds = np.searchsorted(component[order], np.arange(len(size) + 1))
        for c in np.flatnonzero(size > 2):
            members = order[bounds[c]:bounds[c + 1]]
            rows, cols = members[members < p], members[members >= p] - p
            r, k = _padded_assignment(cross[np.ix_(rows, cols)], delta_empty)
            pairs_first.append(rows[r])
            pairs_second.append(cols[k])
        pair_first, pair_second = np.concatenate(pairs_first), np.concatenate(pairs_second)
    group = np.full(p + q, -1, dtype=np.intp)
    n_pairs = len(pair_first)
    group[first[pair_first]] = group[second[pair_second]] = np.arange(n_pairs)
    alone = np.flatnonzero(group < 0)
    group[alone] = n_pairs + np.arange(len(alone))
    disorder = np.concatenate([cross[pair_first, pair_second], np.full(len(alone), float(delta_empty))])
    return Alignment(group, disorder)


SMALL_ASSIGNMENT = 40
"""Units of a two-annotator continuum solved as one padded assignment, without looking for its components first."""

PROGRAM_GROUPS = 50_000
"""Candidate groups gathered into one mixed-integer program at most (continua are independent, so a corpus is
solved in programs of about this size: the same optimum, in bounded memory)."""

BATCH_UNITS = 60_000
"""Units of the continua whose candidate groups are built together, in one vectorised pass, at most (a continuum
with more is a batch of its own)."""


def _programs(who: NDArray[np.intp], size: NDArray[np.intp], cost: NDArray[np.float64], *, n_annotators: int,
              delta_empty: float, program_groups: int
              ) -> Iterator[tuple[int, _Continua, NDArray[np.intp], NDArray[np.float64], NDArray[np.intp]]]:
    """The best alignments of continua of ``n_annotators`` given end to end, a batch at a time.

    ``cost`` holds each continuum's raveled matrix; a batch holds at most :data:`BATCH_UNITS` units. Yields each batch's
    first continuum, the batch, and :func:`_picked_groups` of its candidate groups.
    """
    pairs = n_annotators * (n_annotators - 1) // 2
    reach = alignment_reach(n_annotators, delta_empty=delta_empty)
    bounds = np.concatenate([[0], np.cumsum(size)]).astype(np.intp)
    flat = np.concatenate([[0], np.cumsum(size * size)]).astype(np.intp)
    first = 0
    while first < len(size):
        last = max(int(np.searchsorted(bounds, bounds[first] + BATCH_UNITS, side="right")) - 1, first + 1)
        part = cost[flat[first]:flat[last]]
        batch = _Continua(who[bounds[first]:bounds[last]],
                          np.repeat(np.arange(last - first, dtype=np.intp), size[first:last]),
                          bounds[first:last + 1] - bounds[first], part, part <= reach)
        members, total, continuum = _candidates(batch, n_annotators=n_annotators, empty_cost=delta_empty,
                                                budget=delta_empty)
        yield (first, batch,
               *_picked_groups(batch, members, total / pairs, continuum, program_groups=program_groups))
        first = last


def _picked_groups(batch: _Continua, members: NDArray[np.intp], cost: NDArray[np.float64],
                   continuum: NDArray[np.intp], *, program_groups: int
                   ) -> tuple[NDArray[np.intp], NDArray[np.float64], NDArray[np.intp]]:
    """Each continuum's best alignment from the candidate groups of a batch.

    Solved in programs of at most about ``program_groups`` groups cut between continua. Returns each unit's group
    (numbered from 0 in its continuum), and each chosen group's disorder and continuum (ordered by continuum).
    """
    n_continua = len(batch.start) - 1
    first_group = np.searchsorted(continuum, np.arange(n_continua + 1))
    group = np.full(int(batch.start[-1]), -1, dtype=np.intp)
    disorders, owners = [], []
    c0 = 0
    while c0 < n_continua:
        c1 = int(np.searchsorted(first_group, first_group[c0] + program_groups, side="right")) - 1
        c1 = min(max(c1, c0 + 1), n_continua)
        g0, g1 = first_group[c0], first_group[c1]
        block, block_cost = members[g0:g1], cost[g0:g1]
        group_of, unit = np.nonzero(block >= 0)
        u0 = batch.start[c0]
        incidence = sparse.csc_array((np.ones(len(unit)), (block[group_of, unit] - u0, group_of)),
                                     shape=(batch.start[c1] - u0, g1 - g0))
        picked = np.flatnonzero(solve_set_partition(incidence, block_cost))
        owner = continuum[g0:g1][picked]
        first_pick = np.searchsorted(owner, np.arange(c0, c1 + 1))
        number = np.arange(len(picked)) - first_pick[owner - c0]
        chosen = block[picked]
        group[chosen[chosen >= 0]] = np.broadcast_to(number[:, None], chosen.shape)[chosen >= 0]
        disorders.append(block_cost[picked])
        owners.append(owner)
        c0 = c1
    if not disorders:
        return group, np.zeros(0), np.zeros(0, dtype=np.intp)
    return group, np.concatenate(disorders), np.concatenate(owners)


def best_alignments(continua: Sequence[tuple[ArrayLike, ArrayLike, int]], *, delta_empty: float = 1.0,
                    method: str = "auto", program_groups: int = PROGRAM_GROUPS) -> list[Alignment]:
    """The best alignment of each of several continua, the mixed-integer ones solved together.

    The mixed-integer ones are built together in vectorised batches and solved in programs of about ``program_groups``
    candidate groups each (the same optimum as one program, in bounded memory).

    Parameters
    ----------
    continua : sequence of (annotator, dissimilarity, n_annotators)
        For each continuum: each unit's annotator in ``range(n_annotators)``, with shape (n_units,); the
        dissimilarity between its units, with shape (n_units, n_units); how many annotators it has (at least 2).
    delta_empty : float
        Δ∅, the dissimilarity between a unit and the empty unit.
    method : {"auto", "milp"}
        ``"auto"`` solves two annotators as an assignment problem and more as a mixed-integer program;
        ``"milp"`` solves all as mixed-integer programs.
    program_groups : int
        Candidate groups in one mixed-integer program at most (a continuum with more is a program of its own).

    Returns
    -------
    list of Alignment
    """
    if method not in ("auto", "milp"):
        raise ValueError(f"method must be 'auto' or 'milp', not {method!r}.")
    out: list[Alignment | None] = [None] * len(continua)
    programs: dict[int, list[tuple[int, NDArray[np.intp], NDArray[np.float64]]]] = {}
    for index, (annotator, dissimilarity, n_annotators) in enumerate(continua):
        who = np.asarray(annotator, dtype=np.intp)
        matrix = np.asarray(dissimilarity, dtype=float)
        if n_annotators < 2:
            raise ValueError(f"An alignment needs at least two annotators; continuum {index} has {n_annotators}.")
        if len(who) and (who.min() < 0 or who.max() >= n_annotators):
            raise ValueError(f"Continuum {index}: annotator codes must lie in range({n_annotators}).")
        if n_annotators == 2 and method == "auto":
            out[index] = _assignment(who, matrix, delta_empty)
        else:
            programs.setdefault(n_annotators, []).append((index, who, matrix))
    for n_annotators, waiting in programs.items():
        size = np.array([len(who) for _, who, _ in waiting], dtype=np.intp)
        for first, batch, group, disorder, owner in _programs(
                np.concatenate([who for _, who, _ in waiting]), size,
                np.concatenate([matrix.ravel() for _, _, matrix in waiting]), n_annotators=n_annotators,
                delta_empty=delta_empty, program_groups=program_groups):
            first_pick = np.searchsorted(owner, np.arange(len(batch.start)))
            for c in range(len(batch.start) - 1):
                out[waiting[first + c][0]] = Alignment(group[batch.start[c]:batch.start[c + 1]],
                                                       disorder[first_pick[c]:first_pick[c + 1]])
    return out  # type: ignore[return-value]


def alignment_totals(annotator: ArrayLike, sizes: ArrayLike, cost: ArrayLike, *, n_annotators: int,
                     delta_empty: float = 1.0, connected: bool = False) -> NDArray[np.float64]:
    """The total disorder of each continuum's best alignment, for many continua given end to end.

    The same optimum as :func:`best_alignments`, without a Python object per continuum. With two annotators, a
    pair costing 2Δ∅ or more is no better than its units alone; where no unit has two cheaper partners (the usual
    case), the best alignment pairs every cheaper pair and leaves the other units alone, so its total is

    .. math::

        \\sum_{(u, v):\\, d(u, v) < 2\\Delta_\\varnothing} d(u, v)
        + \\Delta_\\varnothing\\, |\\text{units alone}|,

    found for every such continuum at once; the others are solved one by one as in :func:`best_alignments`. More
    annotators are solved as set-partitioning programs, their candidate groups built a batch of continua at a time,
    each continuum first cut into the connected components of its units within :func:`alignment_reach` of each
    other: no unitary alignment of a best alignment holds two units further apart, so a continuum's total is the
    sum of its components' totals, and a component of one unit costs Δ∅.

    Parameters
    ----------
    annotator : array_like of int, with shape (n_units,)
        Each unit's annotator in ``range(n_annotators)``; continuum ``c``'s units follow continuum ``c - 1``'s.
    sizes : array_like of int, with shape (n_continua,)
        How many units each continuum holds (at least one).
    cost : array_like of float
        Each continuum's ``(sizes[c], sizes[c])`` dissimilarity matrix, raveled, end to end.
    n_annotators : int
        How many annotators every continuum has (at least 2), those without a unit included.
    delta_empty : float
        Δ∅.
    connected : bool
        Each continuum is one such component already (as :func:`agreement.gamma.observed_disorder` gives them):
        they are not cut again.

    Returns
    -------
    ndarray of float, with shape (n_continua,)

    Examples
    --------
    Two continua of two annotators: a pair at 0.25 (aligned); a pair at 3.0 (both units alone, 2Δ∅).

    >>> alignment_totals([0, 1, 0, 1], [2, 2], [0, 0.25, 0.25, 0, 0, 3.0, 3.0, 0], n_annotators=2).tolist()
    [0.25, 2.0]
    """
    who = np.asarray(annotator, dtype=np.intp)
    size = np.asarray(sizes, dtype=np.intp)
    flat_cost = np.asarray(cost, dtype=float)
    if n_annotators < 2:
        raise ValueError(f"An alignment needs at least two annotators, not {n_annotators}.")
    if len(size) and size.min() < 1:
        raise ValueError("Every continuum of alignment_totals must hold at least one unit.")
    if int(size.sum()) != len(who) or int((size * size).sum()) != len(flat_cost):
        raise ValueError(f"{len(who)} units and {len(flat_cost)} pair costs do not match continua of "
                         f"{int(size.sum())} units and {int((size * size).sum())} pairs.")
    if len(who) and (who.min() < 0 or who.max() >= n_annotators):
        raise ValueError(f"Annotator codes must lie in range({n_annotators}).")
    if n_annotators == 2:
        return _two_annotator_totals(who, size, flat_cost, delta_empty)
    if connected:
        owner, part_who, part_size, part_cost = np.arange(len(size)), who, size, flat_cost
    else:
        owner, part_who, part_size, part_cost = _split_by_reach(
            who, size, flat_cost, reach=alignment_reach(n_annotators, delta_empty=delta_empty))
    # a unit out of every other's reach stands alone: its unitary alignment's disorder is Δ∅
    totals = np.bincount(owner[part_size == 1], minlength=len(size)) * float(delta_empty)
    shared = np.flatnonzero(part_size > 1)
    if not len(shared):
        return totals
    units, entries = _parts(part_size, shared)
    for first, batch, _, disorder, group_owner in _programs(
            part_who[units], part_size[shared], part_cost[entries], n_annotators=n_annotators,
            delta_empty=delta_empty, program_groups=PROGRAM_GROUPS):
        totals += np.bincount(owner[shared[first + group_owner]], weights=disorder, minlength=len(size))
    return totals


def alignment_reach(n_annotators: int, *, delta_empty: float = 1.0) -> float:
    """The dissimilarity beyond which two units are never in one unitary alignment of a best alignment.

    .. math:: (n - 1 + \\binom{n}{2})\\, \\Delta_\\varnothing

    A unit whose dissimilarities to the others of its unitary alignment of ``k`` units exceed
    ``(k - 1 + C(n, 2)) Δ∅`` is better off alone (:func:`~agreement.set_partition.unitary_candidates`), and ``k <= n``.

    Examples
    --------
    >>> round(alignment_reach(3), 9)
    5.0
    """
    return (n_annotators - 1 + n_annotators * (n_annotators - 1) // 2) * delta_empty * (1 + 1e-12)


def _split_by_reach(who: NDArray[np.intp], size: NDArray[np.intp], cost: NDArray[np.float64], *, reach: float
                    ) -> tuple[NDArray[np.intp], NDArray[np.intp], NDArray[np.intp], NDArray[np.float64]]:
    """Continua given end to end, cut into connected components of units within reach of each other.

    Two units are connected when their dissimilarity is at most ``reach``.

    No unitary alignment of a best alignment holds two units further apart than ``reach``, so a continuum's best
    alignment is the union of its components' best alignments, and its total disorder their sum. The components are
    continua of their own (the same annotators: those without a unit in one add empty units), aligned far faster
    than the whole: a text of 36 units from three annotators is typically a dozen components of two to four. Units
    of one annotator are never in one unitary alignment: their pairs connect nothing.

    Returns each component's continuum (ordered by continuum), and the components end to end as ``who``, ``size``
    and ``cost`` are.
    """
    n_units = len(who)
    row, column = matrix_entries(size)
    near = (cost <= reach) & (row < column) & (who[row] != who[column])
    graph = sparse.coo_array((np.ones(int(near.sum())), (row[near], column[near])), shape=(n_units, n_units))
    _, component = connected_components(graph, directed=False)
    # components are numbered in the order of their first unit, so they follow their continua's order
    continuum = np.repeat(np.arange(len(size), dtype=np.intp), size)
    order = np.argsort(component, kind="stable")
    part_size = np.bincount(component).astype(np.intp)
    part_start = np.cumsum(part_size) - part_size
    owner = continuum[order[part_start]]
    # each component's matrix, its entries read from its continuum's
    part_row, part_column = matrix_entries(part_size)
    first, second = order[part_row], order[part_column]
    unit_start = (np.cumsum(size) - size)[continuum[first]]
    flat_start = (np.cumsum(size * size) - size * size)[continuum[first]]
    width = size[continuum[first]]
    part_cost = cost[flat_start + (first - unit_start) * width + (second - unit_start)]
    return owner, who[order], part_size, part_cost


def _parts(size: NDArray[np.intp], chosen: NDArray[np.intp]) -> tuple[NDArray[np.intp], NDArray[np.intp]]:
    """Where the ``chosen`` continua's units and raveled matrices' entries are.

    The continua, of ``size``, are given end to end.
    """
    unit_start = np.cumsum(size) - size
    flat_start = np.cumsum(size * size) - size * size
    return ranges(unit_start[chosen], size[chosen]), ranges(flat_start[chosen], size[chosen] ** 2)


def matrix_entries(sizes: ArrayLike) -> tuple[NDArray[np.intp], NDArray[np.intp]]:
    """The row and the column of every entry of square matrices of ``sizes``, raveled and end to end.

    Each entry's row's and column's index among the matrices' rows end to end (a continuum's dissimilarities between its
    units, for many continua).

    Examples
    --------
    >>> row, column = matrix_entries([2, 1])
    >>> row.tolist(), column.tolist()
    ([0, 0, 1, 1, 2], [0, 1, 0, 1, 2])
    """
    size = np.asarray(sizes, dtype=np.intp)
    per_row = np.repeat(size, size)  # each row's length: its matrix's size
    return (np.repeat(np.arange(len(per_row)), per_row),
            ranges(np.repeat(np.cumsum(size) - size, size), per_row))


def _two_annotator_totals(who: NDArray[np.intp], size: NDArray[np.intp], cost: NDArray[np.float64],
                          delta_empty: float) -> NDArray[np.float64]:
    """:func:`alignment_totals` of continua of two annotators."""
    n_continua, n_units = len(size), len(who)
    bounds = np.concatenate([[0], np.cumsum(size)]).astype(np.intp)
    unit_continuum = np.repeat(np.arange(n_continua), size)
    row, column = matrix_entries(size)
    near = np.flatnonzero((who[row] == 0) & (who[column] == 1) & (cost < 2 * delta_empty))
    first, second = row[near], column[near]
    partners = np.bincount(first, minlength=n_units) + np.bincount(second, minlength=n_units)
    tangled = np.bincount(unit_continuum, weights=partners > 1, minlength=n_continua) > 0
    n_pairs = np.bincount(unit_continuum[first], minlength=n_continua)
    totals = (np.bincount(unit_continuum[first], weights=cost[near], minlength=n_continua)
              + delta_empty * (size - 2 * n_pairs))
    flat = np.concatenate([[0], np.cumsum(size * size)]).astype(np.intp)
    for c in np.flatnonzero(tangled).tolist():  # a unit near two others: an assignment problem of its own
        matrix = cost[flat[c]:flat[c + 1]].reshape(size[c], size[c])
        totals[c] = _assignment(who[bounds[c]:bounds[c + 1]], matrix, delta_empty).total
    return totals


def best_alignment(annotator: ArrayLike, dissimilarity: ArrayLike, *, n_annotators: int | None = None,
                   delta_empty: float = 1.0, method: str = "auto") -> Alignment:
    """The best alignment of one continuum's units (Mathet, Widlöcher & Métivier 2015, §4).

    The disorder of a unitary alignment ``ū`` of ``n`` annotators' units (empty units ∅ included) is

    .. math::

        \\delta(\\bar u) = \\binom{n}{2}^{-1} \\sum_{i < j} d(u_i, u_j), \\qquad
        d(u, \\varnothing) = \\Delta_\\varnothing

    and the best alignment is the partition of all units into unitary alignments of least total disorder, found
    exactly: an optimal assignment for two annotators, a set-partitioning mixed-integer program for more.

    Parameters
    ----------
    annotator : array_like of int, with shape (n_units,)
        Each unit's annotator, in ``range(n_annotators)``.
    dissimilarity : array_like, with shape (n_units, n_units)
        The dissimilarity between units (only pairs of different annotators are read).
    n_annotators : int, optional
        How many annotators the continuum has, those without a unit included; by default ``max(annotator) + 1``.
    delta_empty : float
        Δ∅.
    method : {"auto", "milp"}
        See :func:`best_alignments`.

    Returns
    -------
    Alignment

    Examples
    --------
    Two annotators, one unit each, dissimilarity 0.25 between them: aligned together (0.25 < 2 Δ∅).

    >>> best_alignment([0, 1], [[0.0, 0.25], [0.25, 0.0]]).total
    0.25
    """
    who = np.asarray(annotator, dtype=np.intp)
    n = int(who.max()) + 1 if n_annotators is None and len(who) else (n_annotators or 0)
    return best_alignments([(who, dissimilarity, n)], delta_empty=delta_empty, method=method)[0]


def jaccard_matrix(start: ArrayLike, end: ArrayLike) -> NDArray[np.float64]:
    """The Jaccard overlap of every two stretches ``[start, end)``.

    Their intersection's length over their union's.

    Examples
    --------
    >>> float(jaccard_matrix([0, 5], [10, 15])[0, 1])
    0.3333333333333333
    """
    s, e = np.asarray(start, dtype=float), np.asarray(end, dtype=float)
    inter = np.clip(np.minimum(e[:, None], e[None, :]) - np.maximum(s[:, None], s[None, :]), 0.0, None)
    union = (e - s)[:, None] + (e - s)[None, :] - inter
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(union > 0, inter / union, 0.0)


def match_overlapping(annotator: ArrayLike, start: ArrayLike, end: ArrayLike, *, jaccard: float = 0.5,
                      label: ArrayLike | None = None) -> NDArray[np.intp]:
    """Group the spans of one continuum into items: the grouping of greatest total overlap.

    A group holds at most one span per annotator and every two of its spans overlap with a Jaccard index of at
    least ``jaccard`` (and share a label, if ``label`` is given). Among the partitions of the spans into such groups,
    the one maximising the summed Jaccard index over the pairs inside groups is chosen exactly: for two annotators
    this is the optimal one-to-one assignment of :func:`scipy.optimize.linear_sum_assignment`, unlike a greedy order.

    Parameters
    ----------
    annotator : array_like of int, with shape (n_units,)
        Each span's annotator (any integer codes).
    start, end : array_like, with shape (n_units,)
        Where each span begins and ends.
    jaccard : float
        The least Jaccard index of two spans in one group, in (0, 1].
    label : array_like, with shape (n_units,), optional
        Each span's label; spans of different labels are never grouped.

    Returns
    -------
    ndarray of int, with shape (n_units,)
        Each span's group, numbered from 0 in order of first appearance.

    Examples
    --------
    >>> match_overlapping([0, 0, 1, 1], [0, 12, 1, 30], [10, 20, 10, 40]).tolist()
    [0, 1, 0, 2]
    """
    if not 0 < jaccard <= 1:
        raise ValueError(f"The Jaccard threshold must lie in (0, 1], not {jaccard}.")
    codes, who = np.unique(np.asarray(annotator), return_inverse=True)
    n = len(who)
    if n == 0:
        return np.zeros(0, dtype=np.intp)
    overlap = jaccard_matrix(start, end)
    ok = (overlap >= jaccard) & (who[:, None] != who[None, :])
    if label is not None:
        lab = np.asarray(label)
        ok &= lab[:, None] == lab[None, :]
    if len(codes) == 1:
        return np.arange(n, dtype=np.intp)
    members, cost = unitary_candidates(who, -overlap, n_annotators=len(codes), empty_cost=0.0, compatible=ok)
    group_of, unit = np.nonzero(members.T >= 0)[1], members.T[members.T >= 0]
    incidence = sparse.csc_array((np.ones(len(unit)), (unit, group_of)), shape=(n, len(cost)))
    chosen = np.flatnonzero(solve_set_partition(incidence, cost))
    group = np.full(n, -1, dtype=np.intp)
    for number, g in enumerate(chosen):
        group[members[g][members[g] >= 0]] = number
    _, first = np.unique(group, return_index=True)
    return np.argsort(np.argsort(first)).astype(np.intp)[group]
