"""Agreement as annotations came in, and how many more would narrow its interval to a target.

SPA is unbiased while annotation is incomplete (Nørregaard & Derczynski
2022), so its value over the annotations made up to each moment is a fair
picture of how agreement moved; its bootstrap interval shows how much of the
movement is noise.
"""

from __future__ import annotations

import math
import warnings
from functools import partial

import numpy as np
import pandas as pd
from numpy.typing import ArrayLike, NDArray

from agreement.alpha import Level, krippendorff_alpha
from agreement.bootstrap import bootstrap_distinct, canonical_rows
from agreement.counts import WIDE_CELLS, code_labels, require_columns, sparse_counts
from agreement.itemsums import bytes_order, compress_rows
from agreement.running import RunningAgreement
from agreement.spa import spa, spa_batch
from agreement.undefined import UndefinedMeasureWarning
from agreement.uniques import unique_inverse

__all__ = ["TIMELINE_COLUMNS", "agreement_over_time", "annotations_needed"]

TIMELINE_COLUMNS = ("time", "n_annotations", "n_items", "spa", "spa_low", "spa_high", "alpha")


def agreement_over_time(rows: pd.DataFrame, *, time: str = "time", points: int = 20, level: Level = "nominal",
                        values: ArrayLike | None = None, categories: ArrayLike | None = None,
                        n_resamples: int = 200, confidence: float = 0.95, seed: int | None = 0) -> pd.DataFrame:
    """SPA with its interval, and Krippendorff's alpha, over the annotations made up to each moment.

    The ``points`` moments split the annotations into equal shares by their ``time``
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
    present = rows[rows["label"].notna()]
    column = present[time]
    if isinstance(column.dtype, pd.DatetimeTZDtype):  # instants as UTC datetime64, which numpy sorts
        column = column.dt.tz_convert("UTC").dt.tz_localize(None)
    stamps = column.to_numpy()
    if stamps.dtype.kind in "Mmiuf":  # numbers and datetimes: numpy's stable sort (NaN and NaT last, as pandas)
        present = present.iloc[np.argsort(stamps, kind="stable")]
    else:
        present = present.sort_values(time, kind="stable")
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
    held = None if wide else _DistinctRows(len(items), width)
    x = None if wide else np.zeros((len(items), width))  # every item's counts, grown moment by moment
    resample = partial(bootstrap_distinct, batch=partial(spa_batch, weights="annotations_m1"), n_resamples=n_resamples,
                       confidence=confidence, seed=seed)
    start = 0
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UndefinedMeasureWarning)
        for end, moment in zip(ends.tolist(), times, strict=True):
            seen = int(seen_by[end - 1])
            if held is None or x is None:  # each item's counts packed (all SPA reads), alpha from the sparse sums
                counts = sparse_counts(item_codes[:end], label_codes[:end], n_categories=width, n_items=seen)
                packed = counts.packed()
                alpha = RunningAgreement.of_counts(counts).alpha()
                pairable = np.bincount(item_codes[:end], minlength=seen) >= 2  # every item seen has a label
                distinct, multiplicity = compress_rows(canonical_rows(packed[pairable]))
                value = spa(packed)
            else:  # only the items annotated since the last moment change: their rows, and the distinct rows
                np.add.at(x.reshape(-1), flat[start:end], 1.0)
                changed = unique_inverse(item_codes[start:end])[0]
                held.update(changed, x[changed])
                alpha = krippendorff_alpha(x[:seen], level=level, values=values)
                distinct, multiplicity = held.distinct()
                value = (float(spa_batch(distinct, multiplicity[None, :].astype(np.float64))[0]) if len(distinct)
                         else math.nan)  # SPA (annotations_m1) reads each item's counts, whatever their labels
            start = end
            low = high = math.nan
            if len(distinct):
                ci = resample(distinct, multiplicity, estimate=value)
                low, high = ci.low, ci.high
            out.append({"time": moment, "n_annotations": int(end), "n_items": int(multiplicity.sum()),
                        "spa": value, "spa_low": low, "spa_high": high, "alpha": alpha})
    return pd.DataFrame(out, columns=list(TIMELINE_COLUMNS))


class _DistinctRows:
    """The pairable items' distinct canonical rows and how many items hold each, kept as items change.

    Canonical rows as :func:`agreement.bootstrap.canonical_rows` gives them: counts in decreasing order. O(the items
    changed) a change, so a timeline's moments cost the annotations made between them, not every item each time.
    """

    def __init__(self, n_items: int, width: int) -> None:
        self._of_item = np.full(n_items, -1, dtype=np.intp)  # each item's row, -1 while it has fewer than two labels
        self._rows: list[NDArray[np.float64]] = []
        self._codes: dict[bytes, int] = {}
        self._held = np.zeros(0, dtype=np.int64)
        self._width = width

    def update(self, items: NDArray[np.intp], counts: NDArray[np.float64]) -> None:
        """Distinct ``items`` now hold the rows ``counts``."""
        before = self._of_item[items]
        pairable = counts.sum(axis=1) >= 2
        canonical = -np.sort(-counts[pairable], axis=1) + 0.0  # + 0.0: no -0.0, equal rows have equal bytes
        keys = np.ascontiguousarray(canonical).view(np.dtype((np.void, 8 * self._width))).ravel()
        _, first, inverse = np.unique(keys, return_index=True, return_inverse=True)
        codes = np.array([self._code(canonical[at]) for at in first.tolist()], dtype=np.intp)  # the distinct only
        after = np.full(len(items), -1, dtype=np.intp)
        after[pairable] = codes[inverse.reshape(-1)]
        self._of_item[items] = after
        if len(self._held) < len(self._rows):
            self._held = np.concatenate([self._held, np.zeros(len(self._rows) - len(self._held), dtype=np.int64)])
        self._held -= np.bincount(before[before >= 0], minlength=len(self._held))
        self._held += np.bincount(after[after >= 0], minlength=len(self._held))

    def _code(self, row: NDArray[np.float64]) -> int:
        """The code of a canonical row, a new one for a row not held before."""
        key = row.tobytes()
        code = self._codes.get(key)
        if code is None:
            code = self._codes[key] = len(self._rows)
            self._rows.append(row)
        return code

    def distinct(self) -> tuple[NDArray[np.float64], NDArray[np.int64]]:
        """The distinct rows held now and how many items hold each.

        The rows are without the columns empty in all of them, in the order :func:`agreement.itemsums.compress_rows`
        gives them.
        """
        present = np.flatnonzero(self._held > 0)
        if not len(present):
            return np.zeros((0, 1)), np.zeros(0, dtype=np.int64)
        rows = np.array([self._rows[at] for at in present.tolist()])
        rows = rows[:, : max(1, int((rows > 0).sum(axis=1).max()))]
        order = bytes_order(rows)
        return rows[order], self._held[present][order]


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
