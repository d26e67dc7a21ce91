"""The grouping of greatest total similarity: regions of several annotators partitioned into items exactly.

Among the partitions of one scope's regions into groups that hold at most one region per annotator and in which
every two regions are a candidate pair (similar enough to match), :func:`best_groups` chooses the one whose summed
similarity over the pairs inside groups is greatest. This is the set-partitioning view of alignment of Mathet,
Widlöcher & Métivier (2015, §4), with the pair's similarity as its gain and a region alone costing nothing:

.. math:: \\max_{P} \\sum_{g \\in P} \\sum_{\\{a, b\\} \\subseteq g} s(a, b)

The candidate graph splits into connected components, solved one by one: a component that is a clique of distinct
annotators (one or two regions always are) is one group, since every similarity is positive; a component of two
annotators is an assignment problem (:func:`scipy.optimize.linear_sum_assignment`); the others a set partition
(:func:`agreement.alignment.solve_set_partition` over :func:`agreement.alignment.unitary_candidates`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
from scipy import sparse
from scipy.optimize import linear_sum_assignment
from scipy.sparse.csgraph import connected_components

from agreement.alignment import solve_set_partition, unitary_candidates

__all__ = ["best_groups"]


def _component_groups(who: np.ndarray, gain: np.ndarray, ok: np.ndarray) -> list[list[int]]:
    """The best groups of one connected component: local unit numbers, each group ascending."""
    m = len(who)
    codes, local = np.unique(who, return_inverse=True)
    if len(codes) == m and ok[~np.eye(m, dtype=bool)].all():
        return [list(range(m))]
    if len(codes) == 2:
        first, second = np.flatnonzero(local == 0), np.flatnonzero(local == 1)
        # a pair that is no candidate gains nothing, as both regions alone: drop it after the assignment
        rows, cols = linear_sum_assignment(-np.where(ok, gain, 0.0)[np.ix_(first, second)])
        matched = ok[first[rows], second[cols]]
        paired = [sorted((int(first[r]), int(second[c]))) for r, c in zip(rows[matched], cols[matched])]
        taken = {u for pair in paired for u in pair}
        return paired + [[u] for u in range(m) if u not in taken]
    members, cost = unitary_candidates(local, -gain, n_annotators=len(codes), empty_cost=0.0, compatible=ok)
    group_of, unit = np.nonzero(members.T >= 0)[1], members.T[members.T >= 0]
    incidence = sparse.csc_array((np.ones(len(unit)), (unit, group_of)), shape=(m, len(cost)))
    chosen = np.flatnonzero(solve_set_partition(incidence, cost))
    return [sorted(int(u) for u in members[g] if u >= 0) for g in chosen]


def best_groups(annotator: Sequence[str], candidates: Mapping[tuple[int, int], float]) -> list[list[int]]:
    """Partition units into groups of greatest summed pairwise similarity.

    Parameters
    ----------
    annotator : sequence of str
        Each unit's annotator.
    candidates : mapping of (int, int) to float
        The similarity, positive, of every pair ``(i, j)``, ``i < j``, of units of different annotators that may
        share a group; pairs left out never do.

    Returns
    -------
    list of list of int
        The groups, each ascending, in order of their first unit. Each group holds at most one unit per annotator
        and only candidate pairs; the grouping maximises the summed similarity of the pairs inside groups. The
        result depends only on the units' order (ties in the optimum are broken by the solvers, deterministically).

    Examples
    --------
    Unit 1 is more similar to 0 than to 2, but matching it with 2 lets 0 match 3:

    >>> best_groups(["a", "b", "a", "b"], {(0, 1): 0.9, (1, 2): 0.8, (0, 3): 0.7})
    [[0, 3], [1, 2]]
    """
    n = len(annotator)
    if not candidates:
        return [[i] for i in range(n)]
    pairs = np.array(sorted(candidates), dtype=np.intp)
    values = np.array([candidates[(int(i), int(j))] for i, j in pairs])
    graph = sparse.coo_array((np.ones(len(pairs)), (pairs[:, 0], pairs[:, 1])), shape=(n, n))
    n_components, component = connected_components(graph, directed=False)
    size = np.bincount(component, minlength=n_components)
    groups: list[list[int]] = []
    for c in range(n_components):
        if size[c] <= 2:
            groups.append(np.flatnonzero(component == c).tolist())
    edge_component = component[pairs[:, 0]]
    big = np.flatnonzero(size > 2)
    if len(big):
        order = np.argsort(component, kind="stable")
        bounds = np.searchsorted(component[order], np.arange(n_components + 1))
        edge_order = np.argsort(edge_component, kind="stable")
        edge_bounds = np.searchsorted(edge_component[edge_order], np.arange(n_components + 1))
        who_all = np.asarray(annotator, dtype=object)
        for c in big:
            units = order[bounds[c]:bounds[c + 1]]  # ascending: the sort is stable
            local = np.full(n, -1, dtype=np.intp)
            local[units] = np.arange(len(units))
            edges = edge_order[edge_bounds[c]:edge_bounds[c + 1]]
            i, j = local[pairs[edges, 0]], local[pairs[edges, 1]]
            m = len(units)
            gain = np.zeros((m, m))
            ok = np.zeros((m, m), dtype=bool)
            gain[i, j] = gain[j, i] = values[edges]
            ok[i, j] = ok[j, i] = True
            for group in _component_groups(who_all[units].astype(str), gain, ok):
                groups.append([int(units[u]) for u in group])
    return sorted(groups)
