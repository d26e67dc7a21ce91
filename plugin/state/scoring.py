"""Scores of a project and of each of its tasks, from mapped controls; no I/O.

Per control: SPA (``annotations_m1`` weights) with a bootstrap interval,
Krippendorff's alpha at the level the tag implies, Fleiss' kappa, Gwet's AC1
(AC2 for ordered labels), the kappa family for every pair of annotators
(weighted for ordered labels), each annotator's agreement with the others,
the most confused label pairs and each label's specific agreement, and for
multiple choices the augmented kappa and per-label agreement.

Per task and control (:func:`task_terms`, called by :mod:`plugin.state.project`):
SPA over the task's items (one item for a choice, one per span or label for
spans and multiple choices), the task's alpha term ``1 - d_task / D_e``, where
``d_task`` is the task's mean pairwise disagreement and ``D_e`` the project's
expected disagreement (Nørregaard & Derczynski 2022, eq. 5), and for ordered
labels the weighted agreement. Per task, the mean over its controls
(:class:`plugin.state.task_scores.TaskScores`) and the flag (:mod:`plugin.state.flags`).

It is past 600 lines because a project's scores and a task's terms share their inputs (the expected disagreement,
the level of measurement, the weights): computed in one module, a task's alpha term and the project's alpha cannot
be computed from different ones.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import partial
from typing import Any, NamedTuple

import numpy as np
import pandas as pd

from agreement import (
    AnnotatorLabels,
    GwetEstimate,
    RunningAgreement,
    UndefinedMeasureWarning,
    alpha_item_disagreement,
    augmented_sweep,
    bootstrap_ci,
    classify_items,
    cohen_kappa,
    fleiss_kappa,
    gwet_ac,
    item_agreement,
    krippendorff_alpha,
    ranked_labels,
    spa,
)
from agreement.annotators import annotator_agreement
from agreement.bootstrap import bootstrap_distinct, canonical_rows
from agreement.confusion import confused_pairs, specific_agreement
from agreement.counts import WIDE_CELLS, LabelCounts
from agreement.gamma import ExpectedDisorder, expected_disorder, gamma_of, observed_disorder
from agreement.spa import spa_batch
from agreement.span_f1 import SpanF1, span_f1
from agreement.uniques import unique_inverse
from agreement.unitizing import u_alpha, unitizing_alpha
from agreement.units import Units
from plugin.mapping import MappedControl
from plugin.mapping.choices import is_label_set
from plugin.mapping.coded import RankedItems
from plugin.mapping.item_names import split_item_names
from plugin.mapping.span_units import span_units
from plugin.settings import ScoringOptions
from plugin.state.consensus import ConsensusFit

__all__ = [
    "ControlScore",
    "TaskScore",
    "TaskTerms",
    "annotator_rows",
    "is_wide",
    "name_of",
    "named_rows",
    "number",
    "rounded",
    "score_control",
    "spa_interval",
    "spa_interval_of_shapes",
    "span_scores",
    "task_terms",
    "wide_note",
]


MAX_WEIGHTED_CATEGORIES = 200
"""Ordered controls with more distinct values than this get no weighted kappa per pair (it needs a table)."""


def number(value: float | None) -> float | None:
    """A finite float rounded to 6 places, or None (undefined)."""
    return None if value is None or not math.isfinite(value) else round(float(value), 6)


def rounded(values: Sequence[float | None] | np.ndarray) -> np.ndarray:
    """Values as :func:`number` gives them, as float64 with NaN for None (undefined).

    >>> rounded([0.12345678, None, float("inf")]).tolist()
    [0.123457, nan, nan]
    """
    array = np.array(values, dtype=np.float64)  # None reads as NaN
    finite = np.isfinite(array)
    out = np.full(array.shape, np.nan)
    distinct, where = unique_inverse(array[finite], sort=False)  # scores repeat: each is rounded once
    out[finite] = np.array([round(value, 6) for value in distinct.tolist()], dtype=np.float64)[where]
    return out


@dataclass(frozen=True)
class ControlScore:
    """A control's project-level scores.

    Attributes
    ----------
    name, tag, level : str
    n_items, n_pairable_items, n_annotators : int
    n_annotations : int
        The annotations that answered the control: distinct task and annotator pairs, as Label Studio counts
        annotations (and ``/status`` and the tasks' meta do).
    spa : float or None
        SPA with ``annotations_m1`` weights.
    spa_ci : tuple of float, optional
        Its bootstrap interval ``(low, high)``.
    alpha : float or None
        Krippendorff's alpha at ``level``.
    fleiss : float or None
    pairs : list of dict
        Per annotator pair: ``annotators``, ``n_items``, ``cohen``, ``scott``,
        ``pabak``, and ``weighted_kappa`` (quadratic) for ordered labels.
    augmented : dict, optional
        Multiple choices: kappa' by p, and how many items fall in each class.
    labels : dict, optional
        Multiple choices: per label, its yes/no ``spa`` and ``alpha``.
    gwet : dict, optional
        Gwet's AC1 (nominal) or AC2 (ordinal and quadratic weights for
        interval): ``coefficient``, ``value``, ``std_error`` and the analytic
        95% ``ci`` (Gwet 2014).
    annotators : list of dict
        Per annotator (:func:`agreement.annotators.annotator_agreement`):
        ``annotator``, ``n_items``, ``n_compared``, ``mean_pairwise`` (kappa),
        ``with_majority``, ``outlier``.
    confusions : list of dict
        The label pairs with the most disagreement: ``labels``, ``coincidences``.
    label_agreement : dict, optional
        Nominal controls: each label's specific agreement.
    spans : dict, optional
        Span-like controls (None for the others): the span measures of
        :func:`span_scores`, pairwise F1 exact and overlap, unitizing alpha
        (1995/2004), the 2016 uα family and gamma.
    references : dict, optional
        With a ground truth or model predictions on some task
        (:func:`plugin.state.references.reference_block`): ``ground_truth`` and
        ``models``, each annotator against them.
    consensus : ConsensusFit, optional
        Categorical controls: the consensus model fit over every item (:mod:`plugin.state.consensus`).
    n_labels : int
        The labels those annotations gave over the control's items (one per annotator and item: a label set's
        yes/no per label, a span control's regions and the "no span" of an annotator who marked none there): what
        SPA and alpha count.
    """

    name: str
    tag: str
    level: str
    n_items: int
    n_pairable_items: int
    n_annotations: int
    n_annotators: int
    spa: float | None
    spa_ci: tuple[float | None, float | None] | None
    alpha: float | None
    fleiss: float | None
    pairs: list[dict[str, Any]] = field(default_factory=list)
    augmented: dict[str, Any] | None = None
    labels: dict[str, dict[str, float | None]] | None = None
    gwet: dict[str, Any] | None = None
    annotators: list[dict[str, Any]] = field(default_factory=list)
    confusions: list[dict[str, Any]] = field(default_factory=list)
    label_agreement: dict[str, float | None] | None = None
    spans: dict[str, Any] | None = None
    references: dict[str, Any] | None = None
    consensus: ConsensusFit | None = None
    notes: tuple[str, ...] = ()
    n_labels: int = 0

    def summary(self, *, people: Mapping[str, str] | None = None) -> dict[str, Any]:
        """The control's scores as JSON-ready data (without the per-task table); consensus names from ``people``."""
        out: dict[str, Any] = {
            "tag": self.tag, "level": self.level, "spa": self.spa,
            "spa_ci": list(self.spa_ci) if self.spa_ci else None, "alpha": self.alpha, "fleiss": self.fleiss,
            "gwet": self.gwet, "annotators": self.annotators, "confusions": self.confusions,
            "label_agreement": self.label_agreement,
            "n_items": self.n_items, "n_pairable_items": self.n_pairable_items,
            "n_annotations": self.n_annotations, "n_labels": self.n_labels, "n_annotators": self.n_annotators,
            "pairs": self.pairs,
        }
        if self.spans is not None:
            out["n_regions"] = self.spans["n_units"]
        if self.augmented is not None:
            out["augmented"] = self.augmented
        if self.labels is not None:
            out["labels"] = self.labels
        out["spans"] = self.spans
        if self.references is not None:
            out["references"] = self.references
        if self.consensus is not None:
            out["consensus"] = self.consensus.summary(people or {},
                                                      ground_truth=(self.references or {}).get("ground_truth"))
        if self.notes:
            out["notes"] = list(self.notes)
        return out


