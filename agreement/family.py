"""The kappa family reported together, for a whole control and for each of its labels.

Di Eugenio & Glass (2004, section 5) ask that kappa be reported with
what explains it: Cohen's kappa (each coder's own marginals), Siegel &
Castellan's kappa (pooled marginals, Fleiss' form for several coders) and the
prevalence-adjusted bias-adjusted kappa ``2P(A) - 1``, side by side, so that a
low kappa with a high PABAK reads as skewed prevalence rather than
disagreement. Beside them: Klemens' information-in-agreement P_I with each
label's ratio R_i (Klemens 2012), Krippendorff's alpha and SPA (Nørregaard &
Derczynski 2022).

Per label, each label is read one against the rest: an annotator either gave
it or gave another label, so every label has its own 2 x 2 tables, alpha and
SPA over yes/no items.
"""

from __future__ import annotations

import warnings
from itertools import combinations

import numpy as np
import pandas as pd
from numpy.typing import NDArray

from agreement.alpha import Level, krippendorff_alpha
from agreement.counts import LabelCounts, as_count_matrix
from agreement.information import category_ratios, information_agreement_many
from agreement.kappa import fleiss_kappa, table_measure_batch
from agreement.pairwise import AnnotatorLabels
from agreement.spa import spa
from agreement.undefined import UndefinedMeasureWarning

__all__ = ["ALL_LABELS", "FAMILY_COLUMNS", "agreement_family", "one_against_rest", "pair_tables", "undefined_notes",
           "weighted_mean"]

ALL_LABELS = "(all labels)"
"""The ``label`` of the row that scores the whole control."""

FAMILY_COLUMNS = ("label", "n_items", "kappa_co", "kappa_sc", "pabak", "p_i", "r_i", "alpha", "spa")


def pair_tables(labels: AnnotatorLabels) -> NDArray[np.float64]:
    """The contingency table of every pair of annotators with an item in common, as a ``(P, C, C)`` stack."""
    size = len(labels.categories)
    tables = [labels.table(a, b) for a, b in combinations(range(len(labels.annotators)), 2)]
    tables = [t for t in tables if t.sum() > 0]
    return np.stack(tables) if tables else np.zeros((0, size, size))


def one_against_rest(tables: NDArray[np.float64]) -> NDArray[np.float64]:
    """Each label's 2 x 2 tables (that label, any other) from ``(P, C, C)`` tables, as ``(C, P, 2, 2)``.

    Examples
    --------
    >>> one_against_rest(np.array([[[3., 1., 0.], [0., 2., 1.], [0., 0., 4.]]]))[1, 0].tolist()
    [[2.0, 1.0], [1.0, 7.0]]
    """
    diagonal = np.diagonal(tables, axis1=1, axis2=2)
    first = tables.sum(axis=2)
    second = tables.sum(axis=1)
    total = tables.sum(axis=(1, 2))[:, None]
    cells = np.stack([diagonal, first - diagonal, second - diagonal, total - first - second + diagonal], axis=-1)
    return cells.reshape(*cells.shape[:2], 2, 2).transpose(1, 0, 2, 3)


def weighted_mean(values: NDArray[np.float64], weights: NDArray[np.float64]) -> float:
    """The mean of the defined ``values`` with positive ``weights``; NaN when none is left."""
    defined = ~np.isnan(values) & (weights > 0)
    return float(np.average(values[defined], weights=weights[defined])) if defined.any() else float("nan")


def _row(label: str, tables: NDArray[np.float64], counts: NDArray[np.float64], *, level: Level,
         values: NDArray[np.float64] | None, r_i: float) -> dict[str, object]:
    """One row of the family: two-coder measures from the pair tables, the rest from the item counts."""
    size = tables.shape[-1]
    weights = tables.sum(axis=(1, 2))
    pooled = tables.sum(axis=0)
    total = pooled.sum()
    p_a = np.trace(pooled) / total if total > 0 else float("nan")
    return {
        "label": label,
        "n_items": int((counts.sum(axis=1) >= 2).sum()),
        "kappa_co": weighted_mean(table_measure_batch(tables, measure="cohen"), weights) if len(tables) else np.nan,
        "kappa_sc": fleiss_kappa(counts),
        "pabak": (size * p_a - 1.0) / (size - 1.0) if size > 1 else float("nan"),
        "p_i": information_agreement_many(list(tables)) if len(tables) else float("nan"),
        "r_i": r_i,
        "alpha": krippendorff_alpha(counts, level=level, values=values),
        "spa": spa(counts),
    }


