"""Sorted distinct values by hashing (agreement.uniques) give what numpy.unique gives by sorting."""

import numpy as np
import pandas as pd
import pytest
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from agreement.uniques import duplicated_rows, row_codes, unique_counts, unique_inverse


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


@given(st.integers(1, 6).flatmap(lambda width: hnp.arrays(np.int64, st.tuples(st.integers(0, 60), st.just(width)),
                                                            elements=st.integers(-2, 2))))
def test_rows_share_a_code_exactly_when_they_are_equal(matrix):
    codes = row_codes(list(matrix.T))
    rows = [tuple(row) for row in matrix.tolist()]
    first_seen = list(dict.fromkeys(rows))
    assert codes.tolist() == [first_seen.index(row) for row in rows]


def test_rows_of_many_wide_columns_are_recoded_before_their_key_overflows():
    # 12 columns of 1,000 distinct values: 1000**12 combinations, far past an int64
    rng = np.random.default_rng(5)
    matrix = rng.integers(0, 1000, size=(3000, 12))
    matrix[1500:] = matrix[:1500]
    codes = row_codes(list(matrix.T))
    assert codes[:1500].tolist() == list(range(1500)) and codes[1500:].tolist() == list(range(1500))


def test_row_codes_mix_column_types_and_refuse_ragged_columns():
    names = np.array(["x", None, "x", None], dtype=object)
    values = np.array([np.nan, 1.0, np.nan, 1.0])
    assert row_codes([names, values]).tolist() == [0, 1, 0, 1]
    with pytest.raises(ValueError, match="differ in length"):
        row_codes([np.zeros(3), np.zeros(2)])


@given(st.lists(st.tuples(st.sampled_from(["a", "b", None]), st.sampled_from([1.0, 2.0, np.nan]),
                          st.integers(0, 2)), max_size=40), st.booleans())
def test_duplicated_rows_as_pandas_finds_them(rows, as_category):
    frame = pd.DataFrame(rows, columns=["item", "value", "rank"])
    if as_category:
        frame["item"] = frame["item"].astype("category")
    got = duplicated_rows([frame["item"], frame["value"].to_numpy(), frame["rank"]])
    assert got.tolist() == frame.duplicated().tolist()


@given(hnp.arrays(np.int64, st.integers(0, 200), elements=st.integers(-(2**63), 2**63 - 1)) | hnp.arrays(
    np.int64, st.integers(0, 200), elements=st.integers(0, 6)).map(np.sort))
def test_unique_counts_as_numpy_counts_them(values):
    distinct, counts = unique_counts(values)
    want, want_counts = np.unique(values, return_counts=True)
    np.testing.assert_array_equal(distinct, want)
    np.testing.assert_array_equal(counts, want_counts)


@given(st.lists(st.tuples(st.sampled_from([-(2**62), -1, 0, 2**40, 2**62]), st.booleans(),
                          st.sampled_from([0, 1, 60_000])), max_size=40))
def test_rows_of_whole_numbers_near_and_far_apart_share_a_code_exactly_when_equal(rows):
    # columns spanning less than 2**31 are coded by their offsets, wider ones by hashing: the codes agree either way
    columns = [np.array([row[k] for row in rows], dtype=dtype) for k, dtype in enumerate((np.int64, bool, np.uint16))]
    first_seen = list(dict.fromkeys(rows))
    assert row_codes(columns).tolist() == [first_seen.index(row) for row in rows]
    if rows:
        assert duplicated_rows(columns).tolist() == pd.DataFrame(rows).duplicated().tolist()


@given(st.sampled_from([np.bool_, np.int8, np.uint16, np.int32, np.int64]).flatmap(
    lambda dtype: hnp.arrays(dtype, st.integers(0, 200))))
def test_whole_numbers_of_every_width_as_numpy_orders_and_counts_them(values):
    # narrow ranges are tabled over their range, wide ones hashed: numpy's answer either way
    _same_as_numpy(values)
    distinct, counts = unique_counts(values)
    want, want_counts = np.unique(values, return_counts=True)
    np.testing.assert_array_equal(distinct, want)
    assert distinct.dtype == want.dtype
    np.testing.assert_array_equal(counts, want_counts)


@given(hnp.arrays(np.float64, st.integers(1, 200), elements=st.sampled_from([0.0, -0.0, 3.0, 17.0, -5.0, 4096.0])))
def test_whole_floats_close_together_as_numpy_orders_and_counts_them(values):
    # text offsets are whole floats: tabled over their range, numpy's answer (-0.0 equal to 0.0)
    _same_as_numpy(values)
    distinct, counts = unique_counts(values)
    want, want_counts = np.unique(values, return_counts=True)
    np.testing.assert_array_equal(distinct, want)
    np.testing.assert_array_equal(counts, want_counts)
