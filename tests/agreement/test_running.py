"""Live running sums equal the batch measures after any stream of item updates."""

import warnings

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from agreement import UndefinedMeasureWarning, fleiss_kappa, gwet_ac, krippendorff_alpha, spa
from agreement.counts import sparse_counts
from agreement.running import RunningAgreement

LEVELS = ("nominal", "ordinal", "interval", "ratio")
SCHEMES = ("flat", "annotations", "annotations_m1", "edges")

updates = st.lists(
    st.tuples(st.integers(0, 12), st.one_of(st.none(), st.lists(st.integers(0, 4), min_size=1, max_size=4))),
    min_size=1, max_size=60,
)


@given(updates)
def test_live_equals_batch_after_any_stream(stream):
    live = RunningAgreement(2)
    lean = RunningAgreement(coincidence=False)  # nominal only, sparse updates
    state = {}
    for key, counts in stream:
        if counts is None:
            live.remove_item(key)
            lean.remove_item(key)
            state.pop(key, None)
        else:
            live.set_item(key, counts)
            lean.set_sparse_item(key, [c for c, x in enumerate(counts) if x], [x for x in counts if x])
            if sum(counts):
                state[key] = counts
            else:
                state.pop(key, None)
    width = max([len(c) for c in state.values()] + [live.n_categories])
    matrix = np.array([c + [0] * (width - len(c)) for c in state.values()], dtype=float).reshape(-1, width)
    values = np.arange(1.0, width + 1)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UndefinedMeasureWarning)
        for scheme in SCHEMES:
            a, b = live.spa(weights=scheme), spa(matrix, weights=scheme)
            assert (np.isnan(a) and np.isnan(b)) or a == pytest.approx(b, abs=1e-9)
        used = matrix[:, matrix.sum(axis=0) > 0]
        a, b = lean.gwet_ac1(), gwet_ac(used).value if used.shape[1] else np.nan
        assert (np.isnan(a) and np.isnan(b)) or a == pytest.approx(b, abs=1e-9)
        a, b = lean.alpha(), krippendorff_alpha(matrix)
        assert (np.isnan(a) and np.isnan(b)) or a == pytest.approx(b, abs=1e-7)
        a, b = lean.spa(), spa(matrix)
        assert (np.isnan(a) and np.isnan(b)) or a == pytest.approx(b, abs=1e-9)
        for level in LEVELS:
            a = live.alpha(level=level, values=values)
            b = krippendorff_alpha(matrix, level=level, values=values)
            assert (np.isnan(a) and np.isnan(b)) or a == pytest.approx(b, abs=1e-7)
    assert live.n_items == len(state)
    assert live.n_annotations == pytest.approx(matrix.sum())


def _state_of(sums):
    """Every running sum, as plain numbers (to compare two ways of reaching them)."""
    return np.concatenate([[sums.n_items, sums.n_annotations, sums._nominal_observed, sums._total,
                            sums._total_squares, sums._rated], sums._spa, sums.pairable_totals,
                           sums._shares[: sums.n_categories], sums._coincidence.ravel()])


@given(st.lists(st.lists(st.integers(0, 4), min_size=1, max_size=5), min_size=1, max_size=25),
       st.lists(st.booleans(), min_size=25, max_size=25))
def test_batch_update_equals_item_by_item(items, taken_away):
    """``apply_items`` over a batch gives the sums of ``set_sparse_item`` item by item, and taking a batch away
    gives those of the items left."""
    one, batch = RunningAgreement(2), RunningAgreement(2)
    sparse = [(np.flatnonzero(counts), np.array(counts, dtype=float)[np.flatnonzero(counts)]) for counts in items]

    def csr(chosen):
        indptr = np.cumsum([0] + [len(sparse[i][0]) for i in chosen])
        columns = np.concatenate([sparse[i][0] for i in chosen] + [np.zeros(0, dtype=int)])
        counts = np.concatenate([sparse[i][1] for i in chosen] + [np.zeros(0)])
        return indptr, columns, counts

    for key, (columns, counts) in enumerate(sparse):
        if len(columns):
            one.set_sparse_item(key, columns, counts)
    batch.apply_items(*csr([i for i, (columns, _) in enumerate(sparse) if len(columns)]))
    assert _state_of(batch) == pytest.approx(_state_of(one), abs=1e-9)
    gone = [i for i, (columns, _) in enumerate(sparse) if len(columns) and taken_away[i]]
    for key in gone:
        one.remove_item(key)
    batch.apply_items(*csr(gone), sign=-1.0)
    assert _state_of(batch) == pytest.approx(_state_of(one), abs=1e-9)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UndefinedMeasureWarning)
        for level in LEVELS:
            a, b = batch.alpha(level=level), one.alpha(level=level)
            assert (np.isnan(a) and np.isnan(b)) or a == pytest.approx(b, abs=1e-9)