def agreement_family(labels: AnnotatorLabels, counts: LabelCounts | NDArray[np.float64], *,
                     level: Level = "nominal", values: NDArray[np.float64] | None = None,
                     per_label: bool = True) -> pd.DataFrame:
    """kappa_Co, kappa_S&C, PABAK, P_I, R_i, alpha and SPA for a control and for each of its labels.

    Parameters
    ----------
    labels : AnnotatorLabels
        Each annotator's label of each item (:func:`agreement.annotator_labels`),
        over the same categories as ``counts``.
    counts : LabelCounts or ndarray, with shape (n_items, n_categories)
    level : {"nominal", "ordinal", "interval", "ratio"}
        Alpha's level for the control's row; the per-label rows are yes/no,
        hence nominal.
    values : ndarray, optional
        The categories' numeric values (ordinal, interval).
    per_label : bool, default True
        Add one row per label, read one against the rest.

    Returns
    -------
    pandas.DataFrame
        Columns :data:`FAMILY_COLUMNS`; the first row is :data:`ALL_LABELS`.

        * ``kappa_co``: Cohen's kappa of each pair of annotators, averaged
          with the pair's shared items as weights;
        * ``kappa_sc``: Siegel & Castellan's kappa, i.e. Fleiss' kappa with
          pooled marginals over every annotator (Di Eugenio & Glass 2004, eq. 3);
        * ``pabak``: :math:`(k P(A) - 1)/(k - 1)` with P(A) the share of
          agreeing pairs over all pairs' tables (``2P(A) - 1`` for a label);
        * ``p_i``: P_I over every pair (Klemens 2012, "Many raters");
        * ``r_i``: the label's :math:`R_i = p_{ii}/(p_{i\\cdot} p_{\\cdot i})`
          on the pooled, symmetrized pair table (Klemens 2012); None for the
          control's row;
        * ``alpha``, ``spa``: Krippendorff's alpha and SPA over the items.

        Undefined values are NaN, each with an
        :class:`~agreement.UndefinedMeasureWarning` saying why.

    References
    ----------
    Di Eugenio, B., & Glass, M. (2004). The kappa statistic: a second look.
    Klemens, B. (2012). Mutual information as a measure of intercoder agreement.

    Examples
    --------
    Di Eugenio & Glass 2004, Example 1 (two coders, 150 items; Figure 2): kappa_Co 0.6725,
    kappa_S&C 0.6633, and 2P(A) - 1 = 0.6667.

    >>> from agreement import annotator_labels, label_counts
    >>> pairs = [("acc", "acc")] * 70 + [("acc", "ack")] * 25 + [("ack", "ack")] * 55
    >>> rows = pd.DataFrame({"item": np.repeat(np.arange(150), 2), "annotator": ["A", "B"] * 150,
    ...                      "label": [label for pair in pairs for label in pair]})
    >>> table = agreement_family(annotator_labels(rows), label_counts(rows), per_label=False)
    >>> table.loc[0, ["kappa_co", "kappa_sc", "pabak"]].astype(float).round(4).tolist()
    [0.6725, 0.6633, 0.6667]
    """
    x = as_count_matrix(counts)
    tables = pair_tables(labels)
    if tables.shape[-1] != x.shape[1]:
        raise ValueError(f"The annotators' labels have {tables.shape[-1]} categories and the counts "
                         f"{x.shape[1]}; give both over the same categories.")
    rows = [_row(ALL_LABELS, tables, x, level=level, values=values, r_i=float("nan"))]
    if per_label and x.shape[1] > 1:
        symmetric = tables.sum(axis=0) + tables.sum(axis=0).T
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)
            ratios = category_ratios(symmetric)
        binary = one_against_rest(tables)
        n = x.sum(axis=1)
        for code, label in enumerate(labels.categories):
            yes_no = np.column_stack([x[:, code], n - x[:, code]])
            rows.append(_row(str(label), binary[code], yes_no, level="nominal", values=None,
                             r_i=float(ratios[code])))
    return pd.DataFrame(rows, columns=list(FAMILY_COLUMNS))


def undefined_notes(caught: list[warnings.WarningMessage]) -> list[str]:
    """The distinct reasons of the undefined-measure warnings in ``caught``, in order."""
    out: list[str] = []
    for warning in caught:
        if issubclass(warning.category, UndefinedMeasureWarning) and str(warning.message) not in out:
            out.append(str(warning.message))
    return out
