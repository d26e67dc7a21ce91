"""Agreement over time and the annotations still needed, against direct computation and the 1/sqrt(n) law."""

import math

import numpy as np
import pandas as pd
import pytest

from agreement import bootstrap_ci, krippendorff_alpha, label_counts, spa
from agreement.timeline import agreement_over_time, annotations_needed


def _rows(seed=0, n_items=80):
    rng = np.random.default_rng(seed)
    records = []
    for item in range(n_items):
        truth = rng.integers(0, 3)
        for who in range(int(rng.integers(1, 5))):
            label = truth if rng.random() < 0.75 else rng.integers(0, 3)
            records.append((item, f"u{who}", "xyz"[label]))
    rows = pd.DataFrame(records, columns=["item", "annotator", "label"])
    rows["time"] = pd.Timestamp("2026-03-01", tz="UTC") + pd.to_timedelta(rng.permutation(len(rows)), unit="min")
    return rows


def test_each_moment_scores_exactly_the_annotations_made_by_then():
    rows = _rows()
    table = agreement_over_time(rows, points=7, n_resamples=100)
    assert len(table) == 7
    assert table["n_annotations"].is_monotonic_increasing
    assert table["n_annotations"].iloc[-1] == len(rows)
    assert table["time"].iloc[-1] == rows["time"].max()
    ordered = rows.sort_values("time")
    for point in table.itertuples():
        made = ordered[ordered["time"] <= point.time]
        assert len(made) == point.n_annotations
        counts = label_counts(made, categories=["x", "y", "z"])
        assert point.spa == pytest.approx(spa(counts))
        assert point.alpha == pytest.approx(krippendorff_alpha(counts))
        x = counts.counts[counts.counts.sum(axis=1) >= 2]
        assert point.n_items == len(x)
        ci = bootstrap_ci(-np.sort(-x, axis=1), "spa", n_resamples=100, seed=0)  # the canonical order
        assert (point.spa_low, point.spa_high) == pytest.approx((ci.low, ci.high))


def test_moments_before_any_pair_are_undefined_not_errors():
    rows = pd.DataFrame({"item": [1, 2, 1], "annotator": ["a", "a", "b"], "label": ["x", "y", "x"],
                         "time": [1, 2, 3]})
    table = agreement_over_time(rows, points=3, n_resamples=20)
    assert math.isnan(table["spa"].iloc[0]) and math.isnan(table["spa_low"].iloc[0])
    assert table["spa"].iloc[-1] == 1.0


def test_no_annotations_give_an_empty_table():
    empty = pd.DataFrame(columns=["item", "annotator", "label", "time"])
    assert agreement_over_time(empty).empty


def test_annotations_needed_follows_the_square_root_law():
    # Width ~ 1/sqrt(n): halving it takes 4n in all, i.e. 3n more; a width already within the target needs none.
    assert annotations_needed(0.2, n_annotations=500, target=0.1) == 1500
    assert annotations_needed(0.1, n_annotations=500, target=0.1) == 0
    assert annotations_needed(0.05, n_annotations=500, target=0.1) == 0
    assert annotations_needed(0.15, n_annotations=100, target=0.1) == math.ceil(100 * 2.25 - 100)
    assert annotations_needed(math.nan, n_annotations=100, target=0.1) is None
    assert annotations_needed(0.2, n_annotations=0, target=0.1) is None
    with pytest.raises(ValueError, match="positive"):
        annotations_needed(0.2, n_annotations=10, target=0)


def test_the_square_root_law_holds_for_spa_bootstrap_widths():
    # The prediction from a quarter of the items is close to the width four times as many items give.
    rng = np.random.default_rng(3)
    counts = rng.multinomial(3, [0.6, 0.3, 0.1], size=8000).astype(float)
    small = bootstrap_ci(counts[:2000], "spa", n_resamples=400, seed=1)
    large = bootstrap_ci(counts, "spa", n_resamples=400, seed=1)
    predicted = (small.high - small.low) / 2
    assert (large.high - large.low) == pytest.approx(predicted, rel=0.15)
