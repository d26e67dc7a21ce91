"""Converters from long and wide annotation tables to count matrices and contingency tables."""

import subprocess
import sys
import warnings

import numpy as np
import pandas as pd
import pytest
from hypothesis import given
from hypothesis import strategies as st

from agreement import (
    UndefinedMeasureWarning,
    aggregate_raters,
    contingency_table,
    fleiss_kappa,
    krippendorff_alpha,
    label_counts,
    spa,
)
from agreement.counts import as_count_matrix


def test_long_table_to_counts():
    table = pd.DataFrame({"item": ["t1", "t1", "t2", "t2", "t2", "t3"],
                          "annotator": ["a", "b", "a", "b", "c", "a"],
                          "label": ["pos", "neg", "pos", "pos", "neu", None]})
    counts = label_counts(table)
    assert list(counts.items) == ["t1", "t2", "t3"]
    assert list(counts.categories) == ["neg", "neu", "pos"]
    np.testing.assert_array_equal(counts.counts, [[1, 0, 1], [0, 1, 2], [0, 0, 0]])
    assert counts.n_annotations == 5


def test_given_categories_fix_the_columns_and_reject_unknown_labels():
    table = pd.DataFrame({"item": [1, 1], "annotator": ["a", "b"], "label": ["x", "y"]})
    counts = label_counts(table, categories=["y", "z", "x"])
    np.testing.assert_array_equal(counts.counts, [[1, 0, 1]])
    with pytest.raises(ValueError, match="Labels outside the given categories: 'y'"):
        label_counts(table, categories=["x"])


def test_one_label_per_annotator_and_item():
    table = pd.DataFrame({"item": [1, 1], "annotator": ["a", "a"], "label": ["x", "y"]})
    with pytest.raises(ValueError, match="Annotator 'a' labeled item 1 more than once"):
        label_counts(table)


def test_missing_columns_are_named():
    with pytest.raises(ValueError, match="no column 'label'; its columns are: item, annotator"):
        label_counts(pd.DataFrame({"item": [1], "annotator": ["a"]}))


def test_numeric_categories_are_sorted_and_exposed_as_values():
    table = pd.DataFrame({"item": [1, 1, 2], "annotator": ["a", "b", "a"], "label": [10, 2, 5]})
    counts = label_counts(table)
    np.testing.assert_array_equal(counts.numeric_values(), [2, 5, 10])


def test_wide_table_with_missing_values():
    counts = aggregate_raters([[1, 1, np.nan], [2, np.nan, np.nan], [np.nan, np.nan, np.nan]])
    np.testing.assert_array_equal(counts.counts, [[2, 0], [0, 1], [0, 0]])


def test_contingency_table_skips_items_either_coder_left_out():
    table = contingency_table(["a", "b", None, "a"], ["a", "a", "b", None])
    assert table.loc["a", "a"] == 1 and table.loc["b", "a"] == 1 and table.to_numpy().sum() == 2
    with pytest.raises(ValueError, match="differ in length"):
        contingency_table(["a"], ["a", "b"])


def test_the_statistics_import_nothing_of_label_studio():
    # ARCHITECTURE: agreement/ imports nothing from plugin/ and nothing of Label Studio.
    code = ("import sys, agreement, agreement.cli; "
            "bad = [m for m in sys.modules if m.split('.')[0] in ('plugin', 'label_studio', 'label_studio_sdk')]; "
            "assert not bad, bad")
    subprocess.run([sys.executable, "-c", code], check=True)


@given(st.lists(st.lists(st.integers(0, 3), min_size=3, max_size=3), min_size=2, max_size=40))
def test_integer_counts_are_read_as_they_come_with_the_same_values(rows):
    """np.bincount and pandas give int64 counts: no float copy is made, and every measure agrees."""
    integers = np.array(rows, dtype=np.int64)
    assert as_count_matrix(integers) is integers or as_count_matrix(integers).base is integers
    floats = integers.astype(np.float64)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UndefinedMeasureWarning)
        for measure in (lambda x: krippendorff_alpha(x), lambda x: krippendorff_alpha(x, level="interval"),
                        lambda x: krippendorff_alpha(x, level="ordinal"), spa, fleiss_kappa):
            a, b = measure(integers), measure(floats)
            assert (np.isnan(a) and np.isnan(b)) or a == pytest.approx(b, abs=1e-12)