@dataclass(frozen=True)
class TaskScore:
    """A task's scores, as written into its meta.

    Attributes
    ----------
    task : int
    n_annotations : int
        Counted annotations (annotators) on the task.
    spa, alpha : float or None
        The mean over the task's controls; None while undefined.
    flagged : bool
    reasons : tuple of str
    controls : dict
        Per control: ``spa``, ``alpha``, ``n_items``.
    """

    task: int
    n_annotations: int
    spa: float | None
    alpha: float | None
    flagged: bool
    reasons: tuple[str, ...]
    controls: dict[str, dict[str, Any]]


def spa_interval(counts: np.ndarray, options: ScoringOptions) -> tuple[float | None, float | None] | None:
    """SPA's bootstrap interval (``annotations_m1``), or None when no item is pairable.

    SPA with this scheme depends on each item's counts, not on which
    categories hold them; the rows are put in one canonical form (counts in
    decreasing order, empty columns dropped) before resampling, so the live
    sums (which keep nominal items without their categories) and a batch read
    of the same items draw the same resamples and give the same interval.
    """
    counts = np.asarray(counts, dtype=np.float64)
    if counts.size == 0 or not (counts.sum(axis=1) >= 2).any():
        return None
    ci = bootstrap_ci(canonical_rows(counts), "spa", n_resamples=options.n_resamples, confidence=options.confidence,
                      seed=options.seed)
    return number(ci.low), number(ci.high)


