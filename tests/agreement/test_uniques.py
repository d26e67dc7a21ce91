"""Sorted distinct values by hashing (agreement.uniques) give what numpy.unique gives by sorting."""

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from agreement.uniques import unique_inverse


def _same_as_numpy(values):
    uniques, inverse, counts = unique_inverse(values, counts=True)
    want, want_inverse, want_counts = np.unique(values, return_inverse=True, return_counts=True)
    np.testing.assert_array_equal(uniques, want)
    assert uniques.dtype == want.dtype
    np.testing.assert_array_equal(inverse, want_inverse.ravel())
    np.testing.assert_array_equal(counts, want_counts)
    np.testing.assert_array_equal(uniques[inverse], values)


@given(hnp.arrays(np.int64, st.integers(0, 200), elements=st.integers(-(2**63), 2**63 - 1)))
def test_integers_as_numpy_orders_them(values):
    _same_as_numpy(values)


@given(hnp.arrays(np.int64, st.integers(0, 200), elements=st.integers(-3, 3)))
def test_few_distinct_integers(values):
    _same_as_numpy(values)


@given(hnp.arrays(np.float64, st.integers(0, 200),
                  elements=st.sampled_from([0.0, -0.0, 1.5, -2.25, 1e300, -np.inf, np.inf, 7.0])))
def test_floats_hold_signed_zeros_equal(values):
    # numpy holds -0.0 equal to 0.0: both fall on one distinct value
    uniques, inverse = unique_inverse(values)
    want, want_inverse = np.unique(values, return_inverse=True)
    np.testing.assert_array_equal(uniques, want)
    np.testing.assert_array_equal(inverse, want_inverse.ravel())


def test_every_nan_is_one_value_sorted_last():
    uniques, inverse = unique_inverse(np.array([np.nan, 2.0, np.nan, 1.0]))
    assert uniques[:2].tolist() == [1.0, 2.0] and np.isnan(uniques[2]) and len(uniques) == 3
    assert inverse.tolist() == [2, 1, 2, 0]


@pytest.mark.parametrize("values", [np.zeros(0, dtype=np.int64), np.zeros(0)])
def test_empty(values):
    uniques, inverse, counts = unique_inverse(values, counts=True)
    assert len(uniques) == len(inverse) == len(counts) == 0
    assert uniques.dtype == values.dtype


@given(hnp.arrays(np.int64, st.integers(0, 200), elements=st.integers(-5, 5)))
def test_unsorted_in_the_order_first_seen(values):
    uniques, inverse, counts = unique_inverse(values, counts=True, sort=False)
    first_seen = list(dict.fromkeys(values.tolist()))
    assert uniques.tolist() == first_seen
    np.testing.assert_array_equal(uniques[inverse], values)
    assert counts.tolist() == [int((values == value).sum()) for value in first_seen]
