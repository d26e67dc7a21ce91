"""Bootstrap intervals: resampling distinct rows or table cells is item resampling."""

import math
import warnings

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from agreement import UndefinedMeasureWarning, bootstrap_ci, fleiss_kappa, spa
from agreement.bootstrap import bootstrap_distinct, bootstrap_items
from agreement.itemsums import compress_rows
from agreement.kappa import fleiss_batch
from agreement.spa import WEIGHING_SCHEMES, spa_batch
from tests.agreement.strategies import count_matrices


@given(count_matrices(min_items=2))
def test_weights_equal_repeated_items_for_spa_and_fleiss(counts):
    weights = np.random.default_rng(1).integers(0, 4, size=counts.shape[0]).astype(float)
    repeated = np.repeat(counts, weights.astype(int), axis=0)
    import warnings

    from agreement import UndefinedMeasureWarning

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UndefinedMeasureWarning)
        for scheme in WEIGHING_SCHEMES:
            a = spa_batch(counts, weights[None], weights=scheme)[0]
            b = spa(repeated, weights=scheme) if len(repeated) else np.nan
            assert (np.isnan(a) and np.isnan(b)) or a == pytest.approx(b)
        a, b = fleiss_batch(counts, weights[None])[0], fleiss_kappa(repeated) if len(repeated) else np.nan
    assert (np.isnan(a) and np.isnan(b)) or a == pytest.approx(b)


def test_same_seed_same_interval_and_the_estimate_is_the_measure():
    rng = np.random.default_rng(0)
    counts = np.eye(3)[rng.integers(0, 3, size=(200, 4))].sum(axis=1)
    first = bootstrap_ci(counts, "spa", n_resamples=500, seed=42)
    second = bootstrap_ci(counts, "spa", n_resamples=500, seed=42)
    assert first == second
    assert first.estimate == pytest.approx(spa(counts))
    assert first.low < first.estimate < first.high
    assert first.n_resamples == 500 and first.n_undefined == 0


def test_interval_matches_a_naive_item_bootstrap():
    # Same distribution as drawing items one by one: compare quantiles of the two on the same data.
    rng = np.random.default_rng(4)
    counts = np.eye(3)[rng.integers(0, 3, size=(80, 3))].sum(axis=1)
    counts[rng.random(80) < 0.3, :] *= 0  # some items without annotations
    fast = bootstrap_items(counts, spa_batch, n_resamples=4000, seed=9)
    naive_rng = np.random.default_rng(10)
    naive = np.array([spa(counts[naive_rng.integers(0, 80, size=80)]) for _ in range(4000)])
    assert fast.standard_error == pytest.approx(naive.std(ddof=1), rel=0.08)
    assert fast.low == pytest.approx(np.quantile(naive, 0.025), abs=0.02)
    assert fast.high == pytest.approx(np.quantile(naive, 0.975), abs=0.02)


def test_coverage_of_the_interval_by_simulation():
    # Items drawn from a population whose P-bar is known; the 90% interval should cover it about 90% of the time.
    rng = np.random.default_rng(12)
    probabilities = np.array([0.7, 0.2, 0.1])
    truth = (probabilities**2).sum()  # P(two annotations agree) when every label is drawn from `probabilities`
    covered = 0
    for trial in range(150):
        counts = rng.multinomial(3, probabilities, size=150).astype(float)
        ci = bootstrap_ci(counts, "spa", n_resamples=400, confidence=0.9, seed=trial)
        covered += ci.low <= truth <= ci.high
    assert 0.80 <= covered / 150 <= 0.97


def test_undefined_resamples_are_counted_and_reported():
    counts = np.array([[2, 0], [1, 0], [1, 0], [0, 1]], dtype=float)
    from agreement import UndefinedMeasureWarning

    with pytest.warns(UndefinedMeasureWarning, match="undefined on"):
        ci = bootstrap_ci(counts, "spa", n_resamples=200, seed=1)
    assert 0 < ci.n_undefined < 200


def test_bad_arguments_are_clear_errors():
    with pytest.raises(ValueError, match="Unknown measure 'median'"):
        bootstrap_ci([[1, 1]], "median")
    with pytest.raises(ValueError, match="confidence must lie strictly between 0 and 1"):
        bootstrap_ci([[1, 1]], "spa", confidence=95)
    with pytest.raises(ValueError, match="whole counts"):
        bootstrap_ci([[0.5, 0], [0, 1]], "cohen")


@given(st.lists(st.lists(st.integers(0, 3), min_size=3, max_size=3), min_size=1, max_size=40), st.integers(0, 5))
def test_resampling_the_distinct_rows_draws_what_resampling_the_items_draws(rows, seed):
    # a caller that keeps only the distinct rows and their multiplicities gets the items' interval, draw for draw
    x = np.array(rows, dtype=np.float64)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UndefinedMeasureWarning)
        items = bootstrap_items(x, spa_batch, n_resamples=60, seed=seed)
        distinct = bootstrap_distinct(*compress_rows(x), spa_batch, n_resamples=60, seed=seed)
    assert (items.low, items.high, items.n_undefined) == (distinct.low, distinct.high, distinct.n_undefined) or (
        math.isnan(items.low) and math.isnan(distinct.low))
    assert distinct.estimate == pytest.approx(items.estimate, nan_ok=True)
