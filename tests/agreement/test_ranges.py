"""Runs of positions concatenated, pairs within runs and blocks of groups (agreement.ranges), against building
them one at a time."""

from itertools import pairwise

import numpy as np
from hypothesis import given
from hypothesis import strategies as st

from agreement.ranges import block_edges, ranges, run_pairs


@given(st.lists(st.tuples(st.integers(-50, 10**12), st.integers(0, 6)), max_size=30))
def test_ranges_equal_each_run_built_alone(runs):
    starts = np.array([start for start, _ in runs], dtype=np.int64)
    lengths = np.array([length for _, length in runs], dtype=np.int64)
    expected = [position for start, length in runs for position in range(start, start + length)]
    got = ranges(starts, lengths)
    assert got.tolist() == expected and got.dtype == np.intp


@given(st.lists(st.integers(0, 4), max_size=40).map(sorted))
def test_run_pairs_are_every_two_places_of_a_run_by_distance_then_place(keys):
    first, second = run_pairs(np.array(keys, dtype=np.int64))
    want = sorted(((i, j) for i in range(len(keys)) for j in range(i + 1, len(keys)) if keys[i] == keys[j]),
                  key=lambda pair: (pair[1] - pair[0], pair[0]))
    assert list(zip(first.tolist(), second.tolist(), strict=True)) == want


@given(st.lists(st.integers(0, 20), max_size=30), st.integers(1, 25))
def test_block_edges_cut_groups_into_the_fewest_greedy_blocks_within_the_bound(sizes, at_most):
    edges = block_edges(np.array(sizes, dtype=np.int64), at_most=at_most)
    assert edges[0] == 0 and edges[-1] == len(sizes) and all(a < b for a, b in pairwise(edges))
    for lo, hi in pairwise(edges):
        assert sum(sizes[lo:hi]) <= at_most or hi == lo + 1  # within the bound, or one group larger alone
        if hi < len(sizes):  # greedy: the next group would not have fitted
            assert sum(sizes[lo:hi + 1]) > at_most
