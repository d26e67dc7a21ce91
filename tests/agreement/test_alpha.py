"""Krippendorff's alpha (Datasaur; Nørregaard & Derczynski 2022) against worked examples, the krippendorff package,
and properties."""

import warnings

import krippendorff
import numpy as np
import pandas as pd
import pytest
from hypothesis import given
from hypothesis import strategies as st

from agreement import (
    UndefinedMeasureWarning,
    aggregate_raters,
    alpha_item_disagreement,
    bootstrap_ci,
    coincidence_matrix,
    distance_matrix,
    expected_disagreement,
    krippendorff_alpha,
    label_counts,
    spa,
)
from agreement.alpha import alpha_batch, resolve_metric
from tests.agreement.strategies import count_matrices

LEVELS = ("nominal", "ordinal", "interval", "ratio")

# Datasaur, "Krippendorff's Alpha Calculation", Table 1: Labeler A vs Reviewer on eight spans.
DATASAUR = pd.DataFrame(
    [("The Tragedy of Hamlet", "A", "EVE"), ("The Tragedy of Hamlet", "R", "TITLE"), ("Prince of Denmark", "A", "PER"),
     ("Hamlet", "A", "PER"), ("Hamlet", "R", "PER"), ("William Shakespeare", "A", "PER"),
     ("William Shakespeare", "R", "PER"), ("1599", "A", "YEAR"), ("1599", "R", "YEAR"), ("1601", "A", "YEAR"),
     ("1601", "R", "YEAR"), ("Shakespeare", "A", "ORG"), ("Shakespeare", "R", "PER"), ("30557", "R", "QTY")],
    columns=["item", "annotator", "label"],
)

# Krippendorff (2011), "Computing Krippendorff's Alpha-Reliability", reliability data with missing values.
RELIABILITY = np.array([
    [1, 2, 3, 3, 2, 1, 4, 1, 2, np.nan, np.nan, np.nan],
    [1, 2, 3, 3, 2, 2, 4, 1, 2, 5, np.nan, 3],
    [np.nan, 3, 3, 3, 2, 3, 4, 2, 2, 5, 1, np.nan],
    [1, 2, 3, 3, 2, 4, 4, 1, 2, 5, 1, np.nan],
])


def test_datasaur_span_example_gives_056():
    # Datasaur: after dropping the two single-label spans, p_a = 0.6944, p_e = 0.3055, alpha = 0.56 (exactly 14/25).
    counts = label_counts(DATASAUR)
    assert krippendorff_alpha(counts) == pytest.approx(14 / 25, abs=1e-12)
    # Gwet's p_e = sum pi_k^2 with pi = (1, 1, 5, 1, 4) / 12 over the pairable spans.
    pairable = counts.counts[counts.counts.sum(axis=1) >= 2]
    pi = pairable.sum(axis=0) / pairable.sum()
    assert (pi**2).sum() == pytest.approx(0.3056, abs=1e-4)
    # Gwet's p_a: p_a' = 4/6, r' = 2, n = 6: p_a = p_a'(1 - 1/12) + 1/12 = 25/36 = 0.6944.
    assert (4 / 6) * (1 - 1 / 12) + 1 / 12 == pytest.approx(0.6944, abs=1e-4)
    assert (25 / 36 - 11 / 36) / (1 - 11 / 36) == pytest.approx(krippendorff_alpha(counts))


def test_dropping_single_label_spans_changes_nothing():
    # Datasaur, step 2: spans with one label are not pairable.
    cleaned = DATASAUR[~DATASAUR["item"].isin(["Prince of Denmark", "30557"])]
    assert krippendorff_alpha(label_counts(cleaned)) == pytest.approx(krippendorff_alpha(label_counts(DATASAUR)))


@pytest.mark.parametrize(("level", "published"), [("nominal", 0.743), ("ordinal", 0.815), ("interval", 0.849),
                                                  ("ratio", 0.797)])
def test_krippendorff_2011_published_values(level, published):
    counts = aggregate_raters(RELIABILITY.T)
    assert krippendorff_alpha(counts, level=level) == pytest.approx(published, abs=5e-4)
    assert krippendorff_alpha(counts, level=level) == pytest.approx(
        krippendorff.alpha(reliability_data=RELIABILITY, level_of_measurement=level), abs=1e-12)


def random_reliability(rng, n_coders, n_units, n_values, missing):
    data = rng.integers(1, n_values + 1, size=(n_coders, n_units)).astype(float)
    # Agreement above chance, so alpha is far from 0: each coder copies a unit's "true" value half the time.
    truth = rng.integers(1, n_values + 1, size=n_units)
    copy = rng.random((n_coders, n_units)) < 0.5
    data[copy] = np.broadcast_to(truth, data.shape)[copy]
    data[rng.random(data.shape) < missing] = np.nan
    return data