def spa_interval_of_shapes(shapes: tuple[np.ndarray, np.ndarray],
                           options: ScoringOptions) -> tuple[float | None, float | None] | None:
    """:func:`spa_interval` of items given by their distinct shapes and how many items have each.

    The shapes are :meth:`plugin.state.codes.RowsTally.shapes`: the distinct rows of
    :func:`~agreement.bootstrap.canonical_rows` in :func:`~agreement.itemsums.compress_rows`'s order, from which
    :func:`spa_interval` resamples (:func:`agreement.bootstrap.bootstrap_distinct`): the same draws, the same
    interval, in O(shapes).
    """
    rows, multiplicity = shapes
    if not len(rows) or not (rows.sum(axis=1) >= 2).any():
        return None
    ci = bootstrap_distinct(rows, multiplicity, partial(spa_batch, weights="annotations_m1"),
                            n_resamples=options.n_resamples, confidence=options.confidence, seed=options.seed)
    return number(ci.low), number(ci.high)


def _values(counts: LabelCounts, level: str) -> np.ndarray | None:
    return None if level == "nominal" else counts.numeric_values()


class TaskTerms(NamedTuple):
    """Per-task SPA, alpha term, item count and weighted agreement, aligned on ``tasks`` (sorted)."""

    tasks: np.ndarray
    spa: np.ndarray
    alpha: np.ndarray
    n_items: np.ndarray
    agreement: np.ndarray


