"""Annotators against a reference: Wilson's interval, kappa's standard error, per-annotator tables."""

import warnings

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn.metrics import cohen_kappa_score
from statsmodels.stats.inter_rater import cohens_kappa
from statsmodels.stats.proportion import proportion_confint

from agreement.gwet import agreement_weights
from agreement.reference import REFERENCE_COLUMNS, against_reference, kappa_estimate, wilson_interval
from agreement.undefined import UndefinedMeasureWarning
from tests.profiles import examples


def test_wilson_by_hand_and_against_statsmodels():
    # Newcombe (1998), "Two-sided confidence intervals for the single proportion", table I: 81/263 -> 0.2553-0.3662,
    # 15/148 -> 0.0624-0.1605, 0/20 -> 0-0.1611, 1/29 -> 0.0061-0.1718.
    low, high = wilson_interval([81, 15, 0, 1], [263, 148, 20, 29])
    assert np.round(low, 4).tolist() == [0.2553, 0.0624, 0.0, 0.0061]
    assert np.round(high, 4).tolist() == [0.3662, 0.1605, 0.1611, 0.1718]
    for k, n in ((3, 7), (50, 50), (12, 340)):
        expected = proportion_confint(k, n, alpha=0.1, method="wilson")
        assert wilson_interval(k, n, confidence=0.9) == pytest.approx(expected, abs=1e-12)
    assert np.isnan(wilson_interval(0, 0)[0])


@settings(max_examples=examples(80), deadline=None)
@given(st.lists(st.integers(0, 9), min_size=9, max_size=9), st.booleans())
def test_kappa_and_its_standard_error_equal_statsmodels(cells, weighted):
    table = np.array(cells, dtype=float).reshape(3, 3)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UndefinedMeasureWarning)
        ours = kappa_estimate(table, weights=agreement_weights(3, kind="quadratic") if weighted else None)
    rows, cols = table.sum(axis=1) / max(table.sum(), 1), table.sum(axis=0) / max(table.sum(), 1)
    weights = agreement_weights(3, kind="quadratic") if weighted else np.eye(3)
    if table.sum() == 0 or rows @ weights @ cols >= 1 - 1e-12:
        assert np.isnan(ours.value)
        return
    with warnings.catch_warnings(), np.errstate(all="ignore"):  # statsmodels' kappa_max divides by zero here
        warnings.simplefilter("ignore", RuntimeWarning)
        theirs = cohens_kappa(table, wt="quadratic") if weighted else cohens_kappa(table)
    assert ours.value == pytest.approx(theirs.kappa, abs=1e-9)
    if min((rows > 0).sum(), (cols > 0).sum()) < 2:  # one side one label: kappa 0 by construction, no interval
        assert ours.value == pytest.approx(0.0, abs=1e-12) and np.isnan([ours.std_error, ours.low, ours.high]).all()
        return
    if np.isnan(theirs.std_kappa):  # a variance of zero rounded below it: statsmodels takes its root, we keep 0
        assert ours.std_error == pytest.approx(0.0, abs=1e-6)
        return
    assert ours.std_error == pytest.approx(theirs.std_kappa, abs=1e-9)
    assert (ours.low, ours.high) == pytest.approx((max(-1, theirs.kappa_low), min(1, theirs.kappa_upp)), abs=1e-9)


def test_one_label_on_one_side_is_kappa_zero_with_an_undefined_interval_and_a_reason():
    # the demo's sentiment annotator against a ground truth of one label: kappa 0 by construction (Cohen 1960:
    # observed agreement equals chance agreement when a margin is constant); before, (-0.000, 0.000) was shown
    with pytest.warns(UndefinedMeasureWarning, match="the reference gave one label only over 12 items"):
        estimate = kappa_estimate([[7, 0], [5, 0]])
    assert estimate.value == 0.0 and np.isnan([estimate.std_error, estimate.low, estimate.high]).all()
    assert estimate.n_items == 12


def test_annotators_against_a_reference_by_hand_and_against_scikit_learn():
    rng = np.random.default_rng(5)
    truth = rng.integers(1, 6, size=60)
    rows, expected = [], {}
    for who, noise in (("a", 0.1), ("b", 0.4), ("c", 0.8)):
        given_labels = np.where(rng.random(60) < noise, rng.integers(1, 6, size=60), truth)
        keep = rng.random(60) < 0.8
        rows += [(i, who, int(v)) for i, v in zip(np.flatnonzero(keep), given_labels[keep], strict=True)]
        expected[who] = (truth[keep], given_labels[keep])
    labels = pd.DataFrame(rows, columns=["item", "annotator", "label"])
    reference = pd.DataFrame({"item": np.arange(60), "label": truth})
    nominal = against_reference(labels, reference).set_index("annotator")
    ordered = against_reference(labels, reference, level="interval", values=[1, 2, 3, 4, 5],
                                categories=[1, 2, 3, 4, 5]).set_index("annotator")
    assert list(nominal.reset_index().columns) == list(REFERENCE_COLUMNS)
    for who, (t, g) in expected.items():
        assert nominal.loc[who, "n_items"] == len(t)
        assert nominal.loc[who, "accuracy"] == pytest.approx(np.mean(t == g))
        assert nominal.loc[who, "agreement"] == nominal.loc[who, "accuracy"]
        assert nominal.loc[who, "kappa"] == pytest.approx(cohen_kappa_score(g, t))
        assert ordered.loc[who, "kappa"] == pytest.approx(cohen_kappa_score(g, t, weights="quadratic"))
        # Quadratic (interval) agreement weights: 1 - ((x - y) / 4)^2.
        assert ordered.loc[who, "agreement"] == pytest.approx(np.mean(1 - ((g - t) / 4.0) ** 2))
    assert nominal.loc["a", "kappa"] > nominal.loc["b", "kappa"] > nominal.loc["c", "kappa"]
    with pytest.raises(ValueError, match="one label per item"):
        against_reference(labels, pd.concat([reference, reference]))
    assert against_reference(labels, reference.iloc[:0]).empty


@settings(max_examples=examples(60), deadline=None)
@given(st.lists(st.tuples(st.integers(0, 3), st.sampled_from("abc")), min_size=2, max_size=30))
def test_identical_to_the_reference_scores_one_and_renaming_changes_nothing(pairs):
    items = list(range(len(pairs)))
    truth = pd.DataFrame({"item": items, "label": [p[0] for p in pairs]})
    labels = pd.DataFrame({"item": items, "annotator": [p[1] for p in pairs], "label": [p[0] for p in pairs]})
    table = against_reference(labels, truth)
    assert (table["accuracy"] == 1.0).all() and (table["accuracy_high"] == 1.0).all()
    varied = table[[labels[labels["annotator"] == a]["label"].nunique() > 1 for a in table["annotator"]]]
    assert varied["kappa"].tolist() == pytest.approx([1.0] * len(varied))
    renamed = against_reference(labels.assign(label=labels["label"].map(lambda v: f"L{3 - v}"),
                                              annotator=labels["annotator"].str.upper()),
                                truth.assign(label=truth["label"].map(lambda v: f"L{3 - v}")))
    pd.testing.assert_frame_equal(table.drop(columns="annotator"), renamed.drop(columns="annotator"))