@pytest.mark.parametrize("level", LEVELS)
@pytest.mark.parametrize("seed", range(6))
def test_equals_the_krippendorff_package_on_random_sparse_data(level, seed):
    rng = np.random.default_rng(seed)
    data = random_reliability(rng, n_coders=int(rng.integers(2, 7)), n_units=int(rng.integers(5, 200)),
                              n_values=int(rng.integers(2, 8)), missing=float(rng.uniform(0.0, 0.6)))
    counts = aggregate_raters(data.T)
    expected = krippendorff.alpha(reliability_data=data, level_of_measurement=level)
    assert krippendorff_alpha(counts, level=level) == pytest.approx(expected, abs=1e-9)


@pytest.mark.parametrize("level", ["nominal", "interval"])
def test_equals_the_krippendorff_package_on_value_counts(level):
    rng = np.random.default_rng(7)
    counts = rng.integers(0, 3, size=(500, 6)).astype(float)
    values = np.array([0.5, 1.0, 2.0, 3.5, 4.0, 10.0])
    expected = krippendorff.alpha(value_counts=counts, level_of_measurement=level, value_domain=values)
    assert krippendorff_alpha(counts, level=level, values=values) == pytest.approx(expected, abs=1e-9)


def test_values_reorder_ordinal_categories():
    # Columns given out of value order: ordinal alpha follows the values, not the column positions.
    counts = aggregate_raters(RELIABILITY.T).counts
    order = np.array([3, 0, 4, 2, 1])
    assert krippendorff_alpha(counts[:, order], level="ordinal", values=np.arange(1, 6)[order]) == pytest.approx(
        krippendorff_alpha(counts, level="ordinal", values=np.arange(1, 6)))


def test_a_distance_matrix_gives_the_level_it_encodes():
    counts = aggregate_raters(RELIABILITY.T)
    values = np.arange(1.0, 6.0)
    marginals = coincidence_matrix(counts).sum(axis=1)
    for level in LEVELS:
        delta = distance_matrix(level, values=values, marginals=marginals)
        assert krippendorff_alpha(counts, level=delta) == pytest.approx(krippendorff_alpha(counts, level=level))


def test_coincidence_matrix_rows_sum_to_pairable_values():
    counts = aggregate_raters(RELIABILITY.T)
    o = coincidence_matrix(counts)
    np.testing.assert_allclose(o, o.T)
    # Krippendorff (2011): 40 pairable values (unit 12 has a single value); n_1..n_5 = 9, 13, 10, 5, 3.
    np.testing.assert_allclose(o.sum(axis=1), [9, 13, 10, 5, 3])


@pytest.mark.parametrize("level", LEVELS)
def test_item_terms_add_up_to_the_project_alpha(level):
    # Nørregaard & Derczynski 2022, eq. 5: D_o = sum_i n_i d_i / n; alpha = 1 - D_o / D_e.
    counts = aggregate_raters(RELIABILITY.T)
    d = alpha_item_disagreement(counts, level=level)
    n = counts.counts.sum(axis=1)
    pairable = n >= 2
    assert np.isnan(d[~pairable]).all()
    observed = (n[pairable] * d[pairable]).sum() / n[pairable].sum()
    assert 1 - observed / expected_disagreement(counts, level=level) == pytest.approx(
        krippendorff_alpha(counts, level=level))


def test_item_terms_score_a_task_against_the_project_marginals():
    counts = aggregate_raters(RELIABILITY.T)
    project = coincidence_matrix(counts).sum(axis=1)
    one_task = counts.counts[[5]]  # unit 6: values 1, 2, 3, 4
    d = alpha_item_disagreement(one_task, level="ordinal", values=np.arange(1, 6), marginals=project)
    assert d[0] == pytest.approx(alpha_item_disagreement(counts, level="ordinal")[5])


def test_nominal_alpha_relates_to_spa_with_annotation_weights():
    # Nørregaard & Derczynski 2022, eq. 6: with delta = I(c != k), 1 - D_o is SPA weighted by annotations.
    counts = aggregate_raters(RELIABILITY.T)
    n = counts.counts.sum(axis=1)
    d = alpha_item_disagreement(counts)
    assert 1 - np.nansum(n * d) / n[n >= 2].sum() == pytest.approx(spa(counts, weights="annotations"))


