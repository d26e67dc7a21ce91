"""Information in agreement, P_I (Klemens 2012) against the paper's tables and figures."""

import warnings

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from sklearn.metrics import mutual_info_score

from agreement import (
    UndefinedMeasureWarning,
    bootstrap_ci,
    category_ratios,
    cohen_kappa,
    contingency_table,
    information_agreement,
    information_agreement_many,
    klemens_ordinal_weights,
    scott_pi,
)
from tests.agreement.strategies import contingency_tables


def table_of(first, second):
    return contingency_table(first, second, labels=[1, 2, 3]).to_numpy()


TABLE_1 = table_of([1, 1, 1, 1, 1, 1, 2, 2, 2, 3, 3, 3], [1, 1, 1, 1, 1, 1, 3, 3, 2, 2, 2, 3])
TABLE_2 = table_of([1, 1, 1, 1, 1, 1, 2, 2, 2, 3, 3, 3], [1, 1, 1, 1, 2, 3, 1, 2, 2, 1, 3, 3])
TABLE_3 = np.array([[0.2, 0, 0], [0.05, 0.06, 0.19], [0.15, 0.14, 0.21]])


def test_motivating_example_table_1():
    # Klemens 2012, section 1: P_o = 66.67%, P_e = 0.375, kappa ~ 0.467; H = 1.5 for both rows; IA = 0.569; P_I = 0.379.
    r = information_agreement(TABLE_1)
    assert cohen_kappa(TABLE_1) == pytest.approx(0.467, abs=5e-4)
    assert r.entropy_first == pytest.approx(1.5) and r.entropy_second == pytest.approx(1.5)
    assert r.information == pytest.approx(0.569, abs=5e-4)
    assert r.p_i == pytest.approx(0.379, abs=5e-4)


def test_table_2_more_even_agreement_carries_more_information():
    # Klemens 2012: same P_o and kappa as Table 1, but IA = 0.61 instead of 0.569.
    r = information_agreement(TABLE_2)
    assert cohen_kappa(TABLE_2) == pytest.approx(cohen_kappa(TABLE_1))
    assert r.information == pytest.approx(0.61, abs=5e-3)
    assert r.p_i > information_agreement(TABLE_1).p_i


def test_worked_example_table_3():
    # Klemens 2012, "A worked example": IA terms 0.264 + 0 + 0.015 = 0.279; H(row) = 1.485, H(column) = 1.52;
    # P_I printed as ~0.185 (0.18565, i.e. 0.186 rounded); P_o = 0.47, P_e = 0.34, kappa ~ 0.197; Scott's pi ~ .178.
    r = information_agreement(TABLE_3)
    assert r.information == pytest.approx(0.279, abs=5e-4)
    assert r.entropy_first == pytest.approx(1.485, abs=5e-4)
    assert r.entropy_second == pytest.approx(1.52, abs=5e-3)  # printed to two decimals: 1.5219
    assert r.p_i == pytest.approx(0.1857, abs=1e-4)
    assert cohen_kappa(TABLE_3) == pytest.approx(0.197, abs=5e-4)
    assert scott_pi(TABLE_3) == pytest.approx(0.178, abs=5e-4)
    # The middle category agrees exactly as often as independence predicts: R_2 = 0.06 / (0.3 * 0.2) = 1.
    np.testing.assert_allclose(category_ratios(TABLE_3), [0.2 / 0.08, 1.0, 0.21 / 0.2])


def test_figure_2_full_disagreement():
    # Klemens 2012, Figure 2: P_o = 0, P_e = 0.34, kappa = -0.515, entropies 1.522 and 1.571, IA = 0, P_I = 0 (SE 0).
    table = table_of([1, 2, 1, 2, 1, 2, 3, 1, 3, 2], [2, 1, 3, 1, 2, 3, 2, 2, 1, 3])
    r = information_agreement(table)
    assert cohen_kappa(table) == pytest.approx(-0.515, abs=5e-4)
    assert (r.entropy_first, r.entropy_second) == pytest.approx((1.522, 1.571), abs=5e-4)
    assert r.information == 0.0 and r.p_i == 0.0
    assert bootstrap_ci(table, "information", n_resamples=300, seed=1).standard_error == 0.0


def test_figure_3_one_constant_rater():
    # Klemens 2012, Figure 3: P_o = 33%, P_e = 0.333, kappa = 0, entropies 0 and 1.459, IA = 0, P_I = 0.
    table = table_of([1] * 6, [1, 1, 2, 2, 2, 3])
    r = information_agreement(table)
    assert cohen_kappa(table) == pytest.approx(0.0, abs=1e-12)
    assert (r.entropy_first, r.entropy_second) == pytest.approx((0.0, 1.459), abs=5e-4)
    assert r.p_i == pytest.approx(0.0, abs=1e-12)


def test_figure_4_analogue_of_negative_correlation():
    # Klemens 2012, Figure 4: P_o = 20%, P_e = 0.5, kappa = -0.6, IA = P_I = -0.264.
    table = np.array([[0.1, 0.4], [0.4, 0.1]])
    r = information_agreement(table)
    assert cohen_kappa(table) == pytest.approx(-0.6)
    assert r.information == pytest.approx(-0.264, abs=5e-4)
    assert r.p_i == pytest.approx(-0.264, abs=5e-4)


