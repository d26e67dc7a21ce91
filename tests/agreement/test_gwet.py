"""Gwet's AC1/AC2, Fleiss' kappa in Gwet's form, and weighted Cohen's kappa: published values, peers, properties."""

import json
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from hypothesis import given
from hypothesis import strategies as st
from sklearn.metrics import cohen_kappa_score

from agreement import (
    UndefinedMeasureWarning,
    agreement_weights,
    bootstrap_ci,
    cohen_kappa,
    fleiss_gwet,
    fleiss_kappa,
    gwet_ac,
    label_counts,
)

ROOT = Path(__file__).resolve().parents[2]
IRRCAC = json.loads((ROOT / "tests" / "data" / "irrcac_reference.json").read_text())
KRIPPENDORFF_2011 = label_counts(pd.read_csv(ROOT / "examples" / "krippendorff_2011.csv"))


def counts_of(ratings, categories):
    ratings = np.asarray(ratings)
    return np.stack([(ratings == c).sum(axis=1) for c in categories], axis=1)


def test_the_handbook_four_raters_example():
    # Gwet (2014), Handbook of Inter-Rater Reliability, 4th ed.: the 4 raters x 12 units with missing ratings
    # (Krippendorff's 2011 example, irrCAC's raw_4raters). Printed: AC1 = 0.77544, SE 0.14295, p_a = 0.81818,
    # p_e = 0.19032; Fleiss' kappa 0.76117, SE 0.15302; AC2 (quadratic weights) 0.914, SE 0.10396.
    ac1 = gwet_ac(KRIPPENDORFF_2011)
    assert (round(ac1.value, 5), round(ac1.std_error, 5)) == (0.77544, 0.14295)
    assert (round(ac1.observed, 5), round(ac1.expected, 5)) == (0.81818, 0.19032)
    fleiss = fleiss_gwet(KRIPPENDORFF_2011)
    assert (round(fleiss.value, 5), round(fleiss.std_error, 5)) == (0.76117, 0.15302)
    ac2 = gwet_ac(KRIPPENDORFF_2011, level="interval", values=[1, 2, 3, 4, 5])
    assert (round(ac2.value, 5), round(ac2.std_error, 5)) == (0.914, 0.10396)
    # The interval is the estimate -/+ t(0.975, 11) = 2.200985 standard errors, kept within [-1, 1]: Gwet's printed
    # 95% interval for AC1 on this example, and irrCAC's, is (0.461, 1); Fleiss' kappa's (0.424, 1); AC2's (0.685, 1).
    assert ac1.low == pytest.approx(0.77544 - 2.200985 * 0.14295, abs=1e-4) and ac1.high == 1.0
    assert (round(ac1.low, 3), round(fleiss.low, 3), round(ac2.low, 3)) == (0.461, 0.424, 0.685)


@pytest.mark.parametrize("dataset", ["random_4x25_missing", "raw_4raters"])
@pytest.mark.parametrize("weights", ["identity", "quadratic", "linear", "ordinal", "ratio"])
def test_equals_irrcac(dataset, weights):
    # Values recorded with irrCAC 0.4.4 by tests/data/irrcac_reference.py (its command is in that file).
    reference = IRRCAC[dataset]
    categories = reference["categories"]
    counts = counts_of(reference["ratings"], categories)
    for name, function in (("gwet", gwet_ac), ("fleiss", fleiss_gwet)):
        estimate = function(counts, weights=weights, values=categories)
        expected = reference[weights][name]
        assert estimate.value == pytest.approx(expected["value"], abs=6e-6), name
        assert estimate.std_error == pytest.approx(expected["se"], abs=6e-6), name
        assert estimate.observed == pytest.approx(expected["pa"], abs=6e-6), name
        assert estimate.expected == pytest.approx(expected["pe"], abs=6e-6), name
        # irrCAC's 95% interval: Student's t with n - 1 degrees of freedom, bounds within [-1, 1], 5 decimals.
        assert (estimate.low, estimate.high) == pytest.approx(expected["interval"], abs=6e-5), name


def test_fleiss_pooled_and_gwet_forms_agree_with_equal_ratings_and_differ_without():
    complete = np.array([[3, 0, 1], [2, 2, 0], [0, 4, 0], [1, 1, 2], [4, 0, 0]])
    assert fleiss_kappa(complete) == pytest.approx(fleiss_kappa(complete, method="gwet"), abs=1e-12)
    # With missing ratings (README and the docstring quote these two numbers).
    assert round(fleiss_kappa(KRIPPENDORFF_2011), 6) == 0.760766
    assert round(fleiss_kappa(KRIPPENDORFF_2011, method="gwet"), 6) == 0.761169
    with pytest.raises(ValueError, match="Unknown method"):
        fleiss_kappa(complete, method="mean")


def test_ac1_stays_high_where_kappa_collapses():
    # Di Eugenio & Glass 2004, the shape of Example 3: agreement on 18 of 20 items, nearly all in one category.
    counts = np.array([[2, 0]] * 18 + [[1, 1]] * 2)
    assert fleiss_kappa(counts) == pytest.approx(-0.052632, abs=1e-6)
    # p_e = T_w / (q (q - 1)) x sum pi (1 - pi) = (2 / 2) x (0.95 x 0.05 x 2) = 0.095
    assert gwet_ac(counts).value == pytest.approx((0.9 - 0.095) / (1 - 0.095))


