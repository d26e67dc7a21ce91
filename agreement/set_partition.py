"""The set-partitioning problem under alignments: candidate groups of units, and its exact solver.

An alignment of units across annotators (:mod:`agreement.alignment`) and the grouping of one text's spans into items
(:func:`agreement.alignment.match_overlapping`) are both set-partitioning problems: choose, among candidate groups of
units, groups that cover every unit exactly once at the least total cost. :func:`unitary_candidates` builds the
candidate groups, at most one unit per annotator with every pair compatible, for one continuum (``_candidates`` for
many continua in one vectorised pass). :func:`solve_set_partition` solves any such problem exactly, component by
component: a component of a few elements by dynamic programming over its subsets (vectorised over all such
components), a larger one as a mixed-integer program through SciPy's HiGHS (:func:`scipy.optimize.milp`).
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike, NDArray
from scipy import sparse
from scipy.optimize import Bounds, LinearConstraint, linprog, milp
from scipy.sparse.csgraph import connected_components

__all__ = ["solve_set_partition", "too_many_candidates", "unitary_candidates"]


def solve_set_partition(incidence: ArrayLike | sparse.spmatrix | sparse.sparray, cost: ArrayLike) -> NDArray[np.bool_]:
    """Choose groups that cover every element exactly once at the least total cost.

    .. math:: \\min_x c^\\top x \\quad \\text{s.t.} \\quad A x = 1,\\; x \\in \\{0, 1\\}^g

    solved exactly, one connected component of elements sharing groups at a time: a component of at most
    :data:`SMALL_COMPONENT` elements by dynamic programming over the subsets of its elements (a block that no
    group covers costs infinity), the others by HiGHS's branch and bound through :func:`scipy.optimize.milp` (relative
    gap 0) where their linear relaxation is not integral.

    Parameters
    ----------
    incidence : array_like or sparse matrix, with shape (n_elements, n_groups)
        ``incidence[i, j]`` is 1 when group ``j`` holds element ``i``.
    cost : array_like, with shape (n_groups,)
        Each group's cost.

    Returns
    -------
    ndarray of bool, with shape (n_groups,)
        The chosen groups.

    Examples
    --------
    >>> solve_set_partition([[1, 0, 1], [0, 1, 1]], [1.0, 1.0, 1.5]).tolist()
    [False, False, True]
    """
    matrix = sparse.csc_array(incidence, dtype=float)
    c = np.asarray(cost, dtype=float)
    if matrix.shape[1] != len(c):
        raise ValueError(f"The incidence matrix has {matrix.shape[1]} groups and the cost vector {len(c)}.")
    if matrix.shape[1] == 0:
        if matrix.shape[0]:
            raise ValueError("No group covers the elements: a set partition needs at least one group per element.")
        return np.zeros(0, dtype=bool)
    if np.any(np.diff(matrix.indptr) == 0):
        raise ValueError("Every group must hold at least one element.")
    if np.any(np.diff(matrix.tocsr().indptr) == 0):
        raise ValueError("The set partition has no solution: some element is in no group.")
    # The problem splits into the connected components of elements sharing groups. A component of a few elements
    # is solved by dynamic programming over its subsets; the others go to the relaxation.
    _, component = connected_components((matrix @ matrix.T).tocsr(), directed=False)
    size = np.bincount(component)
    group_component = component[matrix.indices[matrix.indptr[:-1]]]
    chosen = _choose_small(matrix, c, component, size, group_component)
    large = size[group_component] > SMALL_COMPONENT
    if large.any():
        chosen[large] = _solve_relaxed(matrix[size[component] > SMALL_COMPONENT][:, large], c[large])
    return chosen


MAX_CANDIDATES = 1 << 16
"""Candidate groups of one component that :func:`unitary_candidates` is asked to build, at most, as bounded by
:func:`too_many_candidates` before any is built. Where n annotators each marked one unit at one place, all
compatible, there are 2^n - 1: 16 annotators are grouped (65,535 candidates, about half a second on two cores);
callers leave a larger component out with a reason rather than let it take the machine's memory (30 annotators
would need 2^30)."""

CROWDED_REASON = (f"units there overlap among too many annotators to align exactly (over {MAX_CANDIDATES:,} "
                  "candidate groups)")
"""Why a component is left out, as the end of a sentence."""


def too_many_candidates(component: ArrayLike, annotator: ArrayLike, first: ArrayLike,
                        second: ArrayLike) -> NDArray[np.bool_]:
    """Whether each component's units could make more than :data:`MAX_CANDIDATES` candidate groups.

    A candidate group holds at most one unit of each annotator, every two of them compatible. Counted by its
    unit of the lowest annotator ``u``, the groups are at most :math:`\\prod_{a > a_u} (1 + c_a(u))`, with
    :math:`c_a(u)` the units of annotator ``a`` compatible with ``u``; a component's bound is the sum over its
    units. It is exact where every pair is compatible (a crowd at one place: 2^n - 1) and stays small where
    compatibility is local (a sentence tagged token by token, each token near a few others).

    Parameters
    ----------
    component, annotator : array_like of int, with shape (n_units,)
        Each unit's component and annotator codes.
    first, second : array_like of int
        The compatible pairs of units, each once (pairs of one annotator are ignored).

    Returns
    -------
    ndarray of bool, with shape (n_components,)

    Examples
    --------
    Seventeen annotators, one unit each, all compatible (2^17 - 1 groups); three annotators tagging 60 tokens each,
    every token compatible with its neighbours within two places:

    >>> crowd = list(range(17))
    >>> pairs = [(u, v) for u in crowd for v in crowd if u < v]
    >>> too_many_candidates([0] * 17, crowd, *zip(*pairs)).tolist()
    [True]
    >>> tokens = [(a, t) for a in range(3) for t in range(60)]
    >>> near = [(i, j) for i, (a, t) in enumerate(tokens) for j, (b, s) in enumerate(tokens)
    ...         if a < b and abs(t - s) <= 2]
    >>> too_many_candidates([0] * 180, [a for a, _ in tokens], *zip(*near)).tolist()
    [False]
    """
    c, a = np.asarray(component, dtype=np.intp), np.asarray(annotator, dtype=np.intp)
    u, v = np.asarray(first, dtype=np.intp), np.asarray(second, dtype=np.intp)
    if not len(c):
        return np.zeros(0, dtype=bool)
    n, n_a = len(c), int(a.max()) + 1
    apart = a[u] != a[v]
    u, v = u[apart], v[apart]
    partners = np.bincount(np.concatenate([u * n_a + a[v], v * n_a + a[u]]), minlength=n * n_a).reshape(n, n_a)
    later = np.cumsum(np.log1p(partners)[:, ::-1], axis=1)[:, ::-1]  # later[u, b]: sum over annotators >= b
    log_groups = np.where(a + 1 < n_a, later[np.arange(n), np.minimum(a + 1, n_a - 1)], 0.0)
    groups = np.bincount(c, weights=np.exp(np.minimum(log_groups, 700.0)))
    return groups > MAX_CANDIDATES * (1 + 1e-9)


SMALL_COMPONENT = 10
"""Elements of a component solved by dynamic programming over the subsets of its elements (3^10 / 2 = 29,525 block
choices at most), vectorised over all components of one size; larger components go to the linear program. Three
annotators' units that align, with a neighbour or two, come in components of 2 to 9 units: numpy, not HiGHS."""

