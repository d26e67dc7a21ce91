"""Augmented kappa for multiply labeled items (Rosenberg & Binkowski 2004)."""

import numpy as np
import pandas as pd
import pytest
from hypothesis import given
from hypothesis import strategies as st

from agreement import (
    augmented_item_kappa,
    augmented_kappa,
    augmented_sweep,
    bootstrap_ci,
    classify_items,
    cohen_kappa,
    contingency_table,
    ranked_labels,
)


def long_table(annotations):
    """{annotator: [(primary, secondary or None), ...]} -> item, annotator, label, rank rows."""
    rows = []
    for annotator, labels in annotations.items():
        for i, (primary, secondary) in enumerate(labels, 1):
            rows.append((f"msg{i}", annotator, primary, 1))
            if secondary is not None:
                rows.append((f"msg{i}", annotator, secondary, 2))
    return pd.DataFrame(rows, columns=["item", "annotator", "label", "rank"])


# Rosenberg & Binkowski 2004, Table 1 (annotator A); B is built so that each message shows one of the paper's
# partial-agreement cases.
A = [("a", "b"), ("b", "a"), ("b", None), ("c", None), ("c", "b"), ("d", None)]
B = [("a", None), ("a", "b"), ("b", None), ("c", "d"), ("b", "c"), ("a", None)]
RANKED = ranked_labels(long_table({"A": A, "B": B}), categories=["a", "b", "c", "d"])


def test_table_2_annotation_matrix_and_table_3_frequencies():
    # Rosenberg & Binkowski 2004, Tables 1-3: M_A at p = 0.6 over messages 1-5, column totals 1, 2.4, 1.6, 0 and Freq_A.
    table_1 = ranked_labels(long_table({"A": A[:5]}), categories=["a", "b", "c", "d"])
    m = table_1.matrix(0, p=0.6)
    np.testing.assert_allclose(m, [[0.6, 0.4, 0, 0], [0.4, 0.6, 0, 0], [0, 1, 0, 0], [0, 0, 1, 0], [0, 0.4, 0.6, 0]])
    np.testing.assert_allclose(m.sum(axis=0), [1, 2.4, 1.6, 0])
    np.testing.assert_allclose(m.sum(axis=0) / 5, [0.2, 0.48, 0.32, 0])


@pytest.mark.parametrize("p", [1.0, 0.8, 0.6, 0.5])
def test_kappa_by_hand(p):
    # Per message sum(M_A * M_B): p, 2p(1-p), 1, p, 2p(1-p), 0. Freq_A = (2, 3-p, 1+p, 1-... ) / 6, see below.
    ma, mb = RANKED.matrix(0, p=p), RANKED.matrix(1, p=p)
    observed = (p + 2 * p * (1 - p) + 1 + p + 2 * p * (1 - p) + 0) / 6
    freq_a = np.array([1, 3 - p, 1 + p, 1]) / 6  # a: p + (1-p); b: (1-p) + p + 1 + (1-p); c: 1 + p; d: 1
    freq_b = np.array([1 + p + 1, 2, 1, 1 - p]) / 6  # a: 1 + p + 1; b: (1-p) + 1 + p; c: p + (1-p); d: 1-p
    expected = freq_a @ freq_b
    result = augmented_kappa(ma, mb)
    assert result.observed == pytest.approx(observed)
    assert result.expected == pytest.approx(expected)
    assert result.kappa == pytest.approx((observed - expected) / (1 - expected))
    assert augmented_sweep(RANKED, ps=[p]).iloc[0] == pytest.approx(result.kappa)


def test_per_item_kappa_averages_to_the_corpus_kappa():
    for p in (1.0, 0.5):
        items = augmented_item_kappa(RANKED, p=p)
        assert items.mean() == pytest.approx(augmented_sweep(RANKED, ps=[p]).iloc[0])


def test_the_four_item_classes():
    # Rosenberg & Binkowski 2004, section 6: {ab, a} and {c, cd}: agreement on the primary (better at p=1.0); {ab, ba}
    # and {cb, bc}: primary and secondary swapped (better at p=0.5); {b, b}: constant high; {d, a}: constant low.
    classes = classify_items(RANKED)["item_class"]
    assert list(classes) == ["better at p=1.0", "better at p=0.5", "constant high", "better at p=1.0",
                             "better at p=0.5", "constant low"]


def test_p_one_ignores_secondaries_and_equals_cohen_on_primaries():
    primaries_a = [a for a, _ in A]
    primaries_b = [b for b, _ in B]
    table = contingency_table(primaries_a, primaries_b, labels=["a", "b", "c", "d"])
    assert augmented_sweep(RANKED, ps=[1.0]).iloc[0] == pytest.approx(cohen_kappa(table))


@given(st.lists(st.tuples(st.integers(0, 3), st.integers(0, 4), st.integers(0, 3), st.integers(0, 4)),
                min_size=3, max_size=30))
def test_p_one_equals_cohen_on_random_primaries(rows):
    # A secondary equal to 4 means "none"; a secondary equal to the primary is skipped too.
    data = {"A": [(p, s if s not in (4, p) else None) for p, s, _, _ in rows],
            "B": [(p, s if s not in (4, p) else None) for _, _, p, s in rows]}
    ranked = ranked_labels(long_table(data), categories=[0, 1, 2, 3])
    table = contingency_table([p for p, _ in data["A"]], [p for p, _ in data["B"]], labels=[0, 1, 2, 3])
    import warnings

    from agreement import UndefinedMeasureWarning

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UndefinedMeasureWarning)
        a, b = augmented_sweep(ranked, ps=[1.0]).iloc[0], cohen_kappa(table)
    assert (np.isnan(a) and np.isnan(b)) or a == pytest.approx(b)


