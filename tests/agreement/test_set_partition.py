"""The exact set partition under alignments and its candidate groups (agreement.set_partition), against brute force."""

from itertools import combinations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from agreement.set_partition import SMALL_COMPONENT, solve_set_partition, unitary_candidates
from tests.profiles import examples


def test_alignment_still_offers_the_solver_and_the_candidates():
    # plugin.mapping.grouping imports both from agreement.alignment, where they lived before
    import agreement.alignment
    import agreement.set_partition

    assert agreement.alignment.solve_set_partition is agreement.set_partition.solve_set_partition
    assert agreement.alignment.unitary_candidates is agreement.set_partition.unitary_candidates
    assert {"solve_set_partition", "unitary_candidates"} <= set(agreement.alignment.__all__)


def test_set_partition_chooses_the_cheaper_cover():
    # two elements: apart they cost 1 + 1, together 1.5
    assert solve_set_partition([[1, 0, 1], [0, 1, 1]], [1.0, 1.0, 1.5]).tolist() == [False, False, True]
    assert solve_set_partition([[1, 0, 1], [0, 1, 1]], [1.0, 1.0, 2.5]).tolist() == [True, True, False]


def test_set_partition_branches_where_the_relaxation_is_fractional():
    # an odd cycle of 11 elements (too many for the dynamic program), its pairs at 1 and the singletons at 0.8: the
    # relaxation takes every pair at 1/2 (5.5), the integer optimum five pairs and a singleton (5.8); a twelfth
    # element apart is a small component
    assert SMALL_COMPONENT < 11
    pairs = [(i, (i + 1) % 11) for i in range(11)]
    incidence = np.zeros((12, 11 + 12))
    for g, (i, j) in enumerate(pairs):
        incidence[[i, j], g] = 1
    incidence[np.arange(12), 11 + np.arange(12)] = 1
    cost = [1.0] * 11 + [0.8] * 11 + [0.3]
    chosen = solve_set_partition(incidence, cost)
    assert (incidence @ chosen).tolist() == [1] * 12
    assert float(np.dot(cost, chosen)) == pytest.approx(5.8 + 0.3)


def test_set_partition_of_a_small_component_tries_its_partitions():
    # three elements, the three pairs at 1 and the singletons at 0.8: one pair and one singleton (1.8); the
    # triple at 2.5 loses; a duplicate of the cheapest pair is never chosen beside it
    incidence = np.array([[1, 0, 1, 1, 0, 0, 1, 1], [1, 1, 0, 0, 1, 0, 1, 1], [0, 1, 1, 0, 0, 1, 1, 0]])
    cost = [1.0, 1.0, 1.0, 0.8, 0.8, 0.8, 2.5, 1.0]
    chosen = solve_set_partition(incidence, cost)
    assert (incidence @ chosen).tolist() == [1, 1, 1]
    assert float(np.dot(cost, chosen)) == pytest.approx(1.8)
    with pytest.raises(ValueError, match="no solution"):
        solve_set_partition([[1, 0], [1, 1], [0, 1]], [1.0, 1.0])  # {0, 1} and {1, 2}: element 1 twice or 0 never


@settings(max_examples=examples(150), deadline=None)
@given(st.integers(1, 13).flatmap(lambda n: st.tuples(
    st.just(n), st.lists(st.tuples(st.sets(st.integers(0, n - 1), min_size=1, max_size=n),
                                   st.floats(0.0, 5.0, allow_nan=False)), min_size=1, max_size=10))))
def test_set_partition_equals_brute_force(problem):
    # small components (up to SMALL_COMPONENT elements) by dynamic programming over their subsets, larger ones
    # through the relaxation: both exact
    n, groups = problem
    incidence = np.zeros((n, len(groups)))
    for g, (elements, _) in enumerate(groups):
        incidence[sorted(elements), g] = 1
    cost = np.array([c for _, c in groups])
    best = min((float(cost[list(pick)].sum()) for k in range(1, len(groups) + 1)
                for pick in combinations(range(len(groups)), k) if (incidence[:, list(pick)].sum(axis=1) == 1).all()),
               default=None)
    if best is None:
        with pytest.raises(ValueError, match="no solution|in no group"):
            solve_set_partition(incidence, cost)
        return
    chosen = solve_set_partition(incidence, cost)
    assert (incidence @ chosen).tolist() == [1] * n
    assert float(cost @ chosen) == pytest.approx(best, abs=1e-9)


@settings(max_examples=examples(40), deadline=None)
@given(st.lists(st.tuples(st.integers(1, 6), st.lists(st.tuples(st.sets(st.integers(0, 5), min_size=1, max_size=3),
                                                                  st.floats(0.0, 5.0, allow_nan=False)),
                                                        max_size=8)),
                min_size=1, max_size=12))
def test_set_partition_in_small_tables_equals_one_table(problems):
    # many components of each size, solved a component per table: the same costs as in one table
    import agreement.set_partition as module

    rows, columns, cost, offset = [], [], [], 0
    for n, groups in problems:
        groups = [*groups, *(({e}, 1.0) for e in range(n))]  # every element can stand alone
        for elements, value in groups:
            kept = sorted(e for e in elements if e < n)
            if kept:
                rows += [offset + e for e in kept]
                columns += [len(cost)] * len(kept)
                cost.append(value)
        offset += n
    incidence = np.zeros((offset, len(cost)))
    incidence[rows, columns] = 1
    whole = solve_set_partition(incidence, cost)
    saved = module.CHUNK_CELLS
    module.CHUNK_CELLS = 1
    try:
        apart = solve_set_partition(incidence, cost)
    finally:
        module.CHUNK_CELLS = saved
    assert (incidence @ apart).tolist() == [1] * offset
    assert float(np.dot(cost, apart)) == pytest.approx(float(np.dot(cost, whole)), abs=1e-9)


def test_set_partition_refuses_an_element_in_no_group():
    with pytest.raises(ValueError, match="in no group"):
        solve_set_partition([[1], [0]], [1.0])
    with pytest.raises(ValueError, match="at least one element"):
        solve_set_partition([[1, 0], [1, 0]], [1.0, 1.0])


def test_candidates_drop_groups_worse_than_their_units_alone():
    # two annotators, one unit each, dissimilarity 2.5 > 2 Δ∅: only the two singletons remain
    members, cost = unitary_candidates([0, 1], [[0, 2.5], [2.5, 0]], n_annotators=2, empty_cost=1.0, budget=1.0)
    assert sorted(map(tuple, members.tolist())) == [(-1, 1), (0, -1)]
    assert cost.tolist() == [1.0, 1.0]


def test_unitary_candidates_refuses_a_crowd_in_one_line_before_building_any_group():
    # 17 annotators' units all compatible: 2^17 candidate groups, over the bound; 16 are built (2^16 - 1 groups,
    # the group of empty units left out)
    for n, groups in ((16, 2 ** 16 - 1), (17, None)):
        compatible = ~np.eye(n, dtype=bool)
        if groups is None:
            with pytest.raises(ValueError, match="more than 65,536 candidate groups"):
                unitary_candidates(np.arange(n), np.zeros((n, n)), n_annotators=n, empty_cost=0.0,
                                   compatible=compatible)
        else:
            members, _ = unitary_candidates(np.arange(n), np.zeros((n, n)), n_annotators=n, empty_cost=0.0,
                                            compatible=compatible)
            assert len(members) == groups