CHUNK_CELLS = 1 << 22
"""Cells of the dynamic program's tables held at once at most: components times the larger of their ``2**k``
subsets and the blocks tried for the subsets of one size."""


@functools.cache
def _popcounts(k: int) -> NDArray[np.intp]:
    """How many elements each subset of ``k`` elements holds, by its bit mask."""
    masks = np.arange(1 << k, dtype=np.intp)
    return ((masks[:, None] >> np.arange(k)[None, :]) & 1).sum(axis=1)


@functools.cache
def _subset_steps(k: int, largest: int) -> tuple[tuple[NDArray[np.intp], NDArray[np.intp], NDArray[np.intp]], ...]:
    """The steps of :func:`_choose_small`'s recursion over the subsets of ``k`` elements.

    One step per subset size ``p`` (smallest first): the subsets of that size the recursion reaches from the full set
    (as bit masks), and for each the blocks of at most ``largest`` elements holding its lowest element (one per column)
    and what is left of it without that block.

    With blocks of at most three elements, 151 subsets of 9 elements are reached (of 512) and 1,342 blocks tried
    (of 9,841)."""
    popcount = _popcounts(k)
    reached = np.zeros(1 << k, dtype=bool)
    reached[-1] = True
    steps = []
    for p in range(k, 0, -1):  # from the full set down: what is left always holds fewer elements
        level = np.flatnonzero(reached & (popcount == p))
        lowest = level & -level
        # a block: the lowest element with some of the p - 1 others (at most largest - 1 of them)
        others = level ^ lowest
        place = np.argsort(-((others[:, None] >> np.arange(k)[None, :]) & 1), axis=1, kind="stable")[:, :p - 1]
        pattern = np.arange(1 << (p - 1), dtype=np.intp)
        pattern = pattern[_popcounts(p - 1)[pattern] <= largest - 1] if p > 1 else pattern
        choose = (pattern[:, None] >> np.arange(p - 1)[None, :]) & 1  # (blocks, p - 1)
        blocks = lowest[:, None] + (choose[None, :, :] << place[:, None, :]).sum(axis=2)
        rest = level[:, None] ^ blocks
        reached[rest] = True
        steps.append((level, blocks, rest))
    return tuple(reversed(steps))


