"""SPA (Nørregaard & Derczynski, "Sparse Probability of Agreement", 2022)."""

import itertools
import warnings
from math import comb

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from agreement import UndefinedMeasureWarning, fleiss_kappa, item_agreement, item_agreement_variance, spa, spa_weights
from agreement.spa import WEIGHING_SCHEMES
from tests.agreement.strategies import count_matrices


def test_figure_1_eleven_annotations_agree_on_14_of_55_edges():
    # Nørregaard & Derczynski 2022, Figure 1: 5 blue, 3 red, 2 green, 1 pink: 10 + 3 + 1 + 0 = 14 edges of 55
    # (printed ~25.5%).
    assert item_agreement([[5, 3, 2, 1]])[0] == pytest.approx(14 / 55)
    assert spa([[5, 3, 2, 1]]) == pytest.approx(14 / 55)


# Hand example: P_i = 1, 0, 1, 1/3 with n_i = 2, 2, 3, 3.
HAND = np.array([[2, 0], [1, 1], [3, 0], [2, 1]], dtype=float)


@pytest.mark.parametrize(
    ("scheme", "expected"),
    [
        ("flat", (1 + 0 + 1 + 1 / 3) / 4),
        ("annotations", (2 * 1 + 2 * 0 + 3 * 1 + 3 / 3) / 10),
        ("annotations_m1", (1 + 0 + 2 + 2 / 3) / 6),
        ("edges", (1 + 0 + 3 + 3 * (1 / 3)) / 8),
        ("inv_var", (1 + 0 + 3 + 3 * (1 / 3)) / 8),  # inverse variance is proportional to edges (module notes)
    ],
)
def test_weighing_schemes_on_a_hand_example(scheme, expected):
    assert spa(HAND, weights=scheme) == pytest.approx(expected)


def test_items_with_one_annotation_weigh_nothing():
    with_singletons = np.vstack([HAND, [[1, 0], [0, 1], [0, 0]]])
    for scheme in WEIGHING_SCHEMES:
        k = spa_weights([0, 1, 2], scheme=scheme, probabilities=[0.7, 0.3])
        assert k[0] == k[1] == 0 < k[2]
        if scheme != "inv_var_class":  # its class distribution pools every label, singletons included
            assert spa(with_singletons, weights=scheme) == pytest.approx(spa(HAND, weights=scheme))


def test_undefined_without_pairable_items_is_nan_with_a_reason():
    with pytest.warns(UndefinedMeasureWarning, match="no item has two or more annotations"):
        assert np.isnan(spa([[1, 0], [0, 1], [0, 0]]))
    assert np.isnan(item_agreement([[1, 0]])[0])


def test_unknown_scheme_is_a_clear_error():
    with pytest.raises(ValueError, match="Unknown SPA weighing scheme 'median'"):
        spa(HAND, weights="median")


def test_bad_counts_are_clear_errors():
    with pytest.raises(ValueError, match="two-dimensional"):
        spa([1, 2, 3])
    with pytest.raises(ValueError, match="negative"):
        spa([[2, -1]])
    with pytest.raises(ValueError, match="finite"):
        spa([[2, np.nan]])
    with pytest.raises(ValueError, match="finite"):
        spa([[2, np.inf]])


# --- The variance of an item's agreement (Nørregaard & Derczynski 2022, section 5.3-5.4, Appendix A-B) ---


def brute_force_variance(n, probabilities):
    """Enumerate every labeling of n annotations into C classes."""
    p = np.asarray(probabilities)
    values, weights = [], []
    for labeling in itertools.product(range(len(p)), repeat=n):
        counts = np.bincount(labeling, minlength=len(p))
        values.append((counts * (counts - 1)).sum() / (n * (n - 1)))
        weights.append(np.prod(p[list(labeling)]))
    values, weights = np.array(values), np.array(weights)
    mean = (weights * values).sum()
    return (weights * values**2).sum() - mean**2


def appendix_a_eq41(n, c):
    """Nørregaard & Derczynski 2022, eq. 41 (Appendix A), as printed."""
    edges = n * (n - 1) / 2
    k_sps = lambda v: comb(n, v) * c * (c - 1) ** (n - v)
    k_csp = lambda a, b: comb(n, a) * comb(n - a, b) * c * (c - 1) * (c - 2) ** (n - a - b)
    cross = sum(2 ** (a != b) * k_csp(a, b) * a * b * (a - 1) * (b - 1)
                for a in range(n + 1) for b in range(min(a, n - a) + 1))
    self_pairs = sum(k_sps(v) * v**2 * (v - 1) ** 2 for v in range(n + 1))
    return (cross + self_pairs) / (4 * edges**2 * c**n) - (1 / c) ** 2


