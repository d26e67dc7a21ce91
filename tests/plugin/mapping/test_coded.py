"""Rows as codes give what the statistics core makes of the same rows as a table."""

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from agreement import annotator_labels, label_counts
from plugin.mapping.coded import CodedRows
from plugin.mapping.item_names import split_item_names
from tests.profiles import examples

LABELS = ("b", "a", None, "c")  # by code: a missing label among them, not in sorted order
ANNOTATORS = ("zoe", "10", "ann", "2")


def coded_and_table(rows: list[tuple[int, int, int]], kinds: tuple[str, ...] = (":x",)
                    ) -> tuple[CodedRows, pd.DataFrame]:
    """Rows ``(item, annotator, label)`` as codes, and as the table a report decodes from them."""
    item = np.array([r[0] for r in rows], dtype=np.intp)
    n_items = int(item.max()) + 1 if len(item) else 0
    item_kinds = np.arange(n_items) % len(kinds)
    coded = CodedRows(item=item, annotator=np.array([r[1] for r in rows], dtype=np.intp),
                      label=np.array([r[2] for r in rows], dtype=np.intp), labels=LABELS, annotators=ANNOTATORS,
                      item_kinds=item_kinds, kinds=kinds)
    table = pd.DataFrame({"item": [f"{r[0]}{kinds[item_kinds[r[0]]]}" for r in rows],
                          "annotator": [ANNOTATORS[r[1]] for r in rows],
                          "label": pd.Series([LABELS[r[2]] for r in rows], dtype=object)})
    return coded, table


def distinct_pairs(draw_rows: list[tuple[int, int, int]]) -> list[tuple[int, int, int]]:
    """One label per item and annotator, in the order first given."""
    seen: dict[tuple[int, int], tuple[int, int, int]] = {}
    for row in draw_rows:
        seen.setdefault(row[:2], row)
    return list(seen.values())


ROWS = st.lists(st.tuples(st.integers(0, 6), st.integers(0, 3), st.integers(0, 3)), min_size=1, max_size=40).map(
    distinct_pairs)


@settings(max_examples=examples(80), deadline=None)
@given(ROWS)
def test_counts_and_annotator_labels_equal_the_tables(rows):
    coded, table = coded_and_table(rows)
    expected = label_counts(table)
    counts = coded.label_counts(None)
    np.testing.assert_array_equal(counts.counts, expected.counts)  # items in the order first seen
    assert counts.categories.tolist() == expected.categories.tolist()
    by_annotator, expected_labels = coded.annotator_labels(), annotator_labels(table)
    np.testing.assert_array_equal(by_annotator.codes, expected_labels.codes)
    assert by_annotator.annotators.tolist() == expected_labels.annotators.tolist()  # "10" < "2" < "ann" < "zoe"
    sparse, categories = coded.sparse_counts(None)
    np.testing.assert_array_equal(sparse.dense(), expected.counts)
    assert categories.tolist() == expected.categories.tolist()
    assert coded.n_rows == len(table) and coded.n_items() == table["item"].nunique()
    assert coded.n_annotators() == table["annotator"].nunique() and coded.n_labels() == table["label"].nunique()


def test_rows_out_of_item_order_keep_the_order_first_seen():
    coded, table = coded_and_table([(3, 0, 0), (1, 0, 1), (3, 1, 3), (0, 2, 0), (1, 3, 1)])
    np.testing.assert_array_equal(coded.label_counts(None).counts, label_counts(table).counts)
    np.testing.assert_array_equal(coded.item_order(), [3, 1, 0])


def test_the_config_categories_are_the_columns_and_a_label_outside_them_is_refused():
    coded, table = coded_and_table([(0, 0, 0), (0, 1, 1), (1, 0, 3)])
    counts = coded.label_counts(("c", "b", "a"))
    np.testing.assert_array_equal(counts.counts, label_counts(table, categories=("c", "b", "a")).counts)
    assert counts.counts.tolist() == [[0.0, 1.0, 1.0], [1.0, 0.0, 0.0]]
    with pytest.raises(ValueError, match="Labels outside the given categories: 'c'"):
        coded.label_counts(("a", "b"))


def test_an_annotator_twice_on_an_item_is_refused():
    coded, _ = coded_and_table([(0, 0, 0), (0, 0, 1)])
    with pytest.raises(ValueError, match="labeled an item more than once"):
        coded.annotator_labels()


def test_a_label_sets_items_are_read_from_their_names_without_the_task():
    kinds = (":PER", ":r1:Yes: sure", ":ORG")
    coded, table = coded_and_table([(0, 0, 0), (1, 0, 1), (2, 1, 0), (4, 2, 3)], kinds)
    names = split_item_names(table["item"].drop_duplicates().tolist(), ["PER", "ORG", "Yes: sure"])[1]
    assert coded.item_labels(["PER", "ORG", "Yes: sure"]).tolist() == names.tolist() == [
        "PER", "Yes: sure", "ORG", "Yes: sure"]


def test_ratings_are_typed_as_a_tables_column_is():
    coded = CodedRows(item=np.array([0, 0, 1]), annotator=np.array([0, 1, 0]), label=np.array([0, 1, 2]),
                      labels=(5, 3, None), annotators=("a", "b"), item_kinds=np.zeros(2, dtype=np.intp),
                      kinds=("",))
    table = pd.DataFrame({"item": ["1", "1", "2"], "annotator": ["a", "b", "a"], "label": [5, 3, None]})
    # beside a missing rating the column is float, as pandas types it, and so are the categories
    assert coded.label_counts(None).categories.tolist() == label_counts(table).categories.tolist() == [3.0, 5.0]
