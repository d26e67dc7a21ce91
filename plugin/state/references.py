"""References: a task's ground truth and its models' predictions, scored against the annotators.

Ground truth. An annotation with ``ground_truth: true`` is its task's
reference: imported with the tasks (no annotator's work, see
:mod:`plugin.mapping.annotations`), or marked by a reviewer on an annotator's
annotation, which then stays that annotator's among the annotators and is the
reference for the others on the task, never for its author. Label Studio keeps
one per task; should a read carry several, the imported one is the reference,
else the latest.

Model predictions. A task's ``predictions`` grouped by ``model_version`` (an
empty version is ``"(no version)"``); when a version predicted a task twice,
the later prediction counts (by ``created_at``, then id). The task's *latest*
model version is that of its latest prediction.

Each reference is mapped together with the task's counted annotations, as one
more annotator (keys :data:`GROUND_TRUTH` and ``model:<version>``), so its items
are built exactly as the annotators' are: the same mapping and, for regions and
spans, the same alignment. Where the items depend on who answered (regions,
spans), each reference is aligned with the annotators alone, never with another
reference (:func:`aligned_with`): an annotator's accuracy on the ground truth is
the same whether the tasks carry model predictions or not (a live project, or an
export without them).
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from itertools import repeat
from operator import itemgetter
from typing import Any

import numpy as np
import pandas as pd

from agreement import UndefinedMeasureWarning
from agreement.reference import REFERENCE_COLUMNS, against_reference, majority_labels, pairwise_kappa_mean
from agreement.uniques import unique_counts, unique_inverse
from plugin.mapping.annotations import Skips, Submission, annotator_key, is_imported
from plugin.settings import ScoringOptions
from plugin.state.predictions import MODEL_VERSION as CONSENSUS_VERSION

__all__ = ["ALIGNED_MARK", "GROUND_TRUTH", "MODEL_PREFIX", "REFERENCE_PREFIX", "TaskReferences", "aligned_with",
           "control_references", "is_reference", "item_of", "model_key", "reference_block", "reference_frame",
           "task_reference_shares", "task_references"]

REFERENCE_PREFIX = "ref:"
GROUND_TRUTH = "ref:ground_truth"
MODEL_PREFIX = "ref:model:"
NO_VERSION = "(no version)"
ALIGNED_MARK = "\x1f"
"""Between an item's key and the reference it was aligned with (:func:`aligned_with`); no mapping writes it."""


def aligned_with(reference: str, records: Iterable[tuple[Any, ...]]) -> list[tuple[Any, ...]]:
    """Rows ``(task, item, annotator, label)`` mapped with one reference alone, each item marked as aligned with it.

    A task's regions and spans are aligned with each reference apart; the annotators' rows of each alignment are
    kept beside the reference's, under items of their own, so that one reference's items never depend on
    another's.

    >>> aligned_with("ref:ground_truth", [(3, "3:0-5", "1", "PER")])
    [(3, '3:0-5\\x1fref:ground_truth', '1', 'PER')]
    >>> item_of('3:0-5\\x1fref:ground_truth'), item_of("3:0-5")
    ('3:0-5', '3:0-5')
    """
    return [(task, f"{item}{ALIGNED_MARK}{reference}", annotator, label) for task, item, annotator, label in records]


def item_of(key: Any) -> Any:
    """An item's key without the reference it was aligned with (:func:`aligned_with`): the key the mapping gave."""
    return key.partition(ALIGNED_MARK)[0] if isinstance(key, str) else key


def _aligned_reference(items: pd.Series) -> np.ndarray:
    """Per row, the reference its item was aligned with (``""``: an item every reference shares)."""
    if not len(items) or not items.str.contains(ALIGNED_MARK, regex=False).any():
        return np.full(len(items), "", dtype=object)
    return items.str.partition(ALIGNED_MARK)[2].to_numpy(dtype=object)


def model_key(version: Any) -> str:
    """The reference key of a model version."""
    text = str(version).strip() if version is not None else ""
    return f"{MODEL_PREFIX}{text or NO_VERSION}"


