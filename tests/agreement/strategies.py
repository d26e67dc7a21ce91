"""Hypothesis strategies for count matrices and annotation tables."""

from __future__ import annotations

import numpy as np
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays


@st.composite
def count_matrices(draw, *, min_items=1, max_items=25, min_categories=2, max_categories=5, max_count=4):
    """Integer-valued count matrices (items x categories) as float arrays."""
    n_items = draw(st.integers(min_items, max_items))
    n_categories = draw(st.integers(min_categories, max_categories))
    return draw(arrays(np.float64, (n_items, n_categories), elements=st.integers(0, max_count).map(float)))


@st.composite
def contingency_tables(draw, *, min_categories=2, max_categories=5, max_count=20):
    """Square contingency tables of whole counts."""
    size = draw(st.integers(min_categories, max_categories))
    return draw(arrays(np.float64, (size, size), elements=st.integers(0, max_count).map(float)))


def set_partitions(items: list[int]):
    """Every partition of ``items`` into blocks (Bell-number many)."""
    if not items:
        yield []
        return
    head, rest = items[0], items[1:]
    for partition in set_partitions(rest):
        yield [[head], *partition]
        for i in range(len(partition)):
            yield [*partition[:i], [head, *partition[i]], *partition[i + 1:]]