def task_terms(counts: np.ndarray, tasks: np.ndarray, *, level: str, values: np.ndarray | None, expected: float,
               marginals: np.ndarray | None = None, weights: np.ndarray | None = None) -> TaskTerms:
    """Per task: SPA over its items and its alpha term, by weighted sums over items (no per-task loop).

    SPA weighs items by ``n_i - 1`` (Nørregaard & Derczynski's ``annotations_m1``); the alpha
    term is ``1 - d_task / D_e`` with ``d_task = sum_i n_i d_i / sum_i n_i``
    over the task's pairable items (Nørregaard & Derczynski 2022, eq. 5-6).

    Parameters
    ----------
    counts : ndarray, with shape (n_items, n_categories)
        For nominal data the columns may be any arrangement of each item's
        counts (the live state passes them packed).
    tasks : ndarray, with shape (n_items,)
        The task of each item.
    level : str
    values : ndarray, optional
        Numeric value of each column (ordinal, interval).
    expected : float
        The project's expected disagreement ``D_e``.
    marginals : ndarray, optional
        The project's pairable values per column, which place the ordinal
        distances; by default those of ``counts``.
    weights : ndarray, with shape (n_categories, n_categories), optional
        Agreement weights between categories (Gwet 2014, ch. 3): ``agreement``
        is then the weighted percent agreement of the task's items,
        :math:`\\sum_k x_k (\\sum_l w_{kl} x_l - 1) / (n (n - 1))`, weighed like
        SPA; without weights it equals SPA. A rating of 4 against 5 on 1..5 is
        0.9 with ordinal weights, where SPA says 0.
    """
    task_ids, codes = unique_inverse(np.asarray(tasks))
    counts = np.asarray(counts, dtype=np.float64)
    n = counts.sum(axis=1)
    pairable = n >= 2
    with np.errstate(divide="ignore", invalid="ignore"):
        if level == "nominal":  # P_i = sum_c n_ic (n_ic - 1) / (n_i (n_i - 1)), d_i = 1 - P_i
            agreement = np.where(pairable, (np.einsum("ij,ij->i", counts, counts) - n) / (n * (n - 1.0)), 0.0)
            disagreement = np.where(pairable, 1.0 - agreement, 0.0)
        else:
            agreement = np.where(pairable, item_agreement(counts), 0.0)
            disagreement = np.where(pairable, alpha_item_disagreement(
                counts, level=level, values=values, marginals=marginals), 0.0)  # type: ignore[arg-type]
    weight = np.where(pairable, n - 1.0, 0.0)  # annotations_m1
    size = len(task_ids)
    if weights is not None:
        with np.errstate(divide="ignore", invalid="ignore"):
            within = np.einsum("ij,ij->i", counts, counts @ np.asarray(weights).T) - n
            weighted = np.where(pairable, within / (n * (n - 1.0)), 0.0)
        weighted_numerator = np.bincount(codes, weights=weight * weighted, minlength=size)
    spa_numerator = np.bincount(codes, weights=weight * agreement, minlength=size)
    spa_denominator = np.bincount(codes, weights=weight, minlength=size)
    pair_values = np.bincount(codes, weights=np.where(pairable, n, 0.0), minlength=size)
    observed = np.bincount(codes, weights=np.where(pairable, n, 0.0) * disagreement, minlength=size)
    with np.errstate(divide="ignore", invalid="ignore"):
        task_spa = np.where(spa_denominator > 0, spa_numerator / spa_denominator, np.nan)
        alpha = 1.0 - (observed / pair_values) / expected if expected and math.isfinite(expected) else np.nan
        task_alpha = np.where(pair_values > 0, alpha, np.nan)
        task_weighted = (task_spa if weights is None else
                         np.where(spa_denominator > 0, weighted_numerator / spa_denominator, np.nan))
    n_items = np.bincount(codes, weights=(n > 0).astype(float), minlength=size).astype(int)
    return TaskTerms(task_ids, task_spa, task_alpha, n_items, task_weighted)