@given(st.lists(st.lists(st.integers(0, 5), max_size=5), min_size=1, max_size=25))
def test_sums_of_sparse_counts_equal_the_batch_measures(items):
    """SPA, nominal alpha, AC1 and Fleiss' kappa from the sums of sparse counts equal the batch functions on the
    count matrix of the same annotations."""
    codes = [(i, label) for i, labels in enumerate(items) for label in labels]
    width = 6
    sparse = sparse_counts([i for i, _ in codes], [label for _, label in codes], n_categories=width,
                           n_items=len(items))
    matrix = sparse.dense()
    packed = sparse.packed()
    assert matrix.sum() == len(codes) and packed.shape[0] == len(items)
    for row, counts in zip(packed, matrix, strict=True):  # each item's non-zero counts, left-aligned, in column order
        assert row[: np.count_nonzero(counts)].tolist() == counts[counts > 0].tolist()
        assert not row[np.count_nonzero(counts):].any()
    sums = RunningAgreement.of_counts(sparse)
    rated = matrix[matrix.sum(axis=1) > 0]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UndefinedMeasureWarning)
        pairs = [(sums.spa(), spa(rated) if len(rated) else np.nan),
                 (sums.alpha(), krippendorff_alpha(rated) if len(rated) else np.nan),
                 (sums.gwet_ac1(n_categories=width), gwet_ac(rated).value if len(rated) else np.nan),
                 (sums.fleiss_kappa(), fleiss_kappa(rated) if len(rated) else np.nan)]
    for live, batch in pairs:
        assert (np.isnan(live) and np.isnan(batch)) or live == pytest.approx(batch, abs=1e-9)
    assert sums.n_items == len(rated)


def test_categories_grow_as_labels_appear():
    live = RunningAgreement()
    live.set_item("a", [2])
    live.set_item("b", [1, 1])
    live.set_item("c", [0, 0, 3])
    matrix = live.dense(["a", "b", "c"])
    assert live.n_items == 3 and matrix.shape == (3, 3)
    assert live.alpha() == pytest.approx(krippendorff_alpha(matrix))


def test_undefined_live_values_are_nan_with_a_reason():
    live = RunningAgreement(2)
    live.set_item("a", [1, 0])
    with pytest.warns(UndefinedMeasureWarning, match="no item has two or more annotations"):
        assert np.isnan(live.spa())
    live.set_item("b", [2, 0])
    with pytest.warns(UndefinedMeasureWarning, match="expected disagreement is zero"):
        assert np.isnan(live.alpha())


def test_bad_counts_are_clear_errors():
    live = RunningAgreement(2)
    with pytest.raises(ValueError, match="finite, non-negative"):
        live.set_item("a", [1, -1])
    with pytest.raises(ValueError, match="Live SPA supports"):
        live.spa(weights="inv_var")


def test_nominal_sums_stay_lean_with_thousands_of_categories():
    """Free text: every answer a new category; the sums grow with the categories, not their square."""
    live = RunningAgreement(coincidence=False)
    rng = np.random.default_rng(0)
    for item in range(3000):
        columns = rng.choice(20000, size=3, replace=False) if item % 2 else np.array([item, item + 1, item + 2])
        counts = np.array([1.0, 1.0, 1.0]) if item % 2 else np.array([2.0, 1.0, 0.0])[: 3]
        keep = counts > 0
        live.set_sparse_item(item, columns[keep], counts[keep])
    assert live.n_categories >= 3000
    assert live._coincidence.size == 0 and live._totals.size < 4 * live.n_categories
    keys = list(range(3000))
    matrix = live.dense(keys)
    assert live.alpha() == pytest.approx(krippendorff_alpha(matrix), abs=1e-9)
    packed = live.packed(keys)
    assert packed.shape == (3000, 3)
    assert spa(packed) == pytest.approx(spa(matrix), abs=1e-12)
    with pytest.raises(ValueError, match="needs the coincidence matrix"):
        live.alpha(level="interval")
