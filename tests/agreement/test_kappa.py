"""The kappa family (Di Eugenio & Glass 2004) against the paper, scikit-learn, statsmodels, and properties."""

import warnings

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays
from sklearn.metrics import cohen_kappa_score
from statsmodels.stats.inter_rater import fleiss_kappa as statsmodels_fleiss

from agreement import (
    UndefinedMeasureWarning,
    bias_index,
    bootstrap_ci,
    cohen_kappa,
    contingency_table,
    fleiss_kappa,
    kappa_report,
    krippendorff_alpha,
    pabak,
    prevalence_index,
    scott_pi,
)
from tests.agreement.strategies import contingency_tables, count_matrices

# Contingency tables of Di Eugenio & Glass 2004 (rows coder 1, columns coder 2; Accept, Ack).
EXAMPLE_1 = [[70, 25], [0, 55]]
EXAMPLE_2 = [[70, 10], [15, 55]]
EXAMPLE_3 = [[90, 5], [5, 0]]
EXAMPLE_4 = [[45, 5], [5, 45]]
EXAMPLE_5 = [[40, 15], [20, 25]]
EXAMPLE_6 = [[40, 35], [0, 25]]


def test_example_1_cohen_and_siegel_castellan():
    # Di Eugenio & Glass 2004, Figure 2: P(A) = 125/150; Cohen P(E) = 0.4912, kappa_Co printed 0.6724 (0.672489 rounds
    # to 0.6725); S&C P(E) = 0.5050, kappa_S&C printed 0.6632 (0.663300).
    report = kappa_report(EXAMPLE_1)
    assert report.observed == pytest.approx(125 / 150)
    assert report.cohen == pytest.approx((125 / 150 - 11050 / 22500) / (1 - 11050 / 22500))
    assert report.cohen == pytest.approx(0.672489, abs=1e-6)
    assert report.scott == pytest.approx((125 / 150 - 0.505) / 0.495)
    assert report.scott == pytest.approx(0.6633, abs=1e-4)
    # Section 3: "2P(A) - 1 = 0.6666".
    assert report.pabak == pytest.approx(2 * 125 / 150 - 1)


def test_example_2_same_agreement_table_less_bias():
    # Di Eugenio & Glass 2004, section 2 says kappa_Co "becomes 0.6632"; the table gives
    # P(E) = (80*85 + 70*65) / 150^2 = 0.504444 and kappa_Co = 0.663677 (derived value kept). kappa_S&C is unchanged,
    # as the agreement table is the same.
    assert cohen_kappa(EXAMPLE_2) == pytest.approx((125 / 150 - 11350 / 22500) / (1 - 11350 / 22500))
    assert cohen_kappa(EXAMPLE_2) == pytest.approx(0.663677, abs=1e-6)
    assert scott_pi(EXAMPLE_2) == pytest.approx(scott_pi(EXAMPLE_1))


def test_example_3_prevalence_lowers_kappa():
    # Di Eugenio & Glass 2004, Figure 3: P(A) = 0.90, P(E) = 0.905 as printed, but kappa printed -0.048; the formula
    # gives (0.90 - 0.905) / 0.095 = -0.052632 (derived value kept). kappa_S&C equals kappa_Co here, as printed.
    assert cohen_kappa(EXAMPLE_3) == pytest.approx(-0.005 / 0.095)
    assert scott_pi(EXAMPLE_3) == pytest.approx(cohen_kappa(EXAMPLE_3))
    assert pabak(EXAMPLE_3) == pytest.approx(0.8)
    assert prevalence_index(EXAMPLE_3) == pytest.approx(0.9)


def test_example_4_no_prevalence():
    # Di Eugenio & Glass 2004, Figure 3: P(A) = 0.90, P(E) = 0.5, kappa = 0.80; 2P(A) - 1 = 0.8.
    assert cohen_kappa(EXAMPLE_4) == pytest.approx(0.8)
    assert scott_pi(EXAMPLE_4) == pytest.approx(0.8)
    assert pabak(EXAMPLE_4) == pytest.approx(0.8)
    assert prevalence_index(EXAMPLE_4) == 0.0
    assert bias_index(EXAMPLE_4) == 0.0


