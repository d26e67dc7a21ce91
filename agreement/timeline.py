"""Agreement as annotations came in, and how many more would narrow its interval to a target.

SPA is unbiased while annotation is incomplete (seed 004), so its value over
the annotations made up to each moment is a fair picture of how agreement
moved; its bootstrap interval shows how much of the movement is noise.
"""

from __future__ import annotations

import math
import warnings

import numpy as np
import pandas as pd
from numpy.typing import ArrayLike

from agreement.alpha import Level, krippendorff_alpha
from agreement.bootstrap import bootstrap_ci, canonical_rows
from agreement.counts import WIDE_CELLS, code_labels, require_columns, sparse_counts
from agreement.running import RunningAgreement
from agreement.spa import spa
from agreement.undefined import UndefinedMeasureWarning

__all__ = ["TIMELINE_COLUMNS", "agreement_over_time", "annotations_needed"]

TIMELINE_COLUMNS = ("time", "n_annotations", "n_items", "spa", "spa_low", "spa_high", "alpha")


def agreement_over_time(rows: pd.DataFrame, *, time: str = "time", points: int = 20, level: Level = "nominal",
                        values: ArrayLike | None = None, categories: ArrayLike | None = None,
                        n_resamples: int = 200, confidence: float = 0.95, seed: int | None = 0) -> pd.DataFrame:
    """SPA with its interval, and Krippendorff's alpha, over the annotations made up to each of ``points`` moments.

    The moments split the annotations into equal shares by their ``time``
    (the last is the latest annotation), so a project annotated in bursts
    is drawn where its annotations are.

    Parameters
    ----------
    rows : pandas.DataFrame
        One row per annotator and item: ``item``, ``annotator``, ``label``
        and ``time`` (any sortable type, e.g. datetime64 or ISO 8601 text).
    points : int, default 20
    level, values, categories
        As in :func:`agreement.krippendorff_alpha` and :func:`agreement.label_counts`.
    n_resamples, confidence, seed
        The bootstrap of SPA (``annotations_m1``) at each moment, over
        :func:`agreement.bootstrap.canonical_rows` as the headline's interval.

    Returns
    -------
    pandas.DataFrame
        Columns :data:`TIMELINE_COLUMNS`, one row per moment; values that
        are undefined so early (fewer than two annotations on every item)
        are NaN.

    Examples
    --------
    >>> rows = pd.DataFrame({"item": [1, 1, 2, 2], "annotator": ["a", "b", "a", "b"],
    ...                      "label": ["x", "x", "x", "y"], "time": [1, 2, 3, 4]})
    >>> table = agreement_over_time(rows, points=2, n_resamples=50)
    >>> table["time"].tolist(), table["n_annotations"].tolist(), table["spa"].tolist()
    ([2, 4], [2, 4], [1.0, 0.5])
    """
    require_columns(rows, ["item", "annotator", "label", time])
    if points < 1:
        raise ValueError(f"points must be at least 1, not {points}.")
    present = rows[rows["label"].notna()].sort_values(time, kind="stable")
    if len(present) == 0:
        return pd.DataFrame(columns=list(TIMELINE_COLUMNS))
    # Code items and labels once; each moment's count matrix is then one bincount over a prefix of the rows. Items
    # are numbered as they first come, so a moment's items are the first ``seen`` codes, each with a label.
    item_codes, items = pd.factorize(present["item"], sort=False)
    seen_by = np.maximum.accumulate(item_codes) + 1
    label_codes, labels = code_labels(present["label"], categories)
    width = len(labels)
    flat = item_codes * width + label_codes
    ends = np.unique(np.ceil(np.linspace(0, len(present), points + 1)[1:]).astype(int))
    times = present[time].iloc[ends - 1].tolist()  # the moments alone (a datetime column's cells are slow to read)
    out = []
    wide = level == "nominal" and len(items) * width > WIDE_CELLS  # free text: no items x labels matrix
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UndefinedMeasureWarning)
        for end, moment in zip(ends.tolist(), times, strict=True):
            seen = int(seen_by[end - 1])
            if wide:  # each item's counts packed (all SPA reads), alpha from the sums of the sparse counts
                counts = sparse_counts(item_codes[:end], label_codes[:end], n_categories=width, n_items=seen)
                x = counts.packed()
                alpha = RunningAgreement.of_counts(counts).alpha()
            else:
                x = np.bincount(flat[:end], minlength=seen * width).reshape(seen, width).astype(float)
                alpha = krippendorff_alpha(x, level=level, values=values)
            pairable = np.bincount(item_codes[:end], minlength=seen) >= 2  # every item seen has a label
            low = high = math.nan
            if pairable.any():
                ci = bootstrap_ci(canonical_rows(x[pairable]), "spa", n_resamples=n_resamples, confidence=confidence,
                                  seed=seed)
                low, high = ci.low, ci.high
            out.append({"time": moment, "n_annotations": int(end), "n_items": int(pairable.sum()),
                        "spa": spa(x), "spa_low": low, "spa_high": high, "alpha": alpha})
    return pd.DataFrame(out, columns=list(TIMELINE_COLUMNS))


def annotations_needed(width: float, *, n_annotations: int, target: float) -> int | None:
    """How many more annotations would bring an interval of ``width`` down to ``target``.

    A bootstrap interval narrows as :math:`1/\\sqrt{n}` with the number of
    items drawn from the same population (Efron & Tibshirani 1993, ch. 5), so
    with annotations spread over items as they are now,

    .. math:: n_{needed} = n \\left(\\frac{w}{w^*}\\right)^2 - n .

    Returns
    -------
    int or None
        0 when the interval is already narrow enough; None when the width is
        unknown (no interval yet) or nothing is annotated.

    Examples
    --------
    An interval of 0.2 from 400 annotations needs four times as many to halve:

    >>> annotations_needed(0.2, n_annotations=400, target=0.1)
    1200
    """
    if target <= 0:
        raise ValueError(f"The target width must be positive, not {target}.")
    if not math.isfinite(width) or n_annotations <= 0:
        return None
    return max(0, math.ceil(n_annotations * (width / target) ** 2 - n_annotations - 1e-9))
