"""Per-item kappa' and classes kept item by item equal the batch computation of Rosenberg & Binkowski (2004),
section 6."""

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from agreement.augmented import augmented_item_kappa, classify_items, ranked_labels
from agreement.running_augmented import RunningAugmented
from tests.profiles import examples

LABELS = ("a", "b", "c", "d")
ANNOTATORS = ("u1", "u2", "u3", "u4")


@st.composite
def answers(draw):
    """One item's answers: each annotator who labels it gives one label, or a primary and a different secondary."""
    out = []
    for annotator in ANNOTATORS:
        if draw(st.booleans()):
            first = draw(st.sampled_from(LABELS))
            out.append((annotator, first, 1))
            if draw(st.booleans()):
                out.append((annotator, draw(st.sampled_from([x for x in LABELS if x != first])), 2))
    return out


def _batch(items):
    rows = [(item, a, label, rank) for item, labels in items.items() for a, label, rank in labels]
    return ranked_labels(pd.DataFrame(rows, columns=["item", "annotator", "label", "rank"]))


@settings(max_examples=examples(60), deadline=None)
@given(st.lists(st.tuples(st.integers(0, 9), answers()), min_size=1, max_size=40))
def test_any_stream_of_replacements_ends_where_the_batch_is(stream):
    running, final = RunningAugmented(), {}
    for item, labels in stream:
        running.set_item(item, labels)
        if labels:
            final[item] = labels
        else:
            final.pop(item, None)
    if not final:
        return
    ranked = _batch(final)
    for p in (1.0, 0.5):
        batch = augmented_item_kappa(ranked, p=p)
        live = pd.Series([running.item_kappa(item, p=p) for item in batch.index], index=batch.index)
        assert np.allclose(live.to_numpy(), batch.to_numpy(), equal_nan=True, atol=1e-9)
    classes = classify_items(ranked)["item_class"]
    for item, expected in classes.items():
        assert running.item_class(item) == (None if pd.isna(expected) else str(expected))


def test_removing_every_item_leaves_nothing_behind():
    running = RunningAugmented()
    running.set_item(1, [("u1", "a", 1), ("u2", "b", 1), ("u2", "a", 2)])
    running.set_item(2, [("u1", "a", 1), ("u2", "a", 1)])
    assert running.expected("u1", "u2", p=0.5) == pytest.approx(((1.0 + 1.0) / 2) * ((0.5 + 1.0) / 2))
    running.remove_item(1)
    running.remove_item(2)
    running.remove_item(3)  # never set: nothing happens
    assert np.isnan(running.expected("u1", "u2", p=1.0)) and np.isnan(running.item_kappa(1, p=1.0))