def _pairs(labels: AnnotatorLabels, level: str) -> list[dict[str, Any]]:
    """Per pair of annotators: the kappa family, and for ordered labels the quadratic-weighted kappa.

    The annotators' labels are arranged by :func:`agreement.annotator_labels`.
    """
    values = None
    if level != "nominal":
        numeric = pd.to_numeric(pd.Series(labels.categories), errors="coerce")
        values = None if numeric.isna().any() else numeric.to_numpy(dtype=float)
    if values is not None and len(values) > MAX_WEIGHTED_CATEGORIES:
        values = None  # a weighted kappa needs the pair's table: categories x categories
    pairs = labels.pair_measures()  # from the codes: free text's thousands of labels cost no table
    tables = labels.pair_tables() if values is not None else None
    out = []
    for at, pair in enumerate(pairs.itertuples(index=False)):
        scores = {name: number(getattr(pair, name)) for name in ("cohen", "scott", "pabak")}
        if tables is not None:  # a 4 against a 5 is near-agreement (Cohen 1968)
            scores["weighted_kappa"] = number(cohen_kappa(tables[at], weights="quadratic", values=values))
        out.append({"annotators": [str(labels.annotators[pair.first]), str(labels.annotators[pair.second])],
                    "n_items": int(pair.n_items), **scores})
    return out


def _augmented(mapped: MappedControl) -> dict[str, Any] | None:
    """A multiple-choice control's augmented kappa over ``p`` and its items' classes; None below two annotators.

    Read from the ranked items the project's state computed with the tasks' scores when it did, else from
    :attr:`MappedControl.ranked`.
    """
    ranked = mapped.coded.ranked if mapped.coded is not None else None
    if ranked is None:
        table = mapped.ranked
        if table is None or not len(table):
            return None
        labels = ranked_labels(table)
        ranked = RankedItems(labels, classify_items(labels)["item_class"])
    if len(ranked.labels.annotators) < 2:
        return None
    sweep = augmented_sweep(ranked.labels)
    classes = ranked.classes.value_counts()
    return {"kappa": {f"{p:.1f}": number(v) for p, v in sweep.items()},
            "item_classes": {str(k): int(v) for k, v in classes.items()}}


def _per_label(mapped: MappedControl, counts: LabelCounts) -> dict[str, dict[str, float | None]]:
    """A label set (multiple choices, multi-path taxonomy): agreement on each label's yes/no items."""
    labels = mapped.control.labels or None
    if mapped.coded is not None:  # each item's label from the codes: no item put into words
        names = mapped.coded.item_labels(labels)
    else:
        names = split_item_names([str(item) for item in counts.items.tolist()], labels)[1]
    out = {}
    for label in mapped.control.labels or sorted(set(names)):
        subset = counts.counts[names == label]
        out[label] = {"spa": number(spa(subset)), "alpha": number(krippendorff_alpha(subset))}
    return out


def name_of(annotator: str, people: Mapping[str, str]) -> str:
    """An annotator's name and email as Label Studio knows them, else the id.

    >>> name_of("2", {"2": "Ann <ann@example.com>"}), name_of("3", {})
    ('Ann <ann@example.com>', '3')
    """
    return people.get(annotator, annotator)


def named_rows(rows: Iterable[Mapping[str, Any]], people: Mapping[str, str]) -> list[dict[str, Any]]:
    """Annotator rows (:func:`annotator_rows`) with each annotator's ``name`` beside the id.

    >>> named_rows([{"annotator": "2", "n_items": 4}], {"2": "Ann"})
    [{'annotator': '2', 'n_items': 4, 'name': 'Ann'}]
    """
    return [{**row, "name": name_of(row["annotator"], people)} for row in rows]