def test_example_5_little_bias():
    # Di Eugenio & Glass 2004, Figure 4 prints P(E) = 0.52 and kappa_Co = 0.27; the table's marginals (55, 45) and
    # (60, 40) give P(E) = 0.51 and kappa_Co = 0.285714; kappa_S&C = 0.283887 (printed "stable at 0.27"). Derived
    # values kept.
    assert cohen_kappa(EXAMPLE_5) == pytest.approx((0.65 - 0.51) / 0.49)
    assert scott_pi(EXAMPLE_5) == pytest.approx((0.65 - 0.51125) / 0.48875)
    assert bias_index(EXAMPLE_5) == pytest.approx(0.05)


def test_example_6_bias_raises_cohen_not_scott():
    # Di Eugenio & Glass 2004, Figure 4: P(E) = 0.45 as printed, kappa_Co printed 0.418 but
    # (0.65 - 0.45) / 0.55 = 0.363636; kappa_S&C = 0.283887 (printed 0.27); 2P(A) - 1 = 0.3 as printed. The paper's
    # point stands: with the same P(A), kappa_Co rises from Example 5 to 6 as the coders' marginals diverge while
    # kappa_S&C stays put.
    assert cohen_kappa(EXAMPLE_6) == pytest.approx(0.2 / 0.55)
    assert scott_pi(EXAMPLE_6) == pytest.approx(scott_pi(EXAMPLE_5))
    assert cohen_kappa(EXAMPLE_6) > cohen_kappa(EXAMPLE_5)
    assert pabak(EXAMPLE_6) == pytest.approx(0.3)
    assert bias_index(EXAMPLE_6) == pytest.approx(0.35)


def test_pabak_for_more_categories_uses_their_number():
    table = [[10, 2, 0], [1, 8, 1], [0, 3, 5]]
    assert pabak(table) == pytest.approx((3 * 23 / 30 - 1) / 2)


def test_prevalence_is_undefined_beyond_two_categories():
    with pytest.warns(UndefinedMeasureWarning, match="two categories only"):
        assert np.isnan(prevalence_index(np.eye(3)))
    report = kappa_report(np.eye(3) * 5)
    assert np.isnan(report.prevalence) and report.cohen == 1.0


def test_undefined_cases_are_nan_with_a_reason():
    with pytest.warns(UndefinedMeasureWarning, match="no item was labeled by both"):
        assert np.isnan(cohen_kappa(np.zeros((2, 2))))
    with pytest.warns(UndefinedMeasureWarning, match="expected agreement is 1"):
        assert np.isnan(cohen_kappa([[5, 0], [0, 0]]))
    with pytest.warns(UndefinedMeasureWarning, match="no item has two or more"):
        assert np.isnan(fleiss_kappa([[1, 0], [0, 1]]))
    with pytest.warns(UndefinedMeasureWarning, match="every annotation is in one category"):
        assert np.isnan(fleiss_kappa([[3, 0], [2, 0]]))


def test_bad_tables_are_clear_errors():
    with pytest.raises(ValueError, match="must be square"):
        cohen_kappa([[1, 2, 3]])
    with pytest.raises(ValueError, match="non-negative"):
        cohen_kappa([[1, -2], [0, 1]])


# --- Differential tests against established packages ---


@pytest.mark.parametrize("seed", range(10))
def test_cohen_equals_scikit_learn(seed):
    rng = np.random.default_rng(seed)
    n, c = int(rng.integers(5, 300)), int(rng.integers(2, 7))
    first = rng.integers(0, c, size=n)
    second = np.where(rng.random(n) < 0.6, first, rng.integers(0, c, size=n))
    table = contingency_table(first, second, labels=range(c))
    assert cohen_kappa(table) == pytest.approx(cohen_kappa_score(first, second, labels=list(range(c))), abs=1e-9)


