"""The item sums without BLAS: alpha, SPA, Fleiss and Gwet against the textbook formulas, whatever BLAS's threads.

A point estimate sums its row blocks with numpy's own loops (:func:`agreement.itemsums.weighted_sum`), not BLAS,
whose threads slow a busy machine down. The values must be those of the formulas, summed here item by item with
``math.fsum``, over several blocks (and the partial last one), wide matrices (fewer rows per block) and fractional
counts; and they must not depend on how many threads BLAS has.
"""

import hashlib
import math

import krippendorff
import numpy as np
import pytest

from agreement import fleiss_kappa, gwet_ac, krippendorff_alpha, spa
from agreement.itemsums import BLOCK_CELLS, BLOCK_ROWS, weighted_sum

RELATIVE = 1e-12


def _counts(n_items: int, n_categories: int, *, seed: int, fractional: bool = False) -> np.ndarray:
    """Counts of 0 to 6 annotations per item (some items unpairable), int64, or float with fractional parts."""
    rng = np.random.default_rng(seed)
    counts = np.zeros((n_items, n_categories), dtype=np.int64)
    per_item = rng.integers(0, 7, size=n_items)
    favourite = rng.integers(0, n_categories, size=n_items)
    for round_ in range(per_item.max()):
        rated = per_item > round_
        label = np.where(rng.random(n_items) < 0.5, favourite, rng.integers(0, n_categories, size=n_items))
        np.add.at(counts, (np.flatnonzero(rated), label[rated]), 1)
    if fractional:
        return counts * rng.choice([0.5, 1.0, 1.25, 3.0 / 7.0], size=counts.shape)
    return counts