def annotator_rows(rows: pd.DataFrame | AnnotatorLabels) -> list[dict[str, Any]]:
    """Each annotator's agreement with the others on one control's rows, as JSON-ready rows.

    The rows may also be given arranged by :func:`agreement.annotator_labels`. No rows without rows in.
    """
    if isinstance(rows, pd.DataFrame) and not len(rows):
        return []
    table = annotator_agreement(rows)
    return [{"annotator": str(who), "n_items": int(row.n_items), "n_compared": int(row.n_compared),
             "mean_pairwise": number(row.mean_pairwise), "with_majority": number(row.with_majority),
             "outlier": bool(row.outlier)} for who, row in table.iterrows()]


def _gwet_summary(estimate: GwetEstimate, level: str) -> dict[str, Any]:
    return {"coefficient": "AC1" if level == "nominal" else "AC2", "value": number(estimate.value),
            "std_error": number(estimate.std_error), "ci": [number(estimate.low), number(estimate.high)]}


def _f1_summary(result: SpanF1) -> dict[str, Any]:
    """Mean and SD over pairs, per label, and the pair table of one match's pairwise F1."""
    mean, sd = result.total() if len(result.doc) else (math.nan, math.nan)
    table = result.per_label()
    pairs = result.pair_table()
    return {"mean": number(mean), "sd": number(sd),
            "per_label": {str(label): {"mean": number(row["mean"]), "sd": number(row["sd"]),
                                     "n_pairs": int(row["pairs"])}
                          for label, row in table.iterrows()},
            "pairs": [{"annotators": [str(row.annotator_a), str(row.annotator_b)], "f1": number(row.f1),
                       "tp": int(row.tp), "n_a": int(row.n_a), "n_b": int(row.n_b)} for row in pairs.itertuples()]}


def _lengths_source(mapped: MappedControl, units: Units) -> str:
    """How the continua's lengths were found.

    ``"text"`` or ``"media"`` when the tasks gave every one, else ``"extent"`` (some or all are the extent of their
    units).
    """
    known = mapped.lengths or {}
    if not units.docs or any(known.get(doc) is None for doc in units.docs):
        return "extent"
    return "text" if mapped.control.object_tag in ("text", "hypertext", "paragraphs") else "media"


