"""The grouping of greatest total similarity.

Regions of several annotators are partitioned into items exactly.

Among the partitions of one scope's regions into groups that hold at most one region per annotator and in which
every two regions are a candidate pair (similar enough to match), :func:`best_groups` chooses the one whose summed
similarity over the pairs inside groups is greatest. This is the set-partitioning view of alignment of Mathet,
Widlöcher & Métivier (2015, §4), with the pair's similarity as its gain and a region alone costing nothing:

.. math:: \\max_{P} \\sum_{g \\in P} \\sum_{\\{a, b\\} \\subseteq g} s(a, b)

The candidate graph splits into connected components, solved one by one: a component that is a clique of distinct
annotators (one or two regions always are) is one group, since every similarity is positive; a component of two
annotators is an assignment problem (:func:`scipy.optimize.linear_sum_assignment`); the others a set partition of
the candidate groups of :func:`agreement.alignment.unitary_candidates`, solved by a search over subsets for a few
regions and by :func:`agreement.alignment.solve_set_partition` (HiGHS) for more. A component whose candidate
groups could number more than :data:`agreement.set_partition.MAX_CANDIDATES` (more than 16 annotators' regions
overlapping at one place, and not all of them alike) is not grouped: its regions are handed back as crowded.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import NamedTuple

import numpy as np
from scipy import sparse
from scipy.optimize import linear_sum_assignment

from agreement.alignment import solve_set_partition, unitary_candidates
from agreement.set_partition import too_many_candidates

__all__ = ["Grouping", "best_groups"]


_SMALL = 12  # components up to this many regions are solved by a search over subsets, not a linear program


def _subset_search(members: np.ndarray, cost: np.ndarray) -> list[list[int]]:
    """The exact best set partition of a few units, by dynamic programming over the subsets left to cover.

    ``best(S) = min over groups g that hold the lowest unit of S, g ⊆ S, of cost(g) + best(S \\ g)``; the
    singletons are among the groups, so every subset has a cover. Ties keep the first group in ``members`` order.
    """
    masks = [sum(1 << int(u) for u in row if u >= 0) for row in members]
    costs = cost.tolist()
    by_lowest: dict[int, list[int]] = {}
    for g, mask in enumerate(masks):
        by_lowest.setdefault((mask & -mask).bit_length() - 1, []).append(g)
    memo: dict[int, tuple[float, int]] = {0: (0.0, -1)}

    def best(left: int) -> float:
        if left not in memo:
            choice, value = -1, np.inf
            for g in by_lowest.get((left & -left).bit_length() - 1, []):
                if masks[g] & left == masks[g]:
                    total = costs[g] + best(left & ~masks[g])
                    if total < value - 1e-12:
                        choice, value = g, total
            memo[left] = (value, choice)
        return memo[left][0]

    left = sum(1 << k for k in range(members.max() + 1)) if len(members) else 0
    best(left)
    groups = []
    while left:
        g = memo[left][1]
        groups.append(sorted(int(u) for u in members[g] if u >= 0))
        left &= ~masks[g]
    return groups


def _component_groups(who: np.ndarray, gain: np.ndarray, ok: np.ndarray) -> list[list[int]]:
    """The best groups of one connected component: local unit numbers, each group ascending."""
    m = len(who)
    codes, local = np.unique(who, return_inverse=True)
    if len(codes) == 2:
        first, second = np.flatnonzero(local == 0), np.flatnonzero(local == 1)
        # a pair that is no candidate gains nothing, as both regions alone: drop it after the assignment
        rows, cols = linear_sum_assignment(-np.where(ok, gain, 0.0)[np.ix_(first, second)])
        matched = ok[first[rows], second[cols]]
        paired = [sorted((int(first[r]), int(second[c]))) for r, c in zip(rows[matched], cols[matched])]
        taken = {u for pair in paired for u in pair}
        return paired + [[u] for u in range(m) if u not in taken]
    members, cost = unitary_candidates(local, -gain, n_annotators=len(codes), empty_cost=0.0, compatible=ok)
    if m <= _SMALL:
        return _subset_search(members, cost)
    group_of, unit = np.nonzero(members.T >= 0)[1], members.T[members.T >= 0]
    incidence = sparse.csc_array((np.ones(len(unit)), (unit, group_of)), shape=(m, len(cost)))
    chosen = np.flatnonzero(solve_set_partition(incidence, cost))
    return [sorted(int(u) for u in members[g] if u >= 0) for g in chosen]


class Grouping(NamedTuple):
    """:func:`best_groups`'s answer: the groups, and the units of components too crowded to group exactly."""

    groups: list[list[int]]
    crowded: list[int]


def best_groups(annotator: Sequence[str], candidates: Mapping[tuple[int, int], float]) -> Grouping:
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
    Grouping
        ``groups``: each ascending, in order of their first unit. Each group holds at most one unit per annotator
        and only candidate pairs; the grouping maximises the summed similarity of the pairs inside groups. The
        result depends only on the units' order (ties in the optimum are broken by the solvers, deterministically).
        ``crowded``: the units, ascending, of components that are not a clique and whose candidate groups could
        number more than :data:`agreement.set_partition.MAX_CANDIDATES` (many annotators' regions overlapping at
        one place): they are in no group, for the caller to count as left out.

    Examples
    --------
    Unit 1 is more similar to 0 than to 2, but matching it with 2 lets 0 match 3:

    >>> best_groups(["a", "b", "a", "b"], {(0, 1): 0.9, (1, 2): 0.8, (0, 3): 0.7}).groups
    [[0, 3], [1, 2]]
    """
    n = len(annotator)
    root = list(range(n))

    def find(u: int) -> int:
        while root[u] != u:
            root[u] = root[root[u]]
            u = root[u]
        return u

    for i, j in candidates:  # connected components by union-find: cheaper than scipy for a task's few regions
        ri, rj = find(i), find(j)
        if ri != rj:
            root[max(ri, rj)] = min(ri, rj)
    units_of: dict[int, list[int]] = {}
    for u in range(n):
        units_of.setdefault(find(u), []).append(u)
    edges_of: dict[int, list[tuple[int, int]]] = {}
    for pair in candidates:
        edges_of.setdefault(find(pair[0]), []).append(pair)
    groups: list[list[int]] = []
    crowded: list[int] = []
    for key, units in units_of.items():
        m = len(units)
        edges = edges_of.get(key, [])
        if len(edges) == m * (m - 1) // 2 and len({annotator[u] for u in units}) == m:
            groups.append(units)  # a clique of distinct annotators (one or two regions always are): one group
            continue
        local = {u: k for k, u in enumerate(units)}
        i = np.array([local[a] for a, _ in edges], dtype=np.intp)
        j = np.array([local[b] for _, b in edges], dtype=np.intp)
        gain = np.zeros((m, m))
        ok = np.zeros((m, m), dtype=bool)
        gain[i, j] = gain[j, i] = [candidates[pair] for pair in edges]
        ok[i, j] = ok[j, i] = True
        who = np.array([str(annotator[u]) for u in units])
        if too_many_candidates(np.zeros(m, dtype=np.intp), np.unique(who, return_inverse=True)[1], i, j)[0]:
            crowded.extend(units)
            continue
        groups.extend([units[u] for u in group] for group in _component_groups(who, gain, ok))
    return Grouping(sorted(groups), sorted(crowded))