def test_integer_and_float_counts_give_the_same_values():
    counts = KRIPPENDORFF_2011.counts
    for dtype in (np.int64, np.int32, np.uint8, np.float32):
        assert gwet_ac(counts.astype(dtype)).value == pytest.approx(gwet_ac(counts).value, abs=1e-12)


def test_undefined_is_nan_with_a_reason():
    with pytest.warns(UndefinedMeasureWarning, match="no item has two or more ratings"):
        assert np.isnan(gwet_ac([[1, 0], [0, 1]]).value)
    with pytest.warns(UndefinedMeasureWarning, match="chance agreement is 1"):
        assert np.isnan(fleiss_gwet([[2, 0], [3, 0]]).value)
    with pytest.raises(ValueError, match="finite and non-negative"):
        gwet_ac([[1, -1]])
    with pytest.raises(ValueError, match="ones on the"):
        agreement_weights(2, kind=[[1, 0.5], [0.5, 0.9]])


def test_bootstrap_and_analytic_intervals_agree_roughly():
    rng = np.random.default_rng(0)
    truth = rng.integers(0, 3, size=400)
    ratings = np.where(rng.random((400, 4)) < 0.8, truth[:, None], rng.integers(0, 3, size=(400, 4)))
    counts = counts_of(ratings, [0, 1, 2])
    analytic = gwet_ac(counts)
    bootstrap = bootstrap_ci(counts, "gwet", n_resamples=400, seed=1)
    assert bootstrap.estimate == pytest.approx(analytic.value)
    assert bootstrap.standard_error == pytest.approx(analytic.std_error, rel=0.25)


# --- weighted Cohen's kappa (Cohen 1968) ---

def test_weighted_kappa_by_hand_and_unweighted_unchanged():
    # By hand (see the docstring): quadratic disagreement weights 1/4 and 1; observed 0.075, chance 0.265.
    table = [[4, 1, 0], [1, 2, 1], [0, 0, 1]]
    assert cohen_kappa(table, weights="quadratic") == pytest.approx(1 - 0.075 / 0.265)
    assert cohen_kappa(table, weights=np.eye(3)) == pytest.approx(cohen_kappa(table))


@given(st.lists(st.tuples(st.integers(1, 5), st.integers(1, 5)), min_size=2, max_size=60),
       st.sampled_from(["linear", "quadratic"]))
def test_weighted_kappa_equals_scikit_learn(pairs, weights):
    first, second = zip(*pairs, strict=True)
    table = np.zeros((5, 5))
    for a, b in pairs:
        table[a - 1, b - 1] += 1
    used = sorted(set(first) | set(second))
    table = table[np.ix_([u - 1 for u in used], [u - 1 for u in used])]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        # scikit-learn weighs by the labels' positions in ``labels``: our default values, the ranks.
        ours = cohen_kappa(table, weights=weights)
        theirs = cohen_kappa_score(first, second, weights=weights, labels=used)
    assert (np.isnan(ours) and np.isnan(theirs)) or ours == pytest.approx(theirs, abs=1e-9)


# --- properties ---

count_matrices = st.integers(2, 5).flatmap(lambda q: st.lists(
    st.lists(st.integers(0, 4), min_size=q, max_size=q), min_size=2, max_size=30)).map(np.array)


@given(count_matrices, st.randoms(use_true_random=False))
def test_invariant_under_permuting_items_and_category_names(counts, rnd):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UndefinedMeasureWarning)
        base = gwet_ac(counts).value
        rows = list(range(counts.shape[0]))
        columns = list(range(counts.shape[1]))
        rnd.shuffle(rows)
        rnd.shuffle(columns)
        permuted = gwet_ac(counts[rows][:, columns]).value
        # AC2: permuting the categories together with their values changes nothing either.
        values = np.arange(1.0, counts.shape[1] + 1)
        ac2 = gwet_ac(counts, level="interval", values=values).value
        ac2_permuted = gwet_ac(counts[:, columns], level="interval", values=values[columns]).value
    assert (np.isnan(base) and np.isnan(permuted)) or base == pytest.approx(permuted, abs=1e-12)
    assert (np.isnan(ac2) and np.isnan(ac2_permuted)) or ac2 == pytest.approx(ac2_permuted, abs=1e-12)


@given(st.lists(st.tuples(st.integers(0, 3), st.integers(2, 5)), min_size=2, max_size=30),
       st.sampled_from(["nominal", "ordinal", "interval", "ratio"]))
def test_perfect_agreement_gives_one(items, level):
    counts = np.zeros((len(items), 4))
    for row, (category, raters) in enumerate(items):
        counts[row, category] = raters  # every rater of an item agrees; raters vary by item (missing ratings)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UndefinedMeasureWarning)
        value = gwet_ac(counts, level=level, values=[1, 2, 3, 4]).value
    assert np.isnan(value) or value == pytest.approx(1.0)
