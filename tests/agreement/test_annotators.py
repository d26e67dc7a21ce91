"""Annotator and label tables against values computed independently (loops over items, scikit-learn)."""

import warnings
from collections import Counter

import numpy as np
import pandas as pd
import pytest
from hypothesis import given
from hypothesis import strategies as st
from sklearn.metrics import cohen_kappa_score

from agreement.annotators import _with_majority, annotator_agreement, outlier_annotators, robust_outliers
from agreement.pairwise import annotator_labels

tables = st.lists(st.tuples(st.integers(0, 11), st.integers(0, 4), st.sampled_from("abc")), min_size=4,
                  max_size=60).map(lambda rows: pd.DataFrame(rows, columns=["item", "annotator", "label"])
                                   .drop_duplicates(["item", "annotator"]))


def brute_force(table):
    by_item = {item: dict(zip(g["annotator"], g["label"], strict=True)) for item, g in table.groupby("item")}
    out = {}
    for annotator in sorted(table["annotator"].unique()):
        weighted, weight = 0.0, 0
        for other in sorted(table["annotator"].unique()):
            if other == annotator:
                continue
            shared = [(v[annotator], v[other]) for v in by_item.values() if annotator in v and other in v]
            if not shared:
                continue
            first, second = zip(*shared, strict=True)
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                kappa = cohen_kappa_score(first, second, labels=["a", "b", "c"])
            if np.isnan(kappa):
                continue
            weighted += kappa * len(shared)
            weight += len(shared)
        hits = []
        for labels in by_item.values():
            if annotator not in labels:
                continue
            others = Counter(label for who, label in labels.items() if who != annotator)
            if sum(others.values()) < 2:
                continue
            ranked = others.most_common()
            if len(ranked) > 1 and ranked[0][1] == ranked[1][1]:
                continue  # no strict majority
            hits.append(ranked[0][0] == labels[annotator])
        out[annotator] = (weighted / weight if weight else np.nan, np.mean(hits) if hits else np.nan)
    return out


@given(tables)
def test_annotator_table_equals_a_brute_force_computation(table):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        result = annotator_agreement(table)
        # the same from the table arranged beforehand (a caller that also needs the pairs arranges it once)
        pd.testing.assert_frame_equal(annotator_agreement(annotator_labels(table)), result)
    for annotator, (pairwise, majority) in brute_force(table).items():
        row = result.loc[annotator]
        assert (np.isnan(pairwise) and np.isnan(row["mean_pairwise"])) or row["mean_pairwise"] == pytest.approx(
            pairwise, abs=1e-9)
        assert (np.isnan(majority) and np.isnan(row["with_majority"])) or row["with_majority"] == pytest.approx(
            majority, abs=1e-9)
        assert row["n_items"] == (table["annotator"] == annotator).sum()


def test_the_unreliable_annotator_is_the_outlier():
    rng = np.random.default_rng(0)
    truth = rng.integers(0, 3, size=300)
    rows = []
    for who, reliability in enumerate((0.95, 0.9, 0.9, 0.85, 0.9, 0.3)):
        labels = np.where(rng.random(300) < reliability, truth, rng.integers(0, 3, size=300))
        rows += [(i, f"u{who}", "abc"[label]) for i, label in enumerate(labels)]
    result = annotator_agreement(pd.DataFrame(rows, columns=["item", "annotator", "label"]))
    assert result.index[result["outlier"]].tolist() == ["u5"]
    assert result["mean_pairwise"].idxmin() == "u5" and result["with_majority"].idxmin() == "u5"


def test_robust_outliers_need_spread_and_three_values():
    assert not robust_outliers(pd.Series([0.5, 0.1])).any()
    assert not robust_outliers(pd.Series([0.5, 0.5, 0.5, 0.1])).any()  # MAD 0: no rule
    assert robust_outliers(pd.Series([0.9, 0.85, 0.88, 0.2, np.nan])).tolist() == [False, False, False, True, False]


@given(tables, st.integers(1, 8))
def test_majorities_counted_a_block_of_items_at_a_time_equal_counted_at_once(table, at_most):
    labels = annotator_labels(table)
    item, annotator, label = labels.rows
    options = {"n_annotators": len(labels.annotators), "n_categories": len(labels.categories)}
    whole = _with_majority(item, annotator, label, **options, at_most=len(item))
    blocks = _with_majority(item, annotator, label, **options, at_most=at_most)  # down to an item a block
    for once, in_blocks in zip(whole, blocks, strict=True):
        np.testing.assert_array_equal(in_blocks, once)
    # and what the whole gives is the brute force's share of majorities met
    for code, (_, majority) in enumerate(brute_force(table).values()):
        share = whole[1][code] / whole[2][code] if whole[2][code] else np.nan
        assert (np.isnan(majority) and np.isnan(share)) or share == pytest.approx(majority, abs=1e-12)


def test_an_annotator_below_chance_is_an_outlier_where_the_spread_hides_it():
    # five annotators as the demo's span control gives them: too spread for the MAD rule alone (median 0.10,
    # scaled MAD 0.178: nobody below -0.256), yet two agree with the others less often than chance would
    kappas = pd.Series([0.27, 0.19, 0.10, -0.02, -0.10], index=list("abcde"))
    assert not robust_outliers(kappas).any()
    assert outlier_annotators(kappas).tolist() == [False, False, False, True, True]
    # the MAD rule still finds one far below tightly agreeing others, and NaN is never an outlier
    assert outlier_annotators(pd.Series([0.9, 0.85, 0.88, 0.2, np.nan])).tolist() == [False, False, False, True,
                                                                                       False]
    assert not outlier_annotators(pd.Series([0.5, 0.45, np.nan])).any()


def test_the_annotator_who_flips_every_label_is_an_outlier_whatever_the_others_spread():
    rng = np.random.default_rng(1)
    truth = rng.integers(0, 2, size=200)
    rows = []
    for who, reliability in enumerate((0.9, 0.7, 0.5, 0.3)):  # the others spread wide: the MAD is large
        labels = np.where(rng.random(200) < reliability, truth, rng.integers(0, 2, size=200))
        rows += [(i, f"u{who}", "ab"[label]) for i, label in enumerate(labels)]
    rows += [(i, "flips", "ba"[label]) for i, label in enumerate(truth)]
    result = annotator_agreement(pd.DataFrame(rows, columns=["item", "annotator", "label"]))
    assert result.loc["flips", "mean_pairwise"] < 0
    assert result.index[result["outlier"]].tolist() == ["flips"]
