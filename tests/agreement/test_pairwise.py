"""Annotator-by-annotator matrices."""

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from agreement import UndefinedMeasureWarning, annotator_labels, cohen_kappa, information_agreement, pairwise_matrix
from agreement.kappa import table_measure_batch
from tests.profiles import examples


def test_each_cell_is_the_measure_of_that_pair():
    rng = np.random.default_rng(3)
    truth = rng.integers(0, 3, size=60)
    rows = []
    for name, accuracy in (("ann", 0.9), ("bob", 0.7), ("cat", 0.5)):
        noisy = np.where(rng.random(60) < accuracy, truth, rng.integers(0, 3, size=60))
        seen = rng.random(60) < 0.8
        rows += [(i, name, int(label)) for i, label in enumerate(noisy) if seen[i]]
    labels = annotator_labels(pd.DataFrame(rows, columns=["item", "annotator", "label"]))
    result = pairwise_matrix(labels, measure="cohen")
    for i in range(3):
        for j in range(3):
            if i != j:
                assert result.values.iloc[i, j] == pytest.approx(cohen_kappa(labels.table(i, j)))
                assert result.n_items.iloc[i, j] == labels.table(i, j).sum()
    assert np.isnan(np.diag(result.values)).all()
    assert result.values.loc["ann", "bob"] > result.values.loc["bob", "cat"]
    p_i = pairwise_matrix(labels, measure="information").values
    assert p_i.loc["ann", "cat"] == pytest.approx(information_agreement(labels.table(0, 2)).p_i)


def test_pairs_without_common_items_are_nan_with_one_warning():
    table = pd.DataFrame({"item": [1, 1, 2, 2, 3], "annotator": ["a", "b", "a", "b", "c"],
                          "label": ["x", "x", "y", "y", "x"]})
    with pytest.warns(UndefinedMeasureWarning, match="undefined for 2 of 3 annotator pairs"):
        result = pairwise_matrix(annotator_labels(table))
    assert result.values.loc["a", "b"] == 1.0
    assert np.isnan(result.values.loc["a", "c"]) and result.n_items.loc["a", "c"] == 0


def test_unknown_measure_is_a_clear_error():
    labels = annotator_labels(pd.DataFrame({"item": [1], "annotator": ["a"], "label": ["x"]}))
    with pytest.raises(ValueError, match="Unknown two-rater measure 'kendall'"):
        pairwise_matrix(labels, measure="kendall")


@settings(max_examples=examples(80), deadline=None)
@given(st.lists(st.tuples(st.integers(0, 15), st.sampled_from(["a", "b", "c"]), st.sampled_from("wxyz")),
                min_size=1, max_size=60, unique_by=lambda r: (r[0], r[1])))
def test_measures_from_codes_equal_the_measures_of_the_pair_table(rows):
    # The codes path (O(items + labels), for free text) against the contingency-table path it replaces.
    labels = annotator_labels(pd.DataFrame(rows, columns=["item", "annotator", "label"]))
    for a in range(len(labels.annotators)):
        for b in range(a + 1, len(labels.annotators)):
            table = labels.table(a, b)[None]
            found = labels.measures(a, b)
            assert found["n_items"] == table.sum()
            for name in ("cohen", "scott", "pabak", "percent"):
                with np.errstate(all="ignore"):
                    expected = float(table_measure_batch(table, measure=name)[0])
                assert (np.isnan(expected) and np.isnan(found[name])) or found[name] == pytest.approx(expected)


@settings(max_examples=examples(80), deadline=None)
@given(st.lists(st.tuples(st.integers(0, 15), st.sampled_from(["a", "b", "c", "d"]), st.sampled_from("wxyz")),
                min_size=1, max_size=60, unique_by=lambda r: (r[0], r[1])))
def test_every_pair_at_once_equals_each_pair_table(rows):
    # pair_measures and pair_tables take every pair from each item's labels at once; each pair's contingency
    # table (Cohen 1960) and the measures of that table are the definition they must equal.
    labels = annotator_labels(pd.DataFrame(rows, columns=["item", "annotator", "label"]))
    measured, tables = labels.pair_measures(), labels.pair_tables()
    expected_pairs = [(a, b) for a in range(len(labels.annotators)) for b in range(a + 1, len(labels.annotators))
                      if labels.table(a, b).sum() > 0]
    assert list(zip(measured["first"], measured["second"], strict=True)) == expected_pairs
    assert len(tables) == len(expected_pairs)
    for at, (a, b) in enumerate(expected_pairs):
        table = labels.table(a, b)
        np.testing.assert_array_equal(tables[at], table)
        assert measured["n_items"].iloc[at] == table.sum()
        for name in ("cohen", "scott", "pabak", "percent"):
            with np.errstate(all="ignore"):
                want = float(table_measure_batch(table[None], measure=name)[0])
            got = measured[name].iloc[at]
            assert (np.isnan(want) and np.isnan(got)) or got == pytest.approx(want, abs=1e-12)


def test_narrow_codes_of_many_categories_make_the_same_tables():
    # 300 labels: codes fit int16, but a code times 300 does not
    rng = np.random.default_rng(5)
    labels = rng.integers(0, 300, size=(400, 2))
    labels[:, 1] = np.where(rng.random(400) < 0.5, labels[:, 0], labels[:, 1])
    table = pd.DataFrame({"item": np.repeat(np.arange(400), 2), "annotator": ["a", "b"] * 400,
                          "label": labels.ravel()})
    arranged = annotator_labels(table, categories=np.arange(300))
    assert arranged.codes.dtype == np.int16 and arranged.rows[0].dtype == np.int16
    expected = np.zeros((300, 300))
    np.add.at(expected, (labels[:, 0], labels[:, 1]), 1)
    np.testing.assert_array_equal(arranged.table(0, 1), expected)
    np.testing.assert_array_equal(arranged.pair_tables()[0], expected)
    assert arranged.measures(0, 1)["percent"] == pytest.approx(float(np.mean(labels[:, 0] == labels[:, 1])))