def _choose_small(matrix: sparse.csc_array, c: NDArray[np.float64], component: NDArray[np.intp],
                  size: NDArray[np.intp], group_component: NDArray[np.intp]) -> NDArray[np.bool_]:
    """The best groups of every component of at most :data:`SMALL_COMPONENT` elements.

    A group's elements are a bit mask; a block no group covers costs infinity.

    For the components of ``k`` elements at once, the least cost of covering each subset ``S`` of their elements is

    .. math:: f(\\varnothing) = 0, \\qquad f(S) = \\min_{B \\subseteq S,\\; \\min S \\in B} c(B) + f(S \\setminus B)

    with ``c(B)`` the cheapest group holding exactly ``B``: each block ``B`` holds the lowest element of what is left,
    so every set partition is counted once (3^k / 2 terms at most; fewer when no group holds more than a few
    elements), computed for all subsets of one size at a time.
    """
    chosen = np.zeros(len(c), dtype=bool)
    order = np.argsort(component, kind="stable")
    rank = np.empty(len(component), dtype=np.int64)
    rank[order] = np.arange(len(component)) - (np.cumsum(size) - size)[component[order]]
    rows = matrix.indices
    bits = np.where(size[component[rows]] <= SMALL_COMPONENT,
                    np.left_shift(1, np.minimum(rank[rows], SMALL_COMPONENT)), 0)
    mask = np.bincount(np.repeat(np.arange(len(c)), np.diff(matrix.indptr)), weights=bits,
                       minlength=len(c)).astype(np.int64)
    for k in range(1, SMALL_COMPONENT + 1):
        components = np.flatnonzero(size == k)
        if not len(components):
            continue
        place = np.full(len(size), -1, dtype=np.intp)
        place[components] = np.arange(len(components))
        groups = np.flatnonzero(size[group_component] == k)
        groups = groups[np.argsort(place[group_component[groups]], kind="stable")]
        row = place[group_component[groups]]
        # no block larger than the largest group need be tried (a unitary alignment: one unit per annotator)
        steps = _subset_steps(k, int(_popcounts(k)[mask[groups]].max(initial=1)))
        widest = max([1 << k, *(blocks.size for _, blocks, _ in steps)])  # a component's cells in one table
        per_chunk = max(CHUNK_CELLS // widest, 1)
        for first in range(0, len(components), per_chunk):
            n = min(per_chunk, len(components) - first)
            g0, g1 = np.searchsorted(row, [first, first + n]).tolist()
            part, bit = row[g0:g1] - first, mask[groups[g0:g1]]
            table = np.full((n, 1 << k), np.inf)
            np.minimum.at(table, (part, bit), c[groups[g0:g1]])
            best = np.full((n, 1 << k), np.inf)
            best[:, 0] = 0.0
            choice = np.zeros((n, 1 << k), dtype=np.intp)
            for level, blocks, rest in steps:
                totals = table[:, blocks] + best[:, rest]  # (n, subsets of this size, blocks of each)
                at = np.argmin(totals, axis=2)
                best[:, level] = np.take_along_axis(totals, at[:, :, None], axis=2)[:, :, 0]
                choice[:, level] = blocks[np.arange(len(level))[None, :], at]
            if not np.isfinite(best[:, -1]).all():
                raise ValueError("The set partition has no solution: some elements cannot be covered exactly once.")
            used = np.zeros((n, 1 << k), dtype=bool)
            left = np.full(n, (1 << k) - 1, dtype=np.intp)
            everyone = np.arange(n)
            for _ in range(k):  # each component's blocks, from its full set down
                block = choice[everyone, left]
                used[everyone, block] |= left > 0
                left = left ^ block
            picked = groups[g0:g1][used[part, bit] & (c[groups[g0:g1]] == table[part, bit])]
            # one group per block where several hold the same elements at the same cost
            _, once = np.unique(group_component[picked] * (1 << k) + mask[picked], return_index=True)
            chosen[picked[once]] = True
    return chosen


def _solve_relaxed(matrix: sparse.csc_array, c: NDArray[np.float64]) -> NDArray[np.bool_]:
    """A set partition through its linear relaxation, branch and bound only where that is fractional."""
    # Where the relaxation's optimum is integral on a component, that is the component's integer optimum; only the
    # other components go to branch and bound (the relaxation of alignments is integral almost everywhere, branch
    # and bound on all is 4x slower).
    # HiGHS's default tolerances (1e-7) would take a group costing 1e-7 more for an optimal one: the tightest it allows
    relaxed = linprog(c, A_eq=matrix, b_eq=np.ones(matrix.shape[0]), bounds=(0.0, 1.0), method="highs",
                      options={"dual_feasibility_tolerance": 1e-10, "primal_feasibility_tolerance": 1e-10})
    if relaxed.x is None:
        raise ValueError(f"The set partition has no solution ({relaxed.message}).")
    x = relaxed.x
    chosen = x > 0.5
    fractional = np.abs(x - np.round(x)) > 1e-7
    if fractional.any():
        link = (matrix @ matrix.T).tocsr()
        _, component = connected_components(link, directed=False)
        first_element = matrix.indices[matrix.indptr[:-1]]
        group_component = component[first_element]
        bad = np.isin(group_component, np.unique(group_component[fractional]))
        rows = np.isin(component, np.unique(group_component[fractional]))
        sub = matrix[rows][:, bad]
        result = milp(c[bad], constraints=LinearConstraint(sub, 1.0, 1.0), integrality=np.ones(int(bad.sum())),
                      bounds=Bounds(0.0, 1.0), options={"mip_rel_gap": 0.0})
        if result.x is None:
            raise ValueError(f"The set partition has no solution ({result.message}).")
        chosen[bad] = result.x > 0.5
    return chosen


def unitary_candidates(annotator: ArrayLike, pair_cost: ArrayLike, *, n_annotators: int, empty_cost: float,
                       compatible: ArrayLike | None = None,
                       budget: float | None = None) -> tuple[NDArray[np.intp], NDArray[np.float64]]:
    """Every group of at most one unit per annotator, its pairs all compatible, with its summed pair cost.

    Groups are built annotator by annotator, each partial group extended by the empty unit or by every unit of the
    next annotator compatible with all its units, so only compatible groups are ever held in memory. With
    ``budget`` (Δ∅ for gamma), a group of ``k`` units whose mean pair cost exceeds ``k·budget``, what leaving its
    units alone costs, is dropped: it can never be in a best partition (Mathet et al. 2015, §4; pygamma-agreement
    prunes with the weaker bound ``n·budget``). Partial groups are dropped as soon as no completion can meet it.
    So is a group with a unit whose summed pair costs to the others exceed ``(k - 1 + C(n, 2))·budget``: taking
    that unit out to stand alone would lower the total.

    Parameters
    ----------
    annotator : array_like of int, with shape (n_units,)
        Each unit's annotator, in ``range(n_annotators)``.
    pair_cost : array_like, with shape (n_units, n_units)
        The cost of two units being in one group.
    n_annotators : int
        How many annotators the continuum has, those without units included (they add empty units).
    empty_cost : float
        The cost of a pair in which one unit (or both) is empty.
    compatible : array_like of bool, with shape (n_units, n_units), optional
        Which units may share a group; by default all.
    budget : float, optional
        Drop groups of ``k`` units whose mean pair cost exceeds ``k * budget``.

    Returns
    -------
    members : ndarray of int, with shape (n_groups, n_annotators)
        Each group's unit of each annotator, -1 for the empty unit. The group of empty units only is left out.
    cost : ndarray of float, with shape (n_groups,)
        Each group's summed pair cost.

    Raises
    ------
    ValueError
        With ``compatible``, where the units that may share a group (a connected component of ``compatible``)
        could make more than :data:`MAX_CANDIDATES` groups (:func:`too_many_candidates`): they are counted before
        any is built. Without it, only ``budget`` prunes, and no bound is checked.
    """
    who = np.asarray(annotator, dtype=np.intp)
    cost_matrix = np.asarray(pair_cost, dtype=float)
    ok = None if compatible is None else np.asarray(compatible, dtype=bool).ravel()
    if ok is not None and len(who):  # the units that may share a group, bounded before any group is built
        linked = ok.reshape(len(who), len(who))
        component = connected_components(sparse.csr_array(linked), directed=False)[1]
        if too_many_candidates(component, who, *np.nonzero(np.triu(linked, 1))).any():
            raise ValueError(f"These units could make more than {MAX_CANDIDATES:,} candidate groups: too many "
                             "annotators' units may share a group at one place to enumerate the groups exactly.")
    batch = _Continua(who, np.zeros(len(who), dtype=np.intp), np.array([0, len(who)]), cost_matrix.ravel(), ok)
    members, cost, _ = _candidates(batch, n_annotators=n_annotators, empty_cost=empty_cost, budget=budget)
    return members, cost


@dataclass(frozen=True)
class _Continua:
    """Several continua's units end to end: each unit's annotator and continuum, and their pair costs.

    Units are ordered by continuum; continuum ``c`` holds units ``start[c]:start[c + 1]``, and its pair costs are
    its ``(n_c, n_c)`` matrix, raveled, at ``cost[flat[c]:]`` (and which pairs may share a group at ``ok[flat[c]:]``).
    """

    annotator: NDArray[np.intp]
    continuum: NDArray[np.intp]
    start: NDArray[np.intp]
    cost: NDArray[np.float64]
    ok: NDArray[np.bool_] | None

    @property
    def flat(self) -> NDArray[np.intp]:
        size = np.diff(self.start)
        return np.concatenate([[0], np.cumsum(size * size)[:-1]]).astype(np.intp)

    def pair(self, first: NDArray[np.intp], second: NDArray[np.intp],
             flat: NDArray[np.intp]) -> NDArray[np.intp]:
        """Where the pair of units ``first[i]``, ``second[i]`` (of one continuum) is in ``cost`` and ``ok``."""
        c = self.continuum[first]
        size = self.start[c + 1] - self.start[c]
        return flat[c] + (first - self.start[c]) * size + (second - self.start[c])


def _candidates(batch: _Continua, *, n_annotators: int, empty_cost: float,
                budget: float | None) -> tuple[NDArray[np.intp], NDArray[np.float64], NDArray[np.intp]]:
    """:func:`unitary_candidates` of every continuum of ``batch`` at once.

    All continua have ``n_annotators`` annotators.

    Returns each group's units (indices into the batch's units, -1 for empty), summed cost and continuum, the
    groups ordered by continuum.
    """
    pairs = n_annotators * (n_annotators - 1) // 2
    n_continua = len(batch.start) - 1
    flat = batch.flat
    # units of annotator a in continuum c are order[place[c * n + a]:place[c * n + a + 1]]
    key = batch.continuum * n_annotators + batch.annotator
    order = np.argsort(key, kind="stable")
    place = np.searchsorted(key[order], np.arange(n_continua * n_annotators + 1))
    members = np.empty((n_continua, 0), dtype=np.intp)
    total = np.zeros(n_continua)
    real = np.zeros(n_continua, dtype=np.intp)
    continuum = np.arange(n_continua, dtype=np.intp)
    for a in range(n_annotators):
        begin = place[continuum * n_annotators + a]
        count = place[continuum * n_annotators + a + 1] - begin
        row = np.repeat(np.arange(len(members)), count)
        within = np.arange(len(row)) - np.repeat(np.cumsum(count) - count, count)
        unit = order[begin[row] + within]
        keep = np.ones(len(row), dtype=bool)
        add = np.zeros(len(row))
        for b in range(a):
            other = members[row, b]
            filled = np.flatnonzero(other >= 0)
            where = batch.pair(other[filled], unit[filled], flat)
            if batch.ok is not None:
                keep[filled] &= batch.ok[where]
            add[filled] += batch.cost[where]
            add[other < 0] += empty_cost
        row, unit, add = row[keep], unit[keep], add[keep]
        members = np.vstack([np.hstack([members, np.full((len(members), 1), -1, dtype=np.intp)]),
                             np.hstack([members[row], unit[:, None]])])
        total = np.concatenate([total + empty_cost * a, total[row] + add])
        real = np.concatenate([real, real[row] + 1])
        continuum = np.concatenate([continuum, continuum[row]])
        if budget is not None:
            left = n_annotators - a - 1
            keep = total <= pairs * (real + left) * budget * (1 + 1e-12)
            members, total, real, continuum = members[keep], total[keep], real[keep], continuum[keep]
    keep = real > 0
    if budget is not None:
        keep &= total <= pairs * real * budget * (1 + 1e-12)
        # a unit whose dissimilarities to the others exceed (k - 1 + C(n, 2)) budget is better off alone
        filled = members >= 0
        for i in range(n_annotators):
            own_sum = np.zeros(len(members))
            for j in range(n_annotators):
                both = np.flatnonzero(filled[:, i] & filled[:, j] & (i != j))
                own_sum[both] += batch.cost[batch.pair(members[both, i], members[both, j], flat)]
            keep &= own_sum <= (real - 1 + pairs) * budget * (1 + 1e-12)
    members, total, continuum = members[keep], total[keep], continuum[keep]
    by_continuum = np.argsort(continuum, kind="stable")
    return members[by_continuum], total[by_continuum], continuum[by_continuum]
