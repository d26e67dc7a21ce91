"""Per-item sums shared by the measures: row blocks, totals, agreement terms and the distinct rows of a matrix."""

import numpy as np
import pytest
from hypothesis import given

from agreement.itemsums import (
    NEGATIVE,
    NOT_FINITE,
    compress_rows,
    item_agreement_terms,
    n_batches,
    pairable_inverse,
    row_blocks,
    row_sums,
)
from tests.agreement.strategies import count_matrices


@given(count_matrices(min_items=1, max_items=40))
def test_distinct_rows_and_multiplicities_rebuild_the_matrix(counts):
    rows, multiplicity = compress_rows(counts)
    assert multiplicity.sum() == counts.shape[0]
    rebuilt = np.repeat(rows, multiplicity, axis=0)
    key = lambda m: sorted(map(tuple, m))
    assert key(rebuilt) == key(counts)


def _rows_by_their_bytes(x):
    """compress_rows as every row's bytes sorted give it: the order the bootstrap's seeded draws depend on."""
    contiguous = np.ascontiguousarray(x) + 0.0
    keys = contiguous.view(np.dtype((np.void, contiguous.dtype.itemsize * contiguous.shape[1]))).ravel()
    _, first, multiplicity = np.unique(keys, return_index=True, return_counts=True)
    return contiguous[first], multiplicity


@given(count_matrices(min_items=1, max_items=40))
def test_distinct_rows_come_in_the_order_of_their_bytes(counts):
    rows, multiplicity = compress_rows(counts)
    want_rows, want_multiplicity = _rows_by_their_bytes(counts)
    np.testing.assert_array_equal(rows, want_rows)
    np.testing.assert_array_equal(multiplicity, want_multiplicity)


def test_rows_with_too_many_combinations_for_one_integer_are_compressed_alike():
    # 8 columns of 400 distinct values each: 400**8 combinations do not fit one int64 key
    counts = np.random.default_rng(3).integers(0, 400, size=(2000, 8)).astype(float)
    counts[1000:] = counts[:1000]
    counts[5, 2], counts[1005, 2] = -0.0, 0.0  # one row: -0.0 equals 0.0
    rows, multiplicity = compress_rows(counts)
    want_rows, want_multiplicity = _rows_by_their_bytes(counts)
    np.testing.assert_array_equal(rows, want_rows)
    np.testing.assert_array_equal(multiplicity, want_multiplicity)
    assert multiplicity.sum() == 2000 and len(rows) == 1000


def test_row_sums_pairable_inverse_and_item_agreement_by_hand():
    # rows (2, 1, 0), (0, 0, 3), (1, 0, 0): totals n = 3, 3, 1; sums of squares q = 4 + 1 = 5, 9, 1
    x = np.array([[2.0, 1.0, 0.0], [0.0, 0.0, 3.0], [1.0, 0.0, 0.0]])
    n, q = row_sums(x)
    assert n.tolist() == [3.0, 3.0, 1.0] and q.tolist() == [5.0, 9.0, 1.0]
    # 1 / (n - 1) where n >= 2: 1/2, 1/2; the single annotation gets 0
    assert pairable_inverse(n).tolist() == [0.5, 0.5, 0.0]
    # (q - n) / (n (n - 1)): (5 - 3) / 6 = 1/3 (one agreeing pair of three), (9 - 3) / 6 = 1; n = 1: 0 / 2 = 0
    assert item_agreement_terms(n, q).tolist() == pytest.approx([1 / 3, 1.0, 0.0])
    assert [r.tolist() for r in row_sums(np.zeros((0, 3)))] == [[], []]


def test_row_blocks_cut_rows_and_weights_alike():
    # 1,000 weight batches: blocks of max(64, 16,384 // 1,000) = 64 rows, their weights cut with them
    x = np.arange(200 * 2, dtype=float).reshape(200, 2)
    w = np.arange(1000 * 200, dtype=float).reshape(1000, 200)
    assert n_batches(w) == 1000 and n_batches(None) == 1
    blocks = list(row_blocks(x, w))
    assert [len(b.x) for b in blocks] == [64, 64, 64, 8]
    np.testing.assert_array_equal(np.hstack([b.w for b in blocks]), w)
    np.testing.assert_array_equal(np.concatenate([b.n for b in blocks]), x.sum(axis=1))


def test_row_blocks_project_in_the_same_pass_and_read_integer_counts():
    # moments: the totals, then x @ project; integer counts give the same float sums
    x = np.array([[1, 2], [3, 0]])
    (block,) = row_blocks(x, project=np.array([[10.0], [1.0]]), squares=True)
    assert block.moments.tolist() == [[3.0, 3.0], [12.0, 30.0]]
    assert block.q.tolist() == [5.0, 9.0] and block.w.tolist() == [[1.0, 1.0]]


@pytest.mark.parametrize(("bad", "message"), [(-1.0, NEGATIVE), (np.nan, NOT_FINITE), (np.inf, NOT_FINITE)])
def test_row_blocks_refuse_counts_that_are_not_counts(bad, message):
    x = np.array([[1.0, 1.0], [0.0, bad]])
    with pytest.raises(ValueError, match=message):
        list(row_blocks(x))