@pytest.mark.parametrize(("first", "second", "information", "p_i"), [
    ([1, 1, 1, 2, 1, 2, 2, 2, 3, 3], [1, 1, 1, 1, 2, 2, 2, 2, 3, 3], 1.009, 0.663),  # Figure 5
    ([1, 1, 1, 1, 2, 2, 2, 3, 2, 3], [1, 1, 1, 1, 2, 2, 2, 2, 3, 3], 0.933, 0.613),  # Figure 6
])
def test_figures_5_and_6_same_kappa_different_information(first, second, information, p_i):
    # Klemens 2012, Figures 5-6: P_o = 80%, P_e = 0.36, kappa = 0.688 (0.6875) for both; entropies 1.522.
    table = table_of(first, second)
    r = information_agreement(table)
    assert cohen_kappa(table) == pytest.approx(0.6875)
    assert r.entropy_first == pytest.approx(1.522, abs=5e-4)
    assert r.information == pytest.approx(information, abs=5e-4)
    assert r.p_i == pytest.approx(p_i, abs=5e-4)


def test_full_agreement_gives_one_with_zero_standard_error():
    # Klemens 2012, Figure 1: kappa = P_I = 1, with zero bootstrap variation.
    table = np.diag([3.0, 4.0, 3.0])
    assert information_agreement(table).p_i == pytest.approx(1.0)
    assert bootstrap_ci(table, "information", n_resamples=300, seed=1).standard_error == pytest.approx(0.0, abs=1e-12)


def test_weights_of_one_everywhere_give_the_mutual_information():
    # Eq. 2 with w_ij = 1 is I(X, Y); scikit-learn reports it in nats.
    rng = np.random.default_rng(5)
    first = rng.integers(0, 4, size=300)
    second = np.where(rng.random(300) < 0.5, first, rng.integers(0, 4, size=300))
    table = contingency_table(first, second, labels=range(4)).to_numpy()
    r = information_agreement(table, weights=np.ones((4, 4)))
    assert r.information == pytest.approx(mutual_info_score(first, second) / np.log(2), abs=1e-12)


def test_ordinal_weights_give_partial_credit():
    # Klemens 2012, section 3.1: near misses count with weight 1/2 (one step) and 1/4 (two steps).
    w = klemens_ordinal_weights(4)
    np.testing.assert_allclose(w[0], [1, 0.5, 0.25, 0])
    table = np.array([[5, 2, 0, 0], [1, 5, 2, 0], [0, 1, 5, 1], [0, 0, 2, 5]], dtype=float)
    joint = table / table.sum()
    expected = np.outer(joint.sum(axis=1), joint.sum(axis=0))
    with np.errstate(divide="ignore", invalid="ignore"):
        terms = np.where(joint > 0, joint * np.log2(joint / expected), 0.0)
    steps = np.abs(np.subtract.outer(np.arange(4), np.arange(4)))
    by_hand = terms[steps == 0].sum() + terms[steps == 1].sum() / 2 + terms[steps == 2].sum() / 4
    assert information_agreement(table, weights=w).information == pytest.approx(by_hand)
    assert information_agreement(table).information == pytest.approx(terms[steps == 0].sum())


def test_many_raters_pool_the_pairwise_terms():
    # Klemens 2012, "Many raters": P_I(X,Y,Z) = (2IA(X,Y) + 2IA(X,Z) + 2IA(Y,Z)) / sum of the pairs' entropies.
    x = [1, 1, 2, 2, 3, 3, 1, 2]
    y = [1, 1, 2, 3, 3, 3, 1, 1]
    z = [1, 2, 2, 2, 3, 1, 1, 2]
    tables = [table_of(x, y), table_of(x, z), table_of(y, z)]
    parts = [information_agreement(t) for t in tables]
    expected = sum(2 * p.information for p in parts) / sum(p.entropy_first + p.entropy_second for p in parts)
    assert information_agreement_many(tables) == pytest.approx(expected)
    assert information_agreement_many(tables[:1]) == pytest.approx(parts[0].p_i)


def test_undefined_cases_are_nan_with_a_reason():
    with pytest.warns(UndefinedMeasureWarning, match="single category"):
        assert np.isnan(information_agreement([[4, 0], [0, 0]]).p_i)
    with pytest.warns(UndefinedMeasureWarning, match="no item"):
        assert np.isnan(information_agreement(np.zeros((2, 2))).p_i)
    with pytest.warns(UndefinedMeasureWarning, match="no pair"):
        assert np.isnan(information_agreement_many([]))
    with pytest.raises(ValueError, match="between 0 and 1"):
        information_agreement(np.eye(2), weights=[[2, 0], [0, 1]])


@given(contingency_tables())
def test_p_i_is_symmetric_in_the_coders(table):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UndefinedMeasureWarning)
        a, b = information_agreement(table).p_i, information_agreement(table.T).p_i
    assert (np.isnan(a) and np.isnan(b)) or a == pytest.approx(b, abs=1e-9)


@given(contingency_tables(), st.randoms())
def test_p_i_is_invariant_under_renaming_categories(table, rnd):
    order = list(range(table.shape[0]))
    rnd.shuffle(order)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UndefinedMeasureWarning)
        a, b = information_agreement(table).p_i, information_agreement(table[np.ix_(order, order)]).p_i
    assert (np.isnan(a) and np.isnan(b)) or a == pytest.approx(b, abs=1e-9)


@given(contingency_tables())
def test_zero_diagonal_gives_zero(table):
    # Klemens 2012: "if two raters disagree on all observations ... P_I = 0".
    np.fill_diagonal(table, 0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UndefinedMeasureWarning)
        p_i = information_agreement(table).p_i
    assert np.isnan(p_i) or p_i == 0.0