def span_scores(mapped: MappedControl, options: ScoringOptions, *, span_jaccard: float = 0.5,
                expected: ExpectedDisorder | None = None, observed: float | None = None,
                unaligned: int | None = None,
                f1_counts: Mapping[str, SpanF1] | None = None) -> dict[str, Any] | None:
    """The span measures of a span-like control over the project, or None for another control.

    The continua are :func:`plugin.mapping.span_units.span_units`'s, one per
    ``(task, scope)`` with the lengths ``mapped.lengths`` gives:

    - ``f1``: pairwise F1 (Hripcsak & Rothschild 2005), :math:`2\\,TP / (|A| + |B|)`
      per annotator pair with counts summed over tasks and labels, its mean
      and population SD over pairs, per label and the pair table; ``exact``
      (same start, end and label) and ``overlap`` (same label, Jaccard at least
      ``span_jaccard``, an optimal one-to-one matching; ``f1_counts`` per
      match, when the caller holds them for these units and ``span_jaccard``);
    - ``unitizing_alpha``: Krippendorff's 1995/2004 unitizing alpha, overall
      and per label, with its observed and expected disagreement, and
      ``most_annotators``, the most annotators on one continuum (above two
      it misbehaves: :func:`plugin.state.spans.unitizing_caveat`);
    - ``u_alpha``: the 2016 uα, |uα (``binary``) and cuα (``coding``)
      (Krippendorff, Mathet, Bouvry & Widlöcher 2016);
    - ``gamma``: Mathet, Widlöcher & Métivier's (2015) gamma with the sampling
      interval of its expected disorder (``expected``, when the caller holds
      it sampled with ``options``' gamma settings; otherwise sampled here) and
      the observed disorder (``observed``, when the caller holds every task's
      best alignment: the summed disorders over the summed units per
      annotator, the same sums, with the tasks it leaves ``unaligned``;
      otherwise aligned here), and ``n_unaligned_tasks``, the tasks whose
      spans overlap among too many annotators to align exactly
      (:data:`agreement.set_partition.MAX_CANDIDATES`), left out of the observed disorder.

    Every number goes through :func:`number` (None when undefined).
    """
    if mapped.spans is None:
        return None
    units = span_units(mapped, lengths=mapped.lengths)
    counts = dict(f1_counts) if f1_counts is not None else {
        "exact": span_f1(units, match="exact"), "overlap": span_f1(units, match="overlap", jaccard=span_jaccard)}
    f1 = {"exact": _f1_summary(counts["exact"]), "overlap": {**_f1_summary(counts["overlap"]), "jaccard": span_jaccard}}
    unitizing = unitizing_alpha(units)
    family = u_alpha(units)
    dissimilarity = {"alpha": options.gamma_alpha, "beta": options.gamma_beta, "delta_empty": options.gamma_empty}
    if observed is None:
        disorder = observed_disorder(units, **dissimilarity)
        observed = disorder.value
        unaligned = len({units.docs[doc][0] for doc in np.flatnonzero(disorder.unaligned).tolist()})
        if expected is None:  # sampled from the corpus the observed disorder measures
            expected = expected_disorder(units, n_samples=options.gamma_samples, seed=options.gamma_seed,
                                         leave_out=disorder.unaligned, **dissimilarity)
    if expected is None:
        expected = expected_disorder(units, n_samples=options.gamma_samples, seed=options.gamma_seed, **dissimilarity)
    result = gamma_of(observed, expected)
    return {
        "f1": f1,
        "unitizing_alpha": {"value": number(unitizing.value), "observed": number(unitizing.observed),
                            "expected": number(unitizing.expected),
                            "per_label": {str(label): {"value": number(row["value"]),
                                                       "observed": number(row["observed"]),
                                                       "expected": number(row["expected"])}
                                          for label, row in unitizing.per_label.iterrows()},
                            "most_annotators": int(units.present.sum(axis=1).max()) if len(units.docs) else 0},
        "u_alpha": {"value": number(family.value), "binary": number(family.binary), "coding": number(family.coding)},
        "gamma": {"value": number(result.value), "observed": number(result.observed),
                  "expected": number(result.expected), "low": number(result.low), "high": number(result.high),
                  "seed": result.seed, "n_samples": result.n_samples, "n_unaligned_tasks": unaligned or 0},
        "n_units": units.n_units, "n_continua": len(units.docs), "lengths": _lengths_source(mapped, units),
    }


