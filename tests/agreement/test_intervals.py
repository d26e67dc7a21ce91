"""Overlapping intervals found by sorting (agreement.intervals) against comparing every pair."""

import numpy as np
from hypothesis import given
from hypothesis import strategies as st

from agreement.intervals import overlapping_pairs

intervals = st.lists(st.tuples(st.integers(0, 2), st.integers(0, 2), st.integers(0, 20), st.integers(1, 8)),
                     max_size=25)


def _arrays(rows):
    group = np.array([g for g, _, _, _ in rows], dtype=np.int64)
    owner = np.array([o for _, o, _, _ in rows], dtype=np.intp)
    start = np.array([s for _, _, s, _ in rows], dtype=float)
    return group, owner, start, start + np.array([n for _, _, _, n in rows], dtype=float)


@given(intervals)
def test_overlapping_pairs_are_every_pair_of_two_owners_that_intersect(rows):
    group, owner, start, end = _arrays(rows)
    first, second, inter = overlapping_pairs(group, owner, start, end)
    found = {(min(i, j), max(i, j)): x for i, j, x in zip(first.tolist(), second.tolist(), inter.tolist(),
                                                          strict=True)}
    want = {(i, j): min(end[i], end[j]) - max(start[i], start[j]) for i in range(len(rows))
            for j in range(i + 1, len(rows)) if group[i] == group[j] and owner[i] != owner[j]
            and min(end[i], end[j]) > max(start[i], start[j])}
    assert found == want and len(first) == len(want)


@given(intervals, intervals)
def test_the_pairs_within_a_part_are_those_the_part_alone_gives_in_the_same_order(part, other):
    """u-alpha finds the pairs of units and of the coders' unions in one search over both: the pairs of two units
    must be, in order and orientation, the pairs a search among the units alone gives."""
    both = [np.r_[a, b] for a, b in zip(_arrays(part), _arrays(other), strict=True)]
    first, second, inter = overlapping_pairs(*both)
    alone = overlapping_pairs(*_arrays(part))
    inside = (first < len(part)) & (second < len(part))
    assert [x.tolist() for x in (first[inside], second[inside], inter[inside])] == [x.tolist() for x in alone]
    shift = ~((first < len(part)) | (second < len(part)))
    later = overlapping_pairs(*_arrays(other))
    assert [x.tolist() for x in (first[shift] - len(part), second[shift] - len(part), inter[shift])] == [
        x.tolist() for x in later]