def is_reference(annotator: str) -> bool:
    """Whether an annotator key is a reference's."""
    return annotator.startswith(REFERENCE_PREFIX)


@dataclass(frozen=True)
class TaskReferences:
    """The references of one task.

    Attributes
    ----------
    submissions : tuple of Submission
        One per reference, its ``annotator`` the reference's key.
    author : str or None
        The annotator whose own annotation a reviewer marked as the ground truth (None when imported or absent).
    latest_model : str or None
        The key of the model version that predicted the task last.
    """

    submissions: tuple[Submission, ...] = ()
    author: str | None = None
    latest_model: str | None = None


def _results(entry: Mapping[str, Any], what: str, skips: Skips) -> tuple[Mapping[str, Any], ...] | None:
    results = entry.get("result")
    if not isinstance(results, list):
        skips.add(f"{what} whose result is not a list")
        return None
    kept = tuple(r for r in results if isinstance(r, Mapping))
    if len(kept) != len(results):
        skips.add(f"{what} result item that is not an object", len(results) - len(kept))
    return kept


def _when(entry: Mapping[str, Any]) -> tuple[str, int]:
    identifier = entry.get("id")
    return (str(entry.get("created_at") or entry.get("updated_at") or ""),
            identifier if isinstance(identifier, int) and not isinstance(identifier, bool) else 0)


def task_references(task: Mapping[str, Any], identifier: int, skips: Skips) -> TaskReferences:
    """The ground truth and the latest prediction of each model version of ``task``.

    What cannot be used is counted in ``skips``.

    >>> task = {"annotations": [{"id": 1, "completed_by": 4, "ground_truth": True, "updated_by": 4, "result": []}],
    ...         "predictions": [{"id": 7, "model_version": "v1", "created_at": "2026-01-02", "result": []},
    ...                         {"id": 5, "model_version": "v1", "created_at": "2026-01-01", "result": []}]}
    >>> refs = task_references(task, 3, Skips())
    >>> [s.annotator for s in refs.submissions], refs.author, refs.latest_model, refs.submissions[1].annotation
    (['ref:ground_truth', 'ref:model:v1'], '4', 'ref:model:v1', 7)
    """
    out: list[Submission] = []
    truths = []
    annotations = task.get("annotations")
    for annotation in annotations if isinstance(annotations, list) else ():
        if isinstance(annotation, Mapping) and annotation.get("ground_truth") is True \
                and not annotation.get("was_cancelled"):
            truths.append(annotation)
    author = None
    if truths:
        truth = max(truths, key=lambda a: (is_imported(a), _when(a)))
        results = _results(truth, "ground truth", Skips())  # its own skips are counted as an annotation's
        if results is not None:
            author = None if is_imported(truth) else annotator_key(truth.get("completed_by"))
            out.append(Submission(task=identifier, annotation=_when(truth)[1], annotator=GROUND_TRUTH,
                                  results=results, created_at=_when(truth)[0], updated_at=_when(truth)[0]))
    predictions = task.get("predictions")
    if predictions is not None and not isinstance(predictions, list):
        skips.add("task whose predictions are not a list")
        predictions = []
    latest: dict[str, Mapping[str, Any]] = {}
    for prediction in predictions or ():
        if isinstance(prediction, int) and not isinstance(prediction, bool):
            skips.add("prediction given by its id only (Label Studio's quick JSON export; export a snapshot with "
                      "predictions included to score model versions)")
            continue
        if not isinstance(prediction, Mapping):
            skips.add("prediction that is not an object")
            continue
        if prediction.get("model_version") == CONSENSUS_VERSION:
            skips.add("consensus prediction (model version consensus, written from the annotators: not a "
                      "reference)")
            continue
        key = model_key(prediction.get("model_version"))
        previous = latest.get(key)
        if previous is not None:
            skips.add("older prediction of the same model version on a task (the latest counts)")
            if _when(previous) > _when(prediction):
                continue
        latest[key] = prediction
    newest = None
    for key, prediction in sorted(latest.items()):
        results = _results(prediction, "prediction", skips)
        if results is None:
            continue
        out.append(Submission(task=identifier, annotation=_when(prediction)[1], annotator=key, results=results,
                              created_at=_when(prediction)[0], updated_at=_when(prediction)[0]))
        if newest is None or _when(prediction) > _when(latest[newest]):
            newest = key
    return TaskReferences(tuple(out), author, newest)