def score_control(mapped: MappedControl, options: ScoringOptions, *, span_jaccard: float = 0.5,
                  expected: ExpectedDisorder | None = None, observed: float | None = None,
                  unaligned: int | None = None, f1_counts: Mapping[str, SpanF1] | None = None) -> ControlScore:
    """Score one mapped control for the project (the tasks are scored by :mod:`plugin.state.project`).

    Undefined measures become None; their warnings are expected while few
    annotations exist and are not re-emitted. A span-like control also gets
    :func:`span_scores` (``span_jaccard`` for overlap F1, ``expected`` and
    ``observed`` gamma's disorders with the tasks the latter leaves ``unaligned``, and ``f1_counts`` the F1 counts
    when the caller holds them).
    """
    control = mapped.control
    if is_wide(mapped):
        return _score_wide(mapped, options)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UndefinedMeasureWarning)
        counts = mapped.label_counts()  # from the codes, when a project's state gives them
        values = _values(counts, mapped.level)
        pairable = int((counts.counts.sum(axis=1) >= 2).sum())
        project_spa = spa(counts)
        interval = spa_interval(counts.counts, options)
        alpha = krippendorff_alpha(counts, level=mapped.level, values=values)
        gwet = gwet_ac(counts, level=mapped.level, values=values) if counts.n_items else None
        categories = [str(c) for c in counts.categories]
        confusions = [{"labels": [a, b], "coincidences": number(v)}
                      for a, b, v in confused_pairs(counts, categories)] if pairable else []
        label_agreement = ({c: number(v) for c, v in zip(categories, specific_agreement(counts), strict=True)}
                           if mapped.level == "nominal" and pairable else None)
        # arranged once: the pairs and each annotator
        by_annotator = mapped.annotator_labels() if mapped.n_rows else None
        return ControlScore(
            name=control.name, tag=control.tag, level=mapped.level,
            n_items=counts.n_items, n_pairable_items=pairable, n_annotations=mapped.n_answered(),
            n_labels=mapped.n_rows,
            n_annotators=mapped.n_annotators(),
            spa=number(project_spa), spa_ci=interval, alpha=number(alpha),
            fleiss=number(fleiss_kappa(counts)) if mapped.level == "nominal" else None,
            pairs=_pairs(by_annotator, mapped.level) if by_annotator is not None else [],
            gwet=_gwet_summary(gwet, mapped.level) if gwet is not None else None,
            annotators=annotator_rows(by_annotator) if by_annotator is not None else [],
            confusions=confusions, label_agreement=label_agreement,
            augmented=_augmented(mapped),
            labels=_per_label(mapped, counts) if is_label_set(mapped) else None,
            spans=span_scores(mapped, options, span_jaccard=span_jaccard, expected=expected, observed=observed,
                              unaligned=unaligned, f1_counts=f1_counts),
        )


def is_wide(mapped: MappedControl) -> bool:
    """Whether a nominal control's count matrix would exceed :data:`agreement.counts.WIDE_CELLS` cells.

    That happens for free text with a new answer on most items; its measures are then computed from sparse counts.
    """
    if mapped.level != "nominal" or not mapped.n_rows:
        return False
    return mapped.n_items() * mapped.n_labels() > WIDE_CELLS


def _score_wide(mapped: MappedControl, options: ScoringOptions) -> ControlScore:
    """:func:`score_control` of a nominal control with too many labels for a count matrix.

    Such a control is one for which :func:`is_wide` holds.

    SPA with its interval, alpha, AC1 and Fleiss' kappa come from sparse
    counts (:meth:`agreement.RunningAgreement.of_counts`; the same values),
    the pairs and annotators from the annotators' codes. What needs a table
    over the labels is left out, and said in :attr:`ControlScore.notes`: AC1's
    analytic interval, the most confused label pairs and each label's
    specific agreement.
    """
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UndefinedMeasureWarning)
        counts, labels = mapped.sparse_counts()
        sums = RunningAgreement.of_counts(counts)
        by_annotator = mapped.annotator_labels()  # arranged once: the pairs and each annotator
        return ControlScore(
            name=mapped.control.name, tag=mapped.control.tag, level=mapped.level,
            n_items=counts.n_items, n_pairable_items=int((counts.totals() >= 2).sum()),
            n_annotations=mapped.n_answered(), n_labels=mapped.n_rows, n_annotators=mapped.n_annotators(),
            spa=number(sums.spa()),
            spa_ci=spa_interval(counts.packed(), options), alpha=number(sums.alpha()),
            fleiss=number(sums.fleiss_kappa()), pairs=_pairs(by_annotator, mapped.level),
            gwet={"coefficient": "AC1", "value": number(sums.gwet_ac1(n_categories=len(labels))), "std_error": None,
                  "ci": [None, None]},
            annotators=annotator_rows(by_annotator), notes=(wide_note(len(labels), counts.n_items),))


def wide_note(n_labels: int, n_items: int) -> str:
    """What a control with too many labels for a count matrix (:func:`is_wide`) is scored without."""
    return (f"{n_labels} distinct labels on {n_items} items: the measures come from sparse counts, without AC1's "
            f"interval, the most confused label pairs or each label's specific agreement.")