def printed_eq20(n, c):
    """Nørregaard & Derczynski 2022, eq. 20-21 (main text), as printed.

    The constant is 1/(N^2 C^4), and 2^{I(n0 = n1)} stands inside K_csp.
    """
    edges = n * (n - 1) / 2
    k_sps = lambda v: comb(n, v) * c * (c - 1) ** (n - v)
    k_csp = lambda a, b: 2 ** (a == b) * comb(n, a) * comb(n - a, b) * c * (c - 1) * (c - 2) ** (n - a - b)
    cross = sum(k_csp(a, b) * a * b * (a - 1) * (b - 1) for a in range(n + 1) for b in range(min(a, n - a) + 1))
    self_pairs = sum(k_sps(v) * v**2 * (v - 1) ** 2 for v in range(n + 1))
    return (cross + self_pairs) / (edges**2 * c**4) - (1 / c) ** 2


@pytest.mark.parametrize("n", [2, 3, 4, 5, 6])
@pytest.mark.parametrize("c", [2, 3, 4])
def test_uniform_variance_equals_enumeration_and_appendix_a(n, c):
    uniform = np.full(c, 1 / c)
    expected = brute_force_variance(n, uniform)
    assert item_agreement_variance(n, uniform) == pytest.approx(expected, abs=1e-12)
    assert appendix_a_eq41(n, c) == pytest.approx(expected, abs=1e-12)
    # The closed form for uniform classes: 2 (C - 1) / (C^2 n (n - 1)).
    assert expected == pytest.approx(2 * (c - 1) / (c**2 * n * (n - 1)))


def test_printed_eq20_does_not_give_the_variance():
    # Discrepancy kept on record: eq. 20 as printed disagrees with enumeration (and with eq. 41) from n = 2, C = 3 on.
    assert printed_eq20(2, 3) == pytest.approx(1 / 27)
    assert brute_force_variance(2, np.full(3, 1 / 3)) == pytest.approx(2 / 9)
    assert printed_eq20(4, 2) == pytest.approx(1.0)
    assert brute_force_variance(4, [0.5, 0.5]) == pytest.approx(1 / 24)


@pytest.mark.parametrize("probabilities", [[0.6, 0.3, 0.1], [0.9, 0.1], [0.25, 0.25, 0.4, 0.1], [0.5, 0.5]])
@pytest.mark.parametrize("n", [2, 3, 4, 5])
def test_class_distribution_variance_equals_enumeration(n, probabilities):
    # Appendix B (eq. 50 / 22-23): the variance under a class distribution.
    assert item_agreement_variance(n, probabilities) == pytest.approx(brute_force_variance(n, probabilities), abs=1e-12)


@pytest.mark.parametrize("c", range(2, 8))
def test_inv_var_weights_are_exactly_proportional_to_edges(c):
    # Nørregaard & Derczynski 2022, section 6.1 and Table 1: inv_var "almost identical to edges", "constant with respect
    # to classes".
    n = np.arange(2, 11, dtype=float)
    inv_var = spa_weights(n, scheme="inv_var", probabilities=np.ones(c))
    edges = spa_weights(n, scheme="edges")
    np.testing.assert_allclose(inv_var / inv_var[0], edges / edges[0])


@given(st.lists(st.floats(0.01, 1.0), min_size=2, max_size=8))
def test_inv_var_class_weights_lie_between_annotations_and_edges(raw):
    # Nørregaard & Derczynski 2022, Figure 5: inv_var_class "selects a weight-curve ranging from number of annotations
    # to number of edges".
    p = np.array(raw) / sum(raw)
    n = np.arange(2, 11, dtype=float)
    w = spa_weights(n, scheme="inv_var_class", probabilities=p)
    normalized = w / w[0]
    assert np.all(normalized >= n / 2 - 1e-9)
    assert np.all(normalized <= n * (n - 1) / 2 + 1e-9)


def test_inv_var_class_with_a_single_class_takes_the_limit():
    counts = np.array([[3, 0], [2, 0], [4, 0]], dtype=float)
    assert spa(counts, weights="inv_var_class") == 1.0