def _without_authors(people: pd.DataFrame, authors: Mapping[int, str]) -> pd.DataFrame:
    """The annotators' rows without a reviewer-marked ground truth's author on their task."""
    if not authors:
        return people
    author = people["task"].map(authors)
    return people[author.isna() | (author != people["annotator"])]


def _keyed(frame: pd.DataFrame) -> pd.DataFrame:
    """Items numbered by task and item, so one item id on two tasks never meets."""
    return frame.assign(item=frame.groupby(["task", "item"], sort=False).ngroup().to_numpy())


def task_reference_shares(rows: Sequence[tuple[Any, ...]], authors: Mapping[int, str], latest: Mapping[int, str]
                          ) -> dict[int, dict[str, float]]:
    """Per task, the shares of the annotators' labels that equal the references' labels.

    ``ground_truth`` is the share of the annotators' labels equal to the ground truth's on the same items (its
    author's, see :attr:`TaskReferences.author`, left out), and ``prediction`` the same against the task's latest
    model version (where each exists). Each annotator's label is set against every label the reference gave the
    item; a missing label on either side is no pair.

    ``rows`` are a control's rows mapped with the references (``task``, ``item``, ``annotator``, ``label``), items
    and annotators compared as text. The work is on integer codes, the same for one task's rows (an event) as for
    every task's (a pass).

    >>> rows = [(1, "1", "2", "pos"), (1, "1", "5", "neg"), (1, "1", GROUND_TRUTH, "pos"),
    ...         (1, "1", "ref:model:v1", "neg"), (1, "1", "ref:model:v2", "pos")]
    >>> task_reference_shares(rows, {}, {1: "ref:model:v2"})
    {1: {'ground_truth': 0.5, 'prediction': 0.5}}
    >>> task_reference_shares(rows, {1: "2"}, {1: "ref:model:v1"})
    {1: {'ground_truth': 0.0, 'prediction': 0.5}}
    """
    if not rows:
        return {}
    n = len(rows)
    tasks, task = unique_inverse(np.fromiter(map(itemgetter(0), rows), dtype=np.int64, count=n))
    item, _ = _text_codes(np.fromiter(map(itemgetter(1), rows), dtype=object, count=n))
    who, names = _text_codes(np.fromiter(map(itemgetter(2), rows), dtype=object, count=n))
    label, _ = pd.factorize(np.fromiter(map(itemgetter(3), rows), dtype=object, count=n))  # missing: -1
    _, key = unique_inverse(task * (int(item.max()) + 1) + item, sort=False)  # an item of a task
    ids = tasks.tolist()
    code = {name: place for place, name in enumerate(names)}
    is_ref = np.array([name.startswith(REFERENCE_PREFIX) for name in names], dtype=bool)[who]
    truth = who == code.get(GROUND_TRUTH, -1)
    wanted = np.fromiter(map(code.get, map(latest.get, ids), repeat(-1)), dtype=np.intp, count=len(ids))[task]
    author = np.fromiter(map(code.get, map(authors.get, ids), repeat(-1)), dtype=np.intp, count=len(ids))[task]
    labelled = label >= 0
    people = ~is_ref & labelled
    n_labels = int(label.max()) + 1
    found: dict[str, tuple[np.ndarray, np.ndarray]] = {}
    for name, reference, annotators in (("ground_truth", truth, people & (who != author)),
                                        ("prediction", is_ref & (who == wanted), people)):
        reference = reference & labelled
        if not reference.any():
            continue
        # Each annotator's row is paired with the reference's rows on its item (its labels of the item): the pairs
        # are how many there are, the equal ones how many of them are the annotator's label.
        given, times = unique_counts(key[reference] * n_labels + label[reference])
        asked = key[annotators] * n_labels + label[annotators]
        at = np.minimum(np.searchsorted(given, asked), len(given) - 1)
        equal = np.where(given[at] == asked, times[at], 0)
        pairs = np.bincount(key[reference], minlength=int(key.max()) + 1)[key[annotators]]
        by_task = task[annotators]
        found[name] = (np.bincount(by_task, weights=equal, minlength=len(ids)),
                       np.bincount(by_task, weights=pairs, minlength=len(ids)))
    out: dict[int, dict[str, float]] = {}
    for name, (equal_sum, pair_sum) in found.items():
        for place in np.flatnonzero(pair_sum).tolist():
            out.setdefault(ids[place], {})[name] = round(float(equal_sum[place] / pair_sum[place]), 6)
    return out