def test_undefined_cases_are_nan_with_a_reason():
    with pytest.warns(UndefinedMeasureWarning, match="no pairable values"):
        assert np.isnan(krippendorff_alpha([[1, 0], [0, 1]]))
    with pytest.warns(UndefinedMeasureWarning, match="expected disagreement is zero"):
        assert np.isnan(krippendorff_alpha([[2, 0], [3, 0]]))
    with pytest.warns(UndefinedMeasureWarning):
        assert np.isnan(krippendorff_alpha(np.zeros((0, 3))))


def test_bad_arguments_are_clear_errors():
    with pytest.raises(ValueError, match="Unknown level of measurement 'cardinal'"):
        krippendorff_alpha([[1, 1]], level="cardinal")
    with pytest.raises(ValueError, match="one number per category"):
        krippendorff_alpha([[1, 1]], level="interval", values=[1, 2, 3])
    with pytest.raises(ValueError, match="not numeric"):
        krippendorff_alpha(label_counts(DATASAUR), level="interval")
    with pytest.raises(ValueError, match="zero diagonal"):
        krippendorff_alpha([[1, 1]], level=np.ones((2, 2)))
    with pytest.raises(ValueError, match="non-negative"):
        krippendorff_alpha([[1, 1]], level="ratio", values=[-1, 1])


def test_bootstrap_interval_brackets_the_estimate():
    counts = aggregate_raters(RELIABILITY.T)
    for level in LEVELS:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", UndefinedMeasureWarning)
            ci = bootstrap_ci(counts, "alpha", level=level, n_resamples=400, seed=3)
        assert ci.estimate == pytest.approx(krippendorff_alpha(counts, level=level))
        assert ci.low <= ci.estimate <= ci.high
        assert 0 < ci.standard_error < 0.3


# --- Properties ---


@given(count_matrices(min_items=2), st.randoms(), st.sampled_from(LEVELS))
def test_invariant_under_permuting_items(counts, rnd, level):
    rows = list(range(counts.shape[0]))
    rnd.shuffle(rows)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UndefinedMeasureWarning)
        a = krippendorff_alpha(counts, level=level, values=np.arange(1, counts.shape[1] + 1))
        b = krippendorff_alpha(counts[rows], level=level, values=np.arange(1, counts.shape[1] + 1))
    assert (np.isnan(a) and np.isnan(b)) or a == pytest.approx(b, abs=1e-9)


@given(count_matrices(min_items=2), st.randoms())
def test_nominal_alpha_is_invariant_under_renaming_categories(counts, rnd):
    cols = list(range(counts.shape[1]))
    rnd.shuffle(cols)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UndefinedMeasureWarning)
        a, b = krippendorff_alpha(counts), krippendorff_alpha(counts[:, cols])
    assert (np.isnan(a) and np.isnan(b)) or a == pytest.approx(b, abs=1e-9)


@given(count_matrices(min_items=2), st.floats(-50, 50), st.floats(0.1, 20))
def test_interval_alpha_is_invariant_under_affine_rescaling(counts, shift, scale):
    values = np.arange(counts.shape[1], dtype=float)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UndefinedMeasureWarning)
        a = krippendorff_alpha(counts, level="interval", values=values)
        b = krippendorff_alpha(counts, level="interval", values=shift + scale * values)
    assert (np.isnan(a) and np.isnan(b)) or a == pytest.approx(b, abs=1e-7)


@given(st.lists(st.integers(2, 6), min_size=2, max_size=20), st.randoms(), st.sampled_from(LEVELS))
def test_perfect_agreement_gives_one(sizes, rnd, level):
    counts = np.zeros((len(sizes), 4))
    chosen = [rnd.randrange(4) for _ in sizes]
    if len(set(chosen)) == 1:
        chosen[0] = (chosen[0] + 1) % 4
    counts[np.arange(len(sizes)), chosen] = sizes
    assert krippendorff_alpha(counts, level=level, values=[1, 2, 3, 4]) == pytest.approx(1.0)


@given(count_matrices(min_items=2), st.sampled_from(LEVELS))
def test_bootstrap_weights_equal_repeating_items(counts, level):
    # The batch path that the bootstrap uses: weighting an item k times equals repeating it k times.
    rng = np.random.default_rng(0)
    weights = rng.integers(0, 4, size=counts.shape[0])
    x, metric = resolve_metric(counts, level, np.arange(1, counts.shape[1] + 1))
    batch = alpha_batch(x, weights[None, :].astype(float), metric=metric)[0]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UndefinedMeasureWarning)
        repeated = krippendorff_alpha(np.repeat(counts, weights, axis=0), level=level,
                                      values=np.arange(1, counts.shape[1] + 1))
    assert (np.isnan(batch) and np.isnan(repeated)) or batch == pytest.approx(repeated, abs=1e-9)