def test_inv_var_class_estimates_the_distribution_from_pooled_labels():
    counts = np.array([[2, 0], [1, 1], [3, 0], [2, 1], [1, 0]], dtype=float)
    pooled = counts.sum(axis=0) / counts.sum()
    k = spa_weights(counts.sum(axis=1), scheme="inv_var_class", probabilities=pooled)
    p = np.nan_to_num(item_agreement(counts))
    assert spa(counts, weights="inv_var_class") == pytest.approx((k * p).sum() / k.sum())


# --- Properties ---


@given(count_matrices(min_items=2), st.randoms())
def test_invariant_under_permuting_items_and_categories(counts, rnd):
    rows = list(range(counts.shape[0]))
    cols = list(range(counts.shape[1]))
    rnd.shuffle(rows)
    rnd.shuffle(cols)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UndefinedMeasureWarning)
        for scheme in WEIGHING_SCHEMES:
            a, b = spa(counts, weights=scheme), spa(counts[rows][:, cols], weights=scheme)
            assert (np.isnan(a) and np.isnan(b)) or a == pytest.approx(b)


@given(st.lists(st.integers(2, 6), min_size=1, max_size=20), st.integers(2, 5), st.randoms())
def test_perfect_agreement_gives_one(sizes, n_categories, rnd):
    counts = np.zeros((len(sizes), n_categories))
    for row, size in enumerate(sizes):
        counts[row, rnd.randrange(n_categories)] = size
    for scheme in WEIGHING_SCHEMES:
        assert spa(counts, weights=scheme) == pytest.approx(1.0)


@given(arrays(np.int64, st.tuples(st.integers(2, 15), st.integers(2, 6)), elements=st.integers(0, 3)))
def test_on_complete_data_spa_equals_fleiss_p_bar(labels):
    # Nørregaard & Derczynski 2022, section 3: with every item annotated by the same annotators, SPA = P-bar of Fleiss'
    # kappa.
    complete = np.eye(4)[labels].sum(axis=1)  # items x categories, every item annotated labels.shape[1] times
    p_bar = np.mean(item_agreement(complete))
    for scheme in WEIGHING_SCHEMES:
        assert spa(complete, weights=scheme) == pytest.approx(p_bar)
    pooled = complete.sum(axis=0) / complete.sum()
    if (pooled**2).sum() < 1 - 1e-9:
        assert fleiss_kappa(complete) == pytest.approx((p_bar - (pooled**2).sum()) / (1 - (pooled**2).sum()))


@given(st.lists(st.integers(0, 5), min_size=2, max_size=5).filter(lambda c: sum(c) >= 3))
def test_removing_one_annotation_at_random_keeps_the_expected_item_agreement(counts):
    # Nørregaard & Derczynski 2022, eq. 14: E[P'] = P when one annotation is removed at random (n >= 3).
    counts = np.array(counts, dtype=float)
    n = counts.sum()
    expected = sum(
        counts[c] / n * item_agreement([counts - np.eye(len(counts))[c]])[0] for c in range(len(counts)) if counts[c]
    )
    assert expected == pytest.approx(item_agreement([counts])[0])


@pytest.mark.parametrize("scheme", WEIGHING_SCHEMES)
def test_removing_annotations_at_random_leaves_spa_unbiased(scheme):
    # Nørregaard & Derczynski 2022, section 4.2: SPA on randomly thinned annotations estimates the complete data's P-bar
    # without bias.
    rng = np.random.default_rng(20240601)
    n_items, n_annotators, n_categories = 40, 6, 3
    tendency = rng.dirichlet([0.6] * n_categories, size=n_items)
    labels = np.array([rng.choice(n_categories, size=n_annotators, p=t) for t in tendency])
    one_hot = np.eye(n_categories)[labels]  # items x annotators x categories
    complete = one_hot.sum(axis=1)
    target = np.mean(item_agreement(complete))
    keep = rng.random((3000, n_items, n_annotators)) < 0.55
    estimates = np.array([spa(np.einsum("iac,ia->ic", one_hot, k), weights=scheme) for k in keep])
    standard_error = estimates.std(ddof=1) / np.sqrt(len(estimates))
    assert abs(estimates.mean() - target) < 4 * standard_error
    assert standard_error < 0.002