def test_three_annotators_average_over_pairs():
    # Rosenberg & Binkowski 2004, section 6 averages kappa' "across the three annotators".
    C = [("a", None), ("b", "a"), ("b", None), ("c", None), ("c", None), ("d", None)]
    ranked = ranked_labels(long_table({"A": A, "B": B, "C": C}), categories=["a", "b", "c", "d"])
    pairs = [(0, 1), (0, 2), (1, 2)]
    by_hand = np.mean([augmented_kappa(ranked.matrix(i, p=0.7), ranked.matrix(j, p=0.7)).kappa for i, j in pairs])
    assert augmented_sweep(ranked, ps=[0.7]).iloc[0] == pytest.approx(by_hand)


def test_bootstrap_of_the_augmented_kappa():
    x = np.hstack([RANKED.matrix(0, p=0.5), RANKED.matrix(1, p=0.5)])
    ci = bootstrap_ci(x, "augmented", n_resamples=500, seed=2)
    assert ci.estimate == pytest.approx(augmented_kappa(RANKED.matrix(0, p=0.5), RANKED.matrix(1, p=0.5)).kappa)
    assert ci.low <= ci.estimate <= ci.high


def test_bad_input_is_a_clear_error():
    with pytest.raises(ValueError, match="p must lie between 0.5 and 1"):
        RANKED.matrix(0, p=0.4)
    with pytest.raises(ValueError, match="rank must be 1"):
        ranked_labels(pd.DataFrame({"item": [1], "annotator": ["a"], "label": ["x"], "rank": [3]}))
    with pytest.raises(ValueError, match="secondary label but no primary"):
        ranked_labels(pd.DataFrame({"item": [1], "annotator": ["a"], "label": ["x"], "rank": [2]}))
    with pytest.raises(ValueError, match="two labels of rank 1"):
        ranked_labels(pd.DataFrame({"item": [1, 1], "annotator": ["a", "a"], "label": ["x", "y"], "rank": [1, 1]}))
    with pytest.raises(ValueError, match="no column 'rank'"):
        ranked_labels(pd.DataFrame({"item": [1], "annotator": ["a"], "label": ["x"]}))


def test_a_difference_of_exactly_the_tolerance_is_one_class_whatever_the_rounding():
    # 0.1 + 0.2 - 0.2 is 0.10000000000000003 and 0.3 - 0.2 is 0.09999999999999998: the same kappa' reached by sums
    # in another order (the live sums, the batch) must give the same class, "nearly constant" at the bound
    from agreement.augmented import item_classes

    assert item_classes([0.1 + 0.2], [0.2]).tolist() == item_classes([0.3], [0.2]).tolist() == ["constant low"]
    assert item_classes([0.65 + 0.05], [0.6]).tolist() == item_classes([0.7], [0.6]).tolist() == ["constant high"]


@given(st.lists(st.tuples(st.integers(0, 7), st.integers(0, 4), st.integers(0, 2), st.integers(0, 3)),
                min_size=1, max_size=60, unique_by=lambda r: (r[0], r[1])),
       st.sampled_from([1.0, 0.9, 0.7, 0.5]))
def test_pair_sums_equal_the_annotation_matrices(rows, p):
    # The sweep and the per-item kappa' are computed from the labels given, pair by pair; here each pair's kappa'
    # and each item's mean are computed as Rosenberg & Binkowski (2004) define them, from the dense matrices M of
    # sections 5.1-5.3. A row is (item, annotator, primary, secondary): secondary 3 means none; equal to the primary, it
    # adds 1 - p.
    long = [(f"x{i}", f"a{a}", first, 1) for i, a, first, _ in rows]
    long += [(f"x{i}", f"a{a}", second, 2) for i, a, _, second in rows if second < 3]
    ranked = ranked_labels(pd.DataFrame(long, columns=["item", "annotator", "label", "rank"]))
    n_annotators, n_items = len(ranked.annotators), len(ranked.items)
    pair_kappas, item_sums, item_counts = [], np.zeros(n_items), np.zeros(n_items)
    for a in range(n_annotators):
        for b in range(a + 1, n_annotators):
            both = ranked.rated(a) & ranked.rated(b)
            if not both.any():
                continue
            ma, mb = ranked.matrix(a, p=p)[both], ranked.matrix(b, p=p)[both]
            expected = (ma.sum(axis=0) / both.sum()) @ (mb.sum(axis=0) / both.sum())
            if expected >= 1.0 - 1e-12:
                continue
            per_item = ((ma * mb).sum(axis=1) - expected) / (1.0 - expected)
            pair_kappas.append(per_item.mean())
            item_sums[both] += per_item
            item_counts[both] += 1
    import warnings

    from agreement import UndefinedMeasureWarning

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UndefinedMeasureWarning)
        sweep = augmented_sweep(ranked, ps=[p]).iloc[0]
    assert (np.isnan(sweep) and not pair_kappas) or sweep == pytest.approx(np.mean(pair_kappas), abs=1e-12)
    by_item = np.where(item_counts > 0, item_sums / np.maximum(item_counts, 1), np.nan)
    np.testing.assert_allclose(augmented_item_kappa(ranked, p=p).to_numpy(), by_item, atol=1e-12)
