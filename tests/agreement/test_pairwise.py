"""Annotator-by-annotator matrices."""

import numpy as np
import pandas as pd
import pytest

from agreement import UndefinedMeasureWarning, annotator_labels, cohen_kappa, information_agreement, pairwise_matrix


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