@pytest.mark.parametrize("seed", range(10))
def test_fleiss_equals_statsmodels(seed):
    rng = np.random.default_rng(seed)
    n_items, n_raters, c = int(rng.integers(3, 200)), int(rng.integers(2, 9)), int(rng.integers(2, 6))
    labels = rng.integers(0, c, size=(n_items, n_raters))
    counts = np.eye(c)[labels].sum(axis=1)
    assert fleiss_kappa(counts) == pytest.approx(statsmodels_fleiss(counts, method="fleiss"), abs=1e-9)


def test_bootstrap_of_a_table_resamples_items():
    ci = bootstrap_ci(EXAMPLE_1, "cohen", n_resamples=2000, seed=11)
    assert ci.estimate == pytest.approx(cohen_kappa(EXAMPLE_1))
    assert ci.low < ci.estimate < ci.high
    # The large-sample standard error of kappa for this table is about 0.055 (Fleiss, Cohen & Everitt 1969).
    assert 0.04 < ci.standard_error < 0.07
    again = bootstrap_ci(EXAMPLE_1, "cohen", n_resamples=2000, seed=11)
    assert (again.low, again.high) == (ci.low, ci.high)


# --- Properties ---


@given(contingency_tables())
def test_cohen_and_scott_are_symmetric_in_the_coders(table):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UndefinedMeasureWarning)
        for measure in (cohen_kappa, scott_pi, pabak):
            a, b = measure(table), measure(table.T)
            assert (np.isnan(a) and np.isnan(b)) or a == pytest.approx(b)


@given(contingency_tables(), st.randoms())
def test_invariant_under_renaming_categories(table, rnd):
    order = list(range(table.shape[0]))
    rnd.shuffle(order)
    permuted = table[np.ix_(order, order)]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UndefinedMeasureWarning)
        for measure in (cohen_kappa, scott_pi, pabak):
            a, b = measure(table), measure(permuted)
            assert (np.isnan(a) and np.isnan(b)) or a == pytest.approx(b)


@given(arrays(np.float64, st.integers(2, 5), elements=st.integers(0, 30).map(float)).filter(
    lambda d: (d > 0).sum() >= 2))
def test_perfect_agreement_gives_one(diagonal):
    table = np.diag(diagonal)
    assert cohen_kappa(table) == pytest.approx(1.0)
    assert scott_pi(table) == pytest.approx(1.0)
    assert pabak(table) == pytest.approx(1.0)


@given(contingency_tables())
def test_two_coders_fleiss_equals_scott(table):
    # Klemens 2012 ("Many raters") and Di Eugenio & Glass 2004: Fleiss' kappa for two coders reduces to Scott's pi.
    size = table.shape[0]
    first, second = np.indices((size, size)).reshape(2, -1)
    counts = np.repeat(np.eye(size)[first] + np.eye(size)[second], table.ravel().astype(int), axis=0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UndefinedMeasureWarning)
        a, b = fleiss_kappa(counts), scott_pi(table)
    assert (np.isnan(a) and np.isnan(b)) or a == pytest.approx(b)


@given(count_matrices(min_items=2))
def test_fleiss_is_invariant_under_permuting_items_and_categories(counts):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UndefinedMeasureWarning)
        a = fleiss_kappa(counts)
        b = fleiss_kappa(counts[::-1, ::-1])
    assert (np.isnan(a) and np.isnan(b)) or a == pytest.approx(b)


@given(contingency_tables())
def test_scott_and_nominal_alpha_converge(table):
    # Di Eugenio & Glass 2004, footnote 1: Krippendorff's alpha differs from S&C only by sampling without replacement:
    # alpha = 1 - (2N - 1) / (2N) * (1 - pi).
    size = table.shape[0]
    first, second = np.indices((size, size)).reshape(2, -1)
    counts = np.repeat(np.eye(size)[first] + np.eye(size)[second], table.ravel().astype(int), axis=0)
    total = table.sum()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UndefinedMeasureWarning)
        pi, alpha = scott_pi(table), krippendorff_alpha(counts)
    if not np.isnan(pi) and not np.isnan(alpha):
        assert alpha == pytest.approx(1 - (2 * total - 1) / (2 * total) * (1 - pi))
