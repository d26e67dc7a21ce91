"""Runs of positions concatenated (agreement.ranges) equal the runs built one at a time."""

import numpy as np
from hypothesis import given
from hypothesis import strategies as st

from agreement.ranges import ranges


@given(st.lists(st.tuples(st.integers(-50, 10**12), st.integers(0, 6)), max_size=30))
def test_ranges_equal_each_run_built_alone(runs):
    starts = np.array([start for start, _ in runs], dtype=np.int64)
    lengths = np.array([length for _, length in runs], dtype=np.int64)
    expected = [position for start, length in runs for position in range(start, start + length)]
    got = ranges(starts, lengths)
    assert got.tolist() == expected and got.dtype == np.intp
