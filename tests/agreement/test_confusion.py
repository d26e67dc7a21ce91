"""Label confusions, specific agreement and label-set coincidences, against pair counting and sums by hand."""

import itertools
from collections import Counter

import numpy as np
import pandas as pd
import pytest
from hypothesis import given
from hypothesis import strategies as st

from agreement.confusion import confused_pairs, set_coincidences, specific_agreement


@given(st.lists(st.lists(st.integers(0, 3), min_size=3, max_size=3), min_size=1, max_size=25))
def test_confusions_and_specific_agreement_equal_pair_counting(rows):
    counts = np.array(rows, dtype=float)
    pairs = Counter()
    for row in counts:
        n = row.sum()
        if n < 2:
            continue
        values = [c for c, k in enumerate(row) for _ in range(int(k))]
        for i, j in itertools.permutations(range(len(values)), 2):  # ordered pairs of values within the item
            pairs[values[i], values[j]] += 1.0 / (n - 1)
    found = {(a, b): v for a, b, v in confused_pairs(counts, [0, 1, 2], top=10)}
    for a, b in itertools.combinations(range(3), 2):
        expected = pairs[a, b] + pairs[b, a]
        assert found.get((a, b), 0.0) == pytest.approx(expected)
    specific = specific_agreement(counts)
    for c in range(3):
        involved = sum(v for (a, b), v in pairs.items() if c in (a, b)) + pairs[c, c]
        expected = 2 * pairs[c, c] / involved if involved else np.nan
        assert (np.isnan(expected) and np.isnan(specific[c])) or specific[c] == pytest.approx(expected)


@given(st.lists(st.lists(st.integers(0, 3), min_size=5, max_size=5), min_size=1, max_size=25), st.integers(1, 6))
def test_confused_pairs_rank_as_exact_sums_do(rows, top):
    # o_ck + o_kc summed as fractions: the largest first, ties (frequent: 1/(n-1) shares) in the labels' order,
    # whatever order the floating-point sums were taken in
    from fractions import Fraction

    exact = Counter()
    for row in rows:
        n = sum(row)
        for c, k in itertools.combinations(range(5), 2):
            if n >= 2 and row[c] and row[k]:
                exact[c, k] += Fraction(2 * row[c] * row[k], n - 1)
    want = sorted(exact, key=lambda pair: (-exact[pair], pair))[:top]
    assert [(c, k) for c, k, _ in confused_pairs(np.array(rows, dtype=float), list(range(5)), top=top)] == want


def test_specific_agreement_of_two_raters_is_positive_and_negative_agreement():
    # items (x, y counts): both "x"; split; both "y"; both "y"; and one item with a single rating (not pairable).
    # x: 2a / (2a + b + c) with a = 1 item both x, b + c = 1 split item: 2 / 3
    # y: a = 2 items both y, one split: 4 / 5
    counts = [[2, 0], [1, 1], [0, 2], [0, 2], [1, 0]]
    assert specific_agreement(counts).tolist() == pytest.approx([2 / 3, 4 / 5])
    # a label no pairable item holds has no specific agreement
    assert np.isnan(specific_agreement([[2, 0, 0], [1, 0, 1]])[1])


def test_confused_pairs_by_hand():
    # item 1: x, x, y (3 ratings, weight 1/2): ordered pairs (x, y) twice and (y, x) twice -> o_xy + o_yx = 4/2 = 2
    # item 2: y, z (weight 1): o_yz + o_zy = 2; item 3: x, z (weight 1): o_xz + o_zx = 2; item 4: y, y: no confusion
    counts = [[2, 1, 0], [0, 1, 1], [1, 0, 1], [0, 2, 0]]
    assert confused_pairs(counts, ["x", "y", "z"]) == [("x", "y", 2.0), ("x", "z", 2.0), ("y", "z", 2.0)]
    assert confused_pairs(counts, ["x", "y", "z"], top=1) == [("x", "y", 2.0)]


def test_set_coincidences_spread_each_pair_over_both_sets():
    # item 1: a chose {x}, b chose {x, y}; r = 2, weight 1.
    #   (a, b): {x} x {x, y}, 1/2 each: xx 1/2, xy 1/2; (b, a): xx 1/2, yx 1/2  ->  xx 1, xy 1/2, yx 1/2
    # item 2: a {y}, b {y}, c {x}; r = 3, weight 1/2. Ordered pairs: (a, b), (b, a): yy 2; (a, c), (b, c): yx 2;
    #   (c, a), (c, b): xy 2  ->  yy 1, yx 1, xy 1
    # item 3: a alone: no pair.  Total [[1, 1.5], [1.5, 1]]: 5, the annotations on items with two or more
    chosen = pd.DataFrame({"item": [1, 1, 1, 2, 2, 2, 3], "annotator": ["a", "b", "b", "a", "b", "c", "a"],
                           "label": ["x", "x", "y", "y", "y", "x", "x"]})
    matrix = set_coincidences(chosen, ["x", "y"])
    np.testing.assert_allclose(matrix, [[1.0, 1.5], [1.5, 1.0]])
    np.testing.assert_allclose(set_coincidences(chosen, ["y", "x"]), [[1.0, 1.5], [1.5, 1.0]])
    assert set_coincidences(chosen.iloc[:0], ["x", "y"]).tolist() == [[0.0, 0.0], [0.0, 0.0]]
    with pytest.raises(ValueError, match="not among the categories"):
        set_coincidences(chosen, ["x"])