def _text_codes(values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Codes of ``values`` compared as text, and the texts."""
    codes, uniques = pd.factorize(values, use_na_sentinel=False)
    if pd.api.types.infer_dtype(uniques, skipna=False) != "string":  # the mapping's keys are text: seldom
        again, uniques = pd.factorize(np.array([str(value) for value in uniques], dtype=object))
        codes = again[codes]
    return codes, np.asarray(uniques, dtype=object)


def _number(value: Any) -> float | None:
    value = float(value)
    return None if math.isnan(value) else round(value, 6)


def _rows(table: pd.DataFrame, people: Mapping[str, str]) -> list[dict[str, Any]]:
    out = []
    for record in table.to_dict("records"):
        row: dict[str, Any] = {"annotator": str(record["annotator"]),
                               "name": people.get(str(record["annotator"]), str(record["annotator"])),
                               "n_items": int(record["n_items"])}
        for column in REFERENCE_COLUMNS[2:]:
            row[column] = _number(record[column])
        for column in ("with_others", "n_pairs"):
            if column in record:
                row[column] = _number(record[column]) if column == "with_others" else int(record[column])
        out.append(row)
    return out


def reference_block(rows: pd.DataFrame, authors: Mapping[int, str], *, level: str,
                    categories: Sequence[Any] | None = None, values: Sequence[float] | None = None,
                    confidence: float = 0.95, people: Mapping[str, str] | None = None,
                    min_gt_accuracy: float | None = None, min_gt_items: int = 10) -> dict[str, Any] | None:
    """A control's ``references`` block, or None when the control has no reference.

    The block sets the annotators against the ground truth, and each model version against the annotators: each
    annotator against it, the mean kappa beside the annotators' own mean pairwise kappa on the same tasks,
    agreement with their majority, and each annotator's agreement with the other annotators beside that with the
    model.

    With ``min_gt_accuracy``, annotators with at least ``min_gt_items`` ground-truth items whose agreement with
    it is below it are listed in ``ground_truth.below`` (the accuracy for nominal labels; for ordered ones the
    weighted agreement, so a 4 against a 5 is not a miss). What is undefined (a kappa's interval where one side
    gave one label only) is null, and said in ``notes``.
    """
    is_ref = rows["annotator"].str.startswith(REFERENCE_PREFIX).to_numpy()
    if not is_ref.any():
        return None
    with warnings.catch_warnings(record=True) as said:
        warnings.simplefilter("always", UndefinedMeasureWarning)
        out = _reference_block(rows, is_ref, authors, level=level, categories=categories, values=values,
                               confidence=confidence, people=people, min_gt_accuracy=min_gt_accuracy,
                               min_gt_items=min_gt_items)
    notes = list(dict.fromkeys(str(w.message) for w in said if issubclass(w.category, UndefinedMeasureWarning)))
    if out and notes:  # what is null in the block, and why: the sync summary's lines and the report's notes
        out["notes"] = notes
    return out or None


def _reference_block(rows: pd.DataFrame, is_ref: np.ndarray, authors: Mapping[int, str], *, level: str,
                     categories: Sequence[Any] | None, values: Sequence[float] | None, confidence: float,
                     people: Mapping[str, str] | None, min_gt_accuracy: float | None,
                     min_gt_items: int) -> dict[str, Any]:
    """:func:`reference_block`'s work, its undefined measures said by warnings."""
    people = people or {}
    aligned = _aligned_reference(rows["item"].astype(str))[~is_ref]  # before the items are numbered
    keyed = _keyed(rows)
    options: dict[str, Any] = {"level": level, "values": values, "categories": categories, "confidence": confidence}
    out: dict[str, Any] = {}
    everyone, references = keyed[~is_ref], keyed[is_ref]

    def beside(key: str) -> pd.DataFrame:
        """The annotators' rows on the items of the reference ``key``: shared, or aligned with it alone."""
        return everyone[(aligned == "") | (aligned == key)]

    by_reference = dict(iter(references.groupby("annotator", sort=True)))
    truth = by_reference.get(GROUND_TRUTH, references.iloc[:0])
    if len(truth):
        annotators = _without_authors(beside(GROUND_TRUTH), authors)
        table = against_reference(annotators, truth[["item", "label"]], **options)
        block: dict[str, Any] = {"n_tasks": int(truth["task"].nunique()), "annotators": _rows(table, people)}
        if min_gt_accuracy is not None:
            # The agreement the flags use: the accuracy for nominal labels, Gwet-weighted for ordered ones.
            low = table[(table["n_items"] >= min_gt_items) & (table["agreement"] < min_gt_accuracy)]
            block["below"] = sorted(str(a) for a in low["annotator"])
            block["min_accuracy"], block["min_items"] = min_gt_accuracy, min_gt_items
        out["ground_truth"] = block
    models: dict[str, Any] = {}
    for key, model in by_reference.items():
        if not str(key).startswith(MODEL_PREFIX):
            continue
        predicted = beside(str(key))
        predicted = predicted[predicted["task"].isin(model["task"].unique())]
        table = against_reference(predicted, model[["item", "label"]], **options)
        human_mean, others = pairwise_kappa_mean(predicted, level=level, values=values, categories=categories)
        table = table.merge(others, on="annotator", how="left")
        kappa_mean = float(table["kappa"].mean()) if len(table) and table["kappa"].notna().any() else math.nan
        majority = majority_labels(predicted)
        versus = against_reference(majority.assign(annotator="majority"), model[["item", "label"]], **options)
        confusion = majority.merge(model[["item", "label"]].rename(columns={"label": "model"}), on="item")
        models[key[len(MODEL_PREFIX):]] = {
            "n_tasks": int(model["task"].nunique()),
            "annotators": _rows(table, people),
            "kappa_mean": _number(kappa_mean), "human_kappa_mean": _number(human_mean),
            "ratio": _number(kappa_mean / human_mean) if human_mean and not math.isnan(human_mean) else None,
            "majority": _rows(versus, {"majority": "annotators' majority"})[0] if len(versus) else None,
            "confusion": [{"model": str(m), "majority": str(h), "n_items": int(n)} for (m, h), n in
                          confusion.groupby(["model", "label"]).size().items()],
        }
    if models:
        out["models"] = models
    return out


def reference_frame(records: Iterable[tuple[Any, ...]]) -> pd.DataFrame:
    """Rows mapped with the references as a table (typed when empty)."""
    table = pd.DataFrame(list(records), columns=["task", "item", "annotator", "label"])
    table["task"] = table["task"].astype(np.int64)
    table["item"] = table["item"].astype(str)
    table["annotator"] = table["annotator"].astype(str)
    return table


def control_references(rows: Sequence[tuple[Any, ...]], authors: Mapping[int, str], *, level: str,
                       categories: tuple[Any, ...] | None, scoring: ScoringOptions,
                       people: Mapping[str, str] | None = None) -> dict[str, Any] | None:
    """A control's ``references`` block from its rows mapped with the references (None without any)."""
    if not rows:
        return None
    return reference_block(reference_frame(rows), authors, level=level, categories=categories,
                           confidence=scoring.confidence, min_gt_accuracy=scoring.min_gt_accuracy,
                           min_gt_items=scoring.min_gt_items, people=people)