CASES = {
    "several blocks": lambda fractional: _counts(3 * BLOCK_ROWS + 123, 5, seed=1, fractional=fractional),
    "wide": lambda fractional: _counts(3 * (BLOCK_CELLS // 60) + 7, 60, seed=2, fractional=fractional),
    "one block": lambda fractional: _counts(500, 4, seed=3, fractional=fractional),
}


def _pairable(x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    x = np.asarray(x, dtype=np.float64)
    n = x.sum(axis=1)
    return x[n >= 2], n[n >= 2]


# The reference coincidence matrices by the counts they are of: every level of measurement reads the same one, and
# the wide case's 3,600 cells are sums over every item.
_COINCIDENCES: dict[tuple, tuple[np.ndarray, np.ndarray]] = {}


def reference_coincidence(x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The coincidence matrix of the pairable items and its marginals, every cell a ``math.fsum`` over the items."""
    key = (x.shape, x.dtype.str, hashlib.sha256(np.ascontiguousarray(x).tobytes()).hexdigest())
    if key not in _COINCIDENCES:
        x, n = _pairable(x)
        size = x.shape[1]
        coincidence = np.array([[math.fsum(x[:, c] * (x[:, k] - (c == k)) / (n - 1.0)) for k in range(size)]
                                for c in range(size)])
        _COINCIDENCES[key] = coincidence, np.array([math.fsum(row) for row in coincidence])
    return _COINCIDENCES[key]


def reference_alpha(x: np.ndarray, level: str, values: np.ndarray) -> float:
    """Krippendorff's alpha from the coincidence matrix, every cell a ``math.fsum`` over the items."""
    coincidence, marginals = reference_coincidence(x)
    size = coincidence.shape[0]
    if level == "nominal":
        delta = 1.0 - np.eye(size)
    elif level == "ordinal":
        midranks = np.cumsum(marginals) - marginals / 2.0  # the values are in ascending order here
        delta = (midranks[:, None] - midranks[None, :]) ** 2
    elif level == "interval":
        delta = (values[:, None] - values[None, :]) ** 2
    else:
        delta = ((values[:, None] - values[None, :]) / (values[:, None] + values[None, :])) ** 2
    total = math.fsum(marginals)
    observed = math.fsum((coincidence * delta).ravel())
    expected = math.fsum((marginals[:, None] * marginals[None, :] * delta).ravel())
    return 1.0 - (total - 1.0) * observed / expected


def reference_spa(x: np.ndarray) -> float:
    """SPA with annotations - 1 weights: ``sum_i (q_i - n_i) / n_i`` over ``sum_i (n_i - 1)``."""
    x, n = _pairable(x)
    q = (x * x).sum(axis=1)
    return math.fsum((q - n) / n) / math.fsum(n - 1.0)


def reference_fleiss(x: np.ndarray) -> float:
    """Fleiss' kappa over the pairable items: mean item agreement against the squared category shares."""
    x, n = _pairable(x)
    q = (x * x).sum(axis=1)
    observed = math.fsum((q - n) / (n * (n - 1.0))) / len(n)
    totals = np.array([math.fsum(column) for column in x.T])
    expected = math.fsum((totals / math.fsum(totals)) ** 2)
    return (observed - expected) / (1.0 - expected)


def reference_gwet(x: np.ndarray, weights: np.ndarray) -> float:
    """Gwet's AC1/AC2: ``p_a`` over the items rated twice or more, ``pi`` over the rated ones (Gwet 2014)."""
    x = np.asarray(x, dtype=np.float64)
    r = x.sum(axis=1)
    paired, rated = x[r >= 2], x[r >= 1]
    rp = r[r >= 2]
    within = (paired * (paired @ weights.T - 1.0)).sum(axis=1)
    observed = math.fsum(within / (rp * (rp - 1.0))) / len(rp)
    pi = np.array([math.fsum(column) for column in (rated / r[r >= 1][:, None]).T]) / len(rated)
    q = x.shape[1]
    expected = weights.sum() / (q * (q - 1.0)) * math.fsum(pi * (1.0 - pi))
    return (observed - expected) / (1.0 - expected)


@pytest.mark.parametrize("fractional", [False, True], ids=["int64", "fractional"])
@pytest.mark.parametrize("case", CASES)
@pytest.mark.parametrize("level", ["nominal", "ordinal", "interval", "ratio"])
def test_alpha_is_the_coincidence_matrix_formula(case, fractional, level):
    x = CASES[case](fractional)
    values = np.arange(1.0, x.shape[1] + 1)
    got = krippendorff_alpha(x, level=level, values=None if level == "nominal" else values)
    assert got == pytest.approx(reference_alpha(x, level, values), rel=RELATIVE, abs=RELATIVE)


@pytest.mark.parametrize("case", ["several blocks", "one block"])
@pytest.mark.parametrize("level", ["nominal", "interval", "ratio"])
def test_alpha_is_the_krippendorff_package_s(case, level):
    x = CASES[case](False)
    values = np.arange(1.0, x.shape[1] + 1)
    theirs = krippendorff.alpha(value_counts=x.astype(np.float64), level_of_measurement=level, value_domain=values)
    got = krippendorff_alpha(x, level=level, values=None if level == "nominal" else values)
    assert got == pytest.approx(theirs, rel=RELATIVE, abs=RELATIVE)


@pytest.mark.parametrize("fractional", [False, True], ids=["int64", "fractional"])
@pytest.mark.parametrize("case", CASES)
def test_spa_and_fleiss_are_their_formulas(case, fractional):
    x = CASES[case](fractional)
    assert spa(x) == pytest.approx(reference_spa(x), rel=RELATIVE, abs=RELATIVE)
    assert fleiss_kappa(x) == pytest.approx(reference_fleiss(x), rel=RELATIVE, abs=RELATIVE)


@pytest.mark.parametrize("fractional", [False, True], ids=["int64", "fractional"])
@pytest.mark.parametrize("case", CASES)
def test_gwet_is_its_formula(case, fractional):
    x = CASES[case](fractional)
    q = x.shape[1]
    values = np.arange(q, dtype=np.float64)
    quadratic = 1.0 - ((values[:, None] - values[None, :]) / (q - 1.0)) ** 2
    assert gwet_ac(x).value == pytest.approx(reference_gwet(x, np.eye(q)), rel=RELATIVE, abs=RELATIVE)
    assert gwet_ac(x, level="interval", values=values).value == pytest.approx(reference_gwet(x, quadratic),
                                                                              rel=RELATIVE, abs=RELATIVE)


def test_a_caller_given_distance_matrix_is_the_formula():
    x = CASES["several blocks"](False)
    values = np.array([1.0, 2.0, 4.0, 8.0, 16.0])
    ratio = ((values[:, None] - values[None, :]) / (values[:, None] + values[None, :])) ** 2
    assert krippendorff_alpha(x, level=ratio) == pytest.approx(reference_alpha(x, "ratio", values), rel=RELATIVE)


@pytest.mark.parametrize("shape", [(7,), (7, 3)])
def test_weighted_sum_is_the_matrix_product(shape):
    rng = np.random.default_rng(4)
    values = rng.random((shape[1], 7)).T if len(shape) == 2 else rng.random(7)  # a block's x: columns contiguous
    one = rng.random((1, 7))
    many = rng.random((4, 7))
    assert weighted_sum(one, values).shape == (one @ values).shape
    np.testing.assert_allclose(weighted_sum(one, values), one @ values, rtol=RELATIVE)
    np.testing.assert_array_equal(weighted_sum(many, values), many @ values)  # the bootstrap's batches: BLAS


def test_the_values_do_not_depend_on_blas_threads():
    threadpoolctl = pytest.importorskip("threadpoolctl")
    x = CASES["several blocks"](True)
    values = np.arange(1.0, 6.0)

    def estimates() -> list[float]:
        return [krippendorff_alpha(x), krippendorff_alpha(x, level="interval", values=values),
                krippendorff_alpha(x, level="ordinal", values=values), spa(x), fleiss_kappa(x), *gwet_ac(x),
                *gwet_ac(x, level="interval", values=values)]

    threaded = estimates()
    with threadpoolctl.threadpool_limits(limits=1, user_api="blas"):
        single = estimates()
    assert threaded == single
