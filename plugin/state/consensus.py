"""Each task's consensus label per control, and whom to trust, from the codes the state holds.

A categorical control (nominal or ordinal labels: Choices, Rating, Taxonomy, per-region labels, span labels on
aligned items) gets a consensus on each of its items: Dawid-Skene (the default) or majority vote
(:mod:`agreement.consensus`). A pass, a sync and the report fit it over every item from scratch
(:func:`fit_items`); a live change scores the changed task's items with the fit held since
(:func:`agreement.consensus.held_posterior`, one E-step over the task), so after the next pass the live values are
the batch ones again. Ground truth, where a task has it on an item, is that item's known label.

What a task carries (its meta's ``controls.<name>.consensus``, :meth:`TaskConsensus.block`):

* one item (a Choices or Rating task): ``label``, ``posterior`` (the consensus label's probability, or its share of
  the votes), ``method``, and ``tie`` when majority vote found one;
* a label set (multiple Choices, a multi-path Taxonomy, one yes/no item per label): ``label``, the labels whose
  consensus is yes, and ``posterior``, the least certain of those yes/no items;
* several items (regions, spans): ``label``, their labels in the items' order, and ``posterior``, the least
  certain of them (per item positions and posteriors would make nearly every task's block its own, and a pass
  build and compare a block per task).

The posterior is rounded to :data:`POSTERIOR_DIGITS` decimals: a refit moves every posterior a little, and a
change under that rounding writes nothing to Label Studio.

It is past 600 lines because the batch fit and the live one-task E-step must read the same codes in the same
way: kept side by side, a change to how items, ground truth or label sets are coded reaches both at once.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, replace
from itertools import chain, islice
from typing import Any

import numpy as np
import pandas as pd

from agreement.consensus import Consensus, annotator_accuracy, dawid_skene, held_posterior, majority_vote
from plugin.mapping.choices import YES
from plugin.mapping.item_names import split_item_names
from plugin.state.references import GROUND_TRUTH, item_of

__all__ = ["MAX_LABELS", "POSTERIOR_DIGITS", "ConsensusFit", "ItemConsensus", "LabelNumbers", "LabelValues",
           "TaskConsensus",
           "consensus_skipped", "fit_items", "has_consensus", "held_in_blocks", "held_items", "known_labels",
           "label_order", "ranks_among", "short_key", "task_consensus", "with_known"]

MAX_LABELS = 50
"""Above this many labels a control's consensus is majority vote: each annotator's confusion matrix would hold more
cells than a project has answers to estimate them from."""
POSTERIOR_DIGITS = 2
LEVELS = ("nominal", "ordinal")
TIE = 1e-9
"""Labels whose posteriors are this close are tied: a fit over the same annotations read in another order sums
them in another order, and may tell them apart by a rounding error alone."""


def label_order(labels: Sequence[Any], n_categories: int = 0) -> np.ndarray:
    """The label codes in the order a reader expects and ties are broken in, whatever order they were read in.

    By value where every label is a number (a rating); else the config's categories (the first ``n_categories``
    codes) in its order, then the others sorted as text. A live state codes the labels it did not know from the
    config as it first reads them, so their codes depend on the order tasks came in; this order does not, and a
    live read and a batch read of the same tasks give one consensus and one summary.

    >>> label_order(["b", "a", "no span", "c"], 1).tolist()
    [0, 1, 3, 2]
    >>> label_order([3, 1, 2]).tolist()
    [1, 2, 0]
    """
    values = np.fromiter(labels, dtype=object, count=len(labels))  # a label may be a tuple: one element each
    if not len(values):
        return np.zeros(0, dtype=np.intp)
    if _numbers(values):
        return np.argsort(values.astype(float), kind="stable")
    head = min(max(n_categories, 0), len(values))
    rest = head + np.argsort(values[head:].astype(str), kind="stable")
    return np.concatenate([np.arange(head, dtype=np.intp), rest.astype(np.intp)])


def _ranks(labels: Sequence[Any], n_categories: int) -> np.ndarray:
    """Each label code's place in :func:`label_order`."""
    order = label_order(labels, n_categories)
    ranks = np.empty(len(order), dtype=np.intp)
    ranks[order] = np.arange(len(order))
    return ranks


def _numbers(values: np.ndarray) -> bool:
    """Whether :func:`label_order` orders ``values`` (an object array) by value: every one is a number."""
    return pd.api.types.infer_dtype(values, skipna=False) in ("integer", "floating", "mixed-integer-float")


def _is_number(label: Any) -> bool:
    """Whether ``label`` is an integer (not a bool) or a float, as :func:`pandas.api.types.infer_dtype` reads it.

    :func:`_numbers` holds labels for numbers only if each one is.
    """
    return pd.api.types.is_integer(label) or pd.api.types.is_float(label)


@dataclass
class LabelNumbers:
    """Whether :func:`label_order` orders a control's labels by value, kept as labels are coded.

    A control's labels are only ever appended to (:class:`plugin.state.codes.Interned`); once one of them is not a
    number, they are never all numbers again, so the new labels alone are looked at. While every one is (a
    rating's few values), all of them are read, as :func:`label_order` reads them.

    >>> numbers = LabelNumbers()
    >>> numbers([1, 2]), numbers([1, 2, 3.5]), numbers([1, 2, 3.5, "x"]), numbers([1, 2, 3.5, "x", 4])
    (True, True, False, False)
    """

    seen: int = 0
    other: bool = False
    """Some label seen is not a number."""

    def __call__(self, labels: Sequence[Any]) -> bool:
        """Whether every one of ``labels`` (those given last time, and any after them) is a number."""
        if len(labels) < self.seen:  # not the labels given before: read afresh
            self.seen, self.other = 0, False
        if not self.other:
            self.other = not all(_is_number(label) for label in labels[self.seen:])
        self.seen = len(labels)
        return not self.other and _numbers(np.fromiter(labels, dtype=object, count=len(labels)))


def ranks_among(labels: Sequence[Any], codes: np.ndarray, n_categories: int = 0, *,
                numbers: bool | None = None) -> np.ndarray:
    """A rank for every label code, ``codes`` ranked among themselves as :func:`label_order` ranks them.

    ``codes`` get the ranks ``0 .. k - 1`` (``k`` distinct codes) in the order :func:`label_order` puts them in, and
    every other code ``len(labels)``. Ties are
    broken only among the labels that an item's annotations, its ground truth or a fit's columns name, so a live
    change ranks those alone: O(their number), where :func:`label_order` puts every label of the control in words
    and sorts them (a free-text control has as many labels as answers). ``numbers`` is whether every label is a
    number (:class:`LabelNumbers`); by default ``labels`` are read.

    >>> ranks_among(["b", "a", "no span", "c"], np.array([3, 2]), 1).tolist()
    [4, 4, 1, 0]
    """
    size = len(labels)
    codes = np.unique(np.asarray(codes, dtype=np.intp))
    if numbers is None:
        numbers = _numbers(np.fromiter(labels, dtype=object, count=size))
    if numbers:  # a rating's few values: every label ranked, as label_order ranks them
        full = _ranks(labels, n_categories)
        ranks = np.full(size, size, dtype=np.intp)
        ranks[codes[np.argsort(full[codes], kind="stable")]] = np.arange(len(codes))
        return ranks
    head = min(max(n_categories, 0), size)
    rest = codes[codes >= head]  # the config's categories first, in its order (their codes); the others as text
    texts = np.fromiter((labels[code] for code in rest.tolist()), dtype=object, count=len(rest)).astype(str)
    ordered = np.concatenate([codes[codes < head], rest[np.argsort(texts, kind="stable")]])
    ranks = np.full(size, size, dtype=np.intp)
    ranks[ordered] = np.arange(len(ordered))
    return ranks


def has_consensus(level: str, method: str) -> bool:
    """Whether a control of ``level`` gets a consensus with ``method`` (categorical labels, consensus not off)."""
    return method != "off" and level in LEVELS


def consensus_skipped(level: str, n_labels: int, method: str) -> str | None:
    """Why a control gets no consensus, or the method it falls back to, in words (None: it gets ``method``)."""
    if method == "off":
        return "consensus is off"
    if level not in LEVELS:
        return f"no consensus for {level} values: it is for categorical labels"
    if method == "dawid-skene" and n_labels > MAX_LABELS:
        return f"majority vote: {n_labels} labels are more than Dawid-Skene's {MAX_LABELS}"
    return None


@dataclass(frozen=True)
class ItemConsensus:
    """Each item's consensus, aligned on the items given.

    Attributes
    ----------
    label : ndarray of int
        The consensus label's code, -1 for an item without labels.
    posterior : ndarray of float
        Its probability (Dawid-Skene) or share of the votes (majority), NaN without labels.
    tie : ndarray of bool
        Majority vote: two labels or more share the most votes.
    """

    label: np.ndarray
    posterior: np.ndarray
    tie: np.ndarray

    @classmethod
    def of(cls, posterior: np.ndarray, *, tie: np.ndarray | None = None,
           ranks: np.ndarray | None = None) -> ItemConsensus:
        """The most probable label of each row of ``posterior`` (an empty row: no label).

        Among labels tied (within :data:`TIE`), the one of least ``ranks`` (each code's place in
        :func:`label_order`; by default the lowest code).
        """
        some = posterior.sum(axis=1) > 0 if posterior.shape[1] else np.zeros(len(posterior), dtype=bool)
        if ranks is not None and posterior.shape[1] > 1 and len(posterior):
            tied = posterior >= posterior.max(axis=1, keepdims=True) - TIE
            best = np.where(tied, ranks[: posterior.shape[1]], len(ranks)).argmin(axis=1)
        else:
            best = posterior.argmax(axis=1) if posterior.shape[1] else np.zeros(len(posterior), dtype=np.intp)
        value = np.where(some, posterior.max(axis=1, initial=0.0), np.nan)
        return cls(label=np.where(some, best, -1).astype(np.intp), posterior=value,
                   tie=np.zeros(len(posterior), dtype=bool) if tie is None else tie & some)


@dataclass(frozen=True)
class ConsensusFit:
    """One control's consensus model, fit over every item: what a live change is scored with.

    Attributes
    ----------
    method : {"dawid-skene", "majority"}
    fit : Consensus, optional
        Dawid-Skene's priors and confusion matrices (None for majority vote).
    labels : tuple
        The label of each code at the time of the fit.
    annotators : tuple of str
        The annotator of each code at the time of the fit.
    n_items, n_known : int
        Items fit, and those of them whose label ground truth gives.
    note : str, optional
        Why the method is not the one asked for.
    n_categories : int
        How many of the first labels are the config's categories, in its order; the others are in the order first
        read, which depends on the read's order (:meth:`summary` sorts them).
    """

    method: str
    fit: Consensus | None
    labels: tuple[Any, ...]
    annotators: tuple[str, ...]
    n_items: int
    n_known: int
    note: str | None = None
    n_categories: int = 0

    def summary(self, people: Mapping[str, str], *, ground_truth: Mapping[str, Any] | None = None) -> dict[str, Any]:
        """The fit as JSON-ready data: ``sync --json``'s and the report's ``consensus`` of a control.

        ``annotators`` maps each annotator's key to ``name``, ``accuracy`` (Dawid-Skene: the share of their answers
        that are the true label, estimated without ground truth, :func:`agreement.consensus.annotator_accuracy`),
        ``n_answers`` (their answers on the control, the items the accuracy is estimated on), ``confusion`` (rows:
        true label, columns: their label, in ``labels`` order), and
        where ground truth covers some of their items, ``ground_truth_accuracy`` over them with ``n_ground_truth``:
        the control's ``references.ground_truth`` row of the annotator
        (:func:`plugin.state.references.reference_block`, given as ``ground_truth``), the one accuracy on ground
        truth the report and the summary show.
        """
        order = self._order()
        names = [str(self.labels[code]) for code in order]
        out: dict[str, Any] = {"method": self.method, "labels": names, "n_items": self.n_items,
                               "n_ground_truth": self.n_known}
        annotators: dict[str, dict[str, Any]] = {}
        accuracy = annotator_accuracy(self.fit) if self.fit is not None else None
        truth = {str(row["annotator"]): row for row in (ground_truth or {}).get("annotators", ())}
        for code, annotator in enumerate(self.annotators):
            row: dict[str, Any] = {}
            if self.fit is not None and accuracy is not None:
                if not self.fit.confusion[code].any():
                    continue  # an annotator whose every annotation is gone since
                row["accuracy"] = round(float(accuracy[code]), 4)
                row["n_answers"] = round(float(self.fit.answers[code].sum()))
                row["confusion"] = np.round(self.fit.confusion[code][np.ix_(order, order)], 4).tolist()
            known = truth.get(str(annotator))
            if known is not None and known.get("accuracy") is not None:
                row["ground_truth_accuracy"] = known["accuracy"]
                row["n_ground_truth"] = int(known["n_items"])
            if row:
                annotators[annotator] = {"name": people.get(annotator, annotator), **row}
        if self.fit is not None:
            out.update(priors=dict(zip(names, np.round(self.fit.priors[order], 4).tolist(), strict=True)),
                       iterations=self.fit.iterations, converged=self.fit.converged)
        out["annotators"] = annotators
        if self.note:
            out["note"] = self.note
        return out

    def _order(self) -> list[int]:
        """The label codes in the order a reader expects, whatever order they were read in.

        By value where every label is a number (a rating); else the config's categories in its order, then the
        others sorted (a live read and an export of one project give one summary).
        """
        return label_order(self.labels, self.n_categories).tolist()

    def accuracy(self, people: Mapping[str, str]) -> dict[str, float]:
        """Each annotator's estimated accuracy by name (Dawid-Skene; none for majority vote): ``/status``."""
        values = annotator_accuracy(self.fit) if self.fit is not None else []
        return {name: round(float(values[code]), 4) for code, name in self._weighed(people)}

    def answers(self, people: Mapping[str, str]) -> dict[str, int]:
        """Each annotator's answers the fit weighed, by name (Dawid-Skene; none for majority vote): ``/status``."""
        counts = self.fit.answers.sum(axis=1) if self.fit is not None else []
        return {name: round(float(counts[code])) for code, name in self._weighed(people)}

    def _weighed(self, people: Mapping[str, str]) -> list[tuple[int, str]]:
        """The code and name of each annotator the fit weighs answers of (none for majority vote)."""
        if self.fit is None:
            return []
        return [(code, people.get(name, name)) for code, name in enumerate(self.annotators)
                if self.fit.confusion[code].any()]


def fit_items(rows: np.ndarray, n_items: int, *, known: np.ndarray, method: str, labels: Sequence[Any],
              annotators: Sequence[str], n_categories: int = 0,
              prior: tuple[float, float] = (0.0, 0.0)) -> tuple[ConsensusFit, ItemConsensus]:
    """Fit a control's consensus over every item, from scratch: its model and each item's consensus.

    Parameters
    ----------
    rows : ndarray of int, shape (annotations, 3)
        Each annotation's item, annotator and label codes.
    n_items : int
    known : ndarray of int, shape (items,)
        Each item's label from ground truth, -1 where none.
    method : {"dawid-skene", "majority"}
        ``"dawid-skene"`` falls back to majority vote above :data:`MAX_LABELS` labels.
    labels, annotators : sequence
        The values of the label and annotator codes.
    n_categories : int
        How many of the first labels are the config's categories.
    prior : (float, float)
        Dawid-Skene's pseudo-counts on each annotator's confusion diagonal and shared off it
        (:func:`agreement.consensus.dawid_skene`); by default none, maximum likelihood.
    """
    n_l, n_w = len(labels), len(annotators)
    note = consensus_skipped("nominal", n_l, method)
    items, who, said = rows[:, 0], rows[:, 1], rows[:, 2]
    common = {"labels": tuple(labels), "annotators": tuple(annotators), "n_items": n_items,
              "n_known": int((known >= 0).sum()), "n_categories": n_categories}
    ranks = _ranks(labels, n_categories)  # ties are broken alike whatever order the labels were read in
    if method == "dawid-skene" and note is None:
        fit = dawid_skene(items, who, said, n_items=n_items, n_annotators=n_w, n_labels=n_l, known=known,
                          prior=prior)
        # each item under the fit's final parameters, as a live change is scored with them (the fit's own
        # posteriors are those of its last E-step, one M-step behind)
        items_out = held_in_blocks(fit, items, who, said, n_items=n_items, known=known, ranks=ranks)
        # the state holds the parameters alone: the items' posteriors are the task scores' (tens of bytes an item)
        slim = replace(fit, labels=np.zeros(0, dtype=np.intp), posterior=np.zeros((0, n_l)))
        return ConsensusFit(method="dawid-skene", fit=slim, **common), items_out
    return (ConsensusFit(method="majority", fit=None, note=note, **common),
            _vote(items, said, n_items, known, ranks=ranks))


ITEMS_AT_ONCE = 1 << 20
"""Items whose consensus under a fit is computed at once at most (:func:`held_in_blocks`)."""


def held_in_blocks(fit: Consensus, items: np.ndarray, who: np.ndarray, said: np.ndarray, *, n_items: int,
                   known: np.ndarray, at_most: int = ITEMS_AT_ONCE, ranks: np.ndarray | None = None
                   ) -> ItemConsensus:
    """Each item's consensus under ``fit`` (:func:`agreement.consensus.held_posterior`), a block of items at a time.

    An item's posterior depends on its own annotations alone, summed in the order given, so the items ``k`` to
    ``k + at_most`` are scored from their annotations alone and the blocks put end to end give what one call over
    every item gives; the posteriors and their logarithms (annotations x labels) are held for a block at a time.
    ``ranks`` breaks ties (:meth:`ItemConsensus.of`).
    """
    if n_items <= at_most:
        return ItemConsensus.of(held_posterior(fit, items, who, said, n_items=n_items, known=known), ranks=ranks)
    parts = []
    for first in range(0, n_items, at_most):
        last = min(first + at_most, n_items)
        on = (items >= first) & (items < last)
        parts.append(ItemConsensus.of(held_posterior(fit, items[on] - first, who[on], said[on], n_items=last - first,
                                                     known=known[first:last]), ranks=ranks))
    return ItemConsensus(label=np.concatenate([part.label for part in parts]),
                         posterior=np.concatenate([part.posterior for part in parts]),
                         tie=np.concatenate([part.tie for part in parts]))


def _vote(items: np.ndarray, said: np.ndarray, n_items: int, known: np.ndarray, *,
          ranks: np.ndarray | None = None) -> ItemConsensus:
    """Majority vote on each item from its (item, label) pairs: O(annotations), whatever the number of labels.

    What :func:`agreement.consensus.majority_vote` gives, without its dense (items x labels) shares: a free-text
    control has as many labels as answers. Among tied labels the first in ``ranks`` (:func:`label_order`; by
    default the lowest code) wins. Items of known label keep it.
    """
    width = int(said.max()) + 1 if len(said) else 1
    pairs, counts = np.unique(items.astype(np.int64) * width + said, return_counts=True)
    item, label = pairs // width, pairs % width
    first = label if ranks is None else ranks[label]
    order = np.lexsort((first, -counts, item))  # by item, the most votes first, then the first label
    heads = order[np.concatenate([[True], item[order][1:] != item[order][:-1]])] if len(order) else order
    most = np.zeros(n_items)
    most[item[heads]] = counts[heads]
    out_label = np.full(n_items, -1, dtype=np.intp)
    out_label[item[heads]] = label[heads]
    totals = np.bincount(items, minlength=n_items)
    posterior = np.divide(most, totals, out=np.full(n_items, np.nan), where=totals > 0)
    tie = np.bincount(item, weights=counts == most[item], minlength=n_items) > 1
    truth = known >= 0
    out_label[truth], posterior[truth], tie[truth] = known[truth], 1.0, False
    return ItemConsensus(label=out_label, posterior=posterior, tie=tie)


def _with_known(posterior: np.ndarray, known: np.ndarray) -> np.ndarray:
    at = np.flatnonzero(known >= 0)
    posterior[at] = 0.0
    posterior[at, known[at]] = 1.0
    return posterior


def known_labels(tasks: np.ndarray, per_task: np.ndarray, references: Mapping[int, Sequence[tuple[Any, ...]]], *,
                 items: Callable[[int], tuple[Any, ...]], code: Callable[[Any], int]) -> np.ndarray:
    """Each item's label from its task's ground truth, as a code (-1: none); the items of ``tasks`` in order.

    ``per_task`` is how many items each task has; ``references`` the rows mapped with the references
    (:attr:`plugin.state.control.ControlState.references`); ``items`` a task's item keys in order; ``code`` a
    label's code (-1 for a label never seen). Only the given tasks' references are looked at when they are fewer
    (an event's task alone, where model predictions give most tasks references).
    """
    known = np.full(int(per_task.sum()), -1, dtype=np.intp)
    candidates = ([task for task in tasks.tolist() if task in references]
                  if len(tasks) < len(references) else list(references))
    truths = [task for task in candidates if any(row[2] == GROUND_TRUTH for row in references[task])]
    if not truths or not len(tasks):
        return known
    order = np.argsort(tasks, kind="stable")
    starts = np.cumsum(per_task) - per_task
    for task in truths:
        at = int(np.searchsorted(tasks, task, sorter=order))
        if at == len(tasks) or tasks[order[at]] != task:
            continue
        truth = {item_of(item): label for _, item, who, label in references[task] if who == GROUND_TRUTH}
        first = int(starts[order[at]])
        for place, item in enumerate(items(task)):
            if item in truth:
                known[first + place] = code(truth[item])
    return known


class LabelValues(Sequence[Any]):
    """A control's labels by code as they are now, without a copy: the labels it coded, then ``more``.

    A control's labels (:class:`plugin.state.codes.Interned`) are only ever appended to, so the first
    ``len(coded)`` of them stay what they are; a free-text control has as many as answers, which an event's scores
    should not copy. The length is fixed when made: labels coded afterwards are not seen.

    >>> coded = ["pos", "neg"]
    >>> labels = LabelValues(coded, ("truth",))
    >>> coded.append("neu")
    >>> list(labels), labels[-1], len(labels)
    (['pos', 'neg', 'truth'], 'truth', 3)
    """

    __slots__ = ("_coded", "_more", "_n")

    def __init__(self, coded: Sequence[Any], more: Sequence[Any] = ()) -> None:
        self._coded, self._more, self._n = coded, tuple(more), len(coded)

    def __len__(self) -> int:
        return self._n + len(self._more)

    def __getitem__(self, code: Any) -> Any:
        if isinstance(code, slice):
            return tuple(self)[code]
        at = int(code) + (len(self) if code < 0 else 0)
        if not 0 <= at < len(self):
            raise IndexError(f"No label has the code {code} (there are {len(self)}).")
        return self._coded[at] if at < self._n else self._more[at - self._n]

    def __iter__(self) -> Iterator[Any]:
        return chain(islice(self._coded, self._n), self._more)


def held_items(model: ConsensusFit, rows: np.ndarray, n_items: int, *, known: np.ndarray,
               n_labels: int, labels: Sequence[Any] | None = None, numbers: bool | None = None) -> ItemConsensus:
    """Each item's consensus under a fit held from before (a live change): O(the items' annotations).

    Labels coded after the fit have no column in it: an item whose annotations the fit cannot weigh gets majority
    vote over every label (:func:`agreement.consensus.held_posterior`). ``labels`` are the values of the
    ``n_labels`` label codes now, by which ties are broken as a fit breaks them (:func:`label_order`); by default
    the labels of the fit, then the codes after them in order. ``numbers`` is whether every one of ``labels`` is a
    number (:class:`LabelNumbers`; by default they are read).

    Only the labels that the items' annotations, their known labels and the fit name are ranked
    (:func:`ranks_among`) and voted over: an item's consensus is one of those, and a free-text control has as many
    labels as answers, which an event's few items should not cost.
    """
    items, who, said = rows[:, 0], rows[:, 1], rows[:, 2]
    n_fit = len(model.labels)
    if labels is None:
        ranks = _ranks(model.labels, model.n_categories)
        if len(ranks) < n_labels:
            ranks = np.concatenate([ranks, np.arange(len(ranks), n_labels, dtype=np.intp)])
    else:
        named = [said, known[known >= 0], np.arange(n_fit if model.fit is not None else 0)]
        ranks = ranks_among(labels, np.concatenate(named), model.n_categories, numbers=numbers)
    if model.fit is None:
        return _vote(items, said, n_items, known, ranks=ranks)
    posterior = held_posterior(model.fit, items, who, np.minimum(said, n_fit), n_items=n_items,
                               known=np.where(known < n_fit, known, -1))
    newer = said >= n_fit
    if not (newer.any() or (known >= n_fit).any()):
        return ItemConsensus.of(posterior, ranks=ranks)
    # a label the fit never saw: vote over the labels, in columns of the fit's labels and of those the items name
    # (every other label's column would be 0)
    columns = np.concatenate([np.arange(n_fit), np.unique(np.concatenate([said[newer], known[known >= n_fit]]))])
    vote = majority_vote(items, np.searchsorted(columns, said), n_items=n_items, n_labels=len(columns)).posterior
    unfit = np.bincount(items[newer], minlength=n_items) > 0
    wide = np.zeros((n_items, len(columns)))
    wide[:, : posterior.shape[1]] = posterior
    wide[unfit] = vote[unfit]
    wide = _with_known(wide, np.where(known >= 0, np.searchsorted(columns, known), -1))
    local = np.empty(len(columns), dtype=np.intp)  # the columns' ranks among themselves
    local[np.argsort(ranks[columns], kind="stable")] = np.arange(len(columns))
    found = ItemConsensus.of(wide, ranks=local)
    return ItemConsensus(label=np.where(found.label >= 0, columns[np.maximum(found.label, 0)], -1).astype(np.intp),
                         posterior=found.posterior, tie=found.tie)


def with_known(items: ItemConsensus, known: np.ndarray) -> ItemConsensus:
    """``items`` with each item of known label (``known >= 0``, its code) given that label, certain and untied.

    A fit gives them so where it knew the label (:func:`agreement.consensus.held_posterior`); a label the fit did
    without is given here (:meth:`plugin.state.control.ControlState._known`).
    """
    at = known >= 0
    if not at.any():
        return items
    return ItemConsensus(label=np.where(at, known, items.label).astype(np.intp),
                         posterior=np.where(at, 1.0, items.posterior), tie=items.tie & ~at)


@dataclass(frozen=True)
class TaskConsensus:
    """Each task's consensus in one control, aligned on the tasks of a score table.

    Attributes
    ----------
    method : str
    indptr : ndarray of int, shape (tasks + 1,)
        The task at place ``t`` has the items ``indptr[t]:indptr[t + 1]`` of ``items``.
    items : ItemConsensus
        Posteriors rounded to :data:`POSTERIOR_DIGITS` decimals.
    labels : sequence
        The value of each label code (a tuple, or the control's labels as they were: :class:`LabelValues`).
    keys : callable
        The item keys of the task at a place, without its task's id (for tasks of several items).
    key_codes : ndarray of int
        Each item's key code (:class:`plugin.state.codes.ItemKeys`): equal for the same key on two tasks.
    label_set : bool
        The items are yes/no items of one label each (a label set).
    config_labels : tuple of str
        The config's labels, to read a yes/no item's label from its key.
    """

    method: str
    indptr: np.ndarray
    items: ItemConsensus
    labels: Sequence[Any]
    keys: Callable[[int], tuple[Any, ...]]
    key_codes: np.ndarray
    label_set: bool = False
    config_labels: tuple[str, ...] = ()

    def posterior(self) -> np.ndarray:
        """Per task, its least certain item's posterior (NaN: no consensus): what ``--min-posterior`` judges."""
        size = len(self.indptr) - 1
        values = np.where(np.isnan(self.items.posterior), np.inf, self.items.posterior)
        some = self.indptr[1:] > self.indptr[:-1]
        lowest = np.full(size, np.nan)
        if len(values):
            reduced = np.minimum.reduceat(values, np.minimum(self.indptr[:-1], len(values) - 1))
            lowest = np.where(some & np.isfinite(reduced), reduced, np.nan)
        return lowest

    def codes(self) -> np.ndarray:
        """Per task, a code of its consensus: tasks with equal codes carry equal blocks.

        A task's block follows from its items' labels, rounded posteriors and ties, and for a label set from their
        keys (:attr:`key_codes`, shared by tasks whose keys differ only by their task's id); the tasks of each
        number of items are coded by their rows of those at once (:func:`numpy.unique` over rows), so that a pass
        builds each distinct block once.
        """
        size = len(self.indptr) - 1
        n = np.diff(self.indptr)
        posterior = np.round(np.nan_to_num(self.items.posterior, nan=-0.01) * 100).astype(np.int64)
        label = self.items.label.astype(np.int64)
        item = ((label + 1) * 1000 + posterior) * 2 + self.items.tie
        lowest = np.round(np.nan_to_num(self.posterior(), nan=-0.01) * 100).astype(np.int64)
        tied = np.zeros(size, dtype=np.int64)
        some = n > 0
        if len(item):
            tied[some] = np.add.reduceat(self.items.tie.astype(np.int64), self.indptr[:-1][some])
        code = np.full(size, -1, dtype=np.int64)
        base = 0
        for length in np.unique(n[n > 0]).tolist():
            tasks = np.flatnonzero(n == length)
            at = self.indptr[:-1][tasks][:, None] + np.arange(length)
            if self.label_set:  # the block names the labels of the items whose consensus is yes: their keys
                rows = np.concatenate([self.key_codes[at], item[at]], axis=1)
            elif length == 1:
                rows = item[at]
            else:  # several items: their labels in order, the least posterior, any tie
                rows = np.column_stack([label[at], lowest[tasks], tied[tasks] > 0])
            _, inverse = np.unique(rows, axis=0, return_inverse=True)
            inverse = inverse.reshape(-1)
            code[tasks] = base + inverse
            base += int(inverse.max()) + 1
        return code

    def texts(self, *, positions: bool = False) -> np.ndarray:
        """Per task, its consensus in words (``""``: none): the report's column.

        A task of one item in one vectorized step; several items' labels joined with ``"; "``, each followed by its
        item's position (``PER [12-17]``: its key without the task's id) with ``positions`` (a span control's); a
        label set by :meth:`label_set_text`. Those are built for their tasks alone.
        """
        size = len(self.indptr) - 1
        out = np.full(size, "", dtype=object)
        n = np.diff(self.indptr)
        apart = self.label_set or positions
        single = np.flatnonzero(n == 1) if not apart else np.zeros(0, dtype=np.intp)
        codes = self.items.label[self.indptr[:-1][single]] if len(single) else np.zeros(0, dtype=np.intp)
        words = np.array([*(str(label) for label in self.labels), ""], dtype=object)
        out[single] = words[np.where(codes >= 0, codes, len(self.labels))]
        for at in np.flatnonzero(n >= 1 if apart else n > 1).tolist():
            if self.label_set:
                out[at] = self.label_set_text(at)
                continue
            start, stop = int(self.indptr[at]), int(self.indptr[at + 1])
            label = self.items.label[start:stop].tolist()
            if all(code < 0 for code in label):
                continue
            keys = self.keys(at) if positions else ()
            out[at] = "; ".join(("" if code < 0 else str(self.labels[code]))
                                + (f" [{keys[place]}]" if place < len(keys) else "")
                                for place, code in enumerate(label))
        return out

    def label_set_text(self, at: int) -> str:
        """A label set's consensus in words: its labels, each with the probability it applies, or why none does.

        A label's probability is its yes/no item's posterior of yes (its share of the votes by majority vote); the
        consensus holds the labels above 0.5. An empty consensus says so, with every label's probability, highest
        first: ``"none above 0.5: price 0.45, quality 0.20"``. ``""``: no label has an item with labels.
        """
        start, stop = int(self.indptr[at]), int(self.indptr[at + 1])
        _, names = split_item_names([str(key) for key in self.keys(at)], self.config_labels)
        chances = []
        for name, code, posterior in zip(names.tolist(), self.items.label[start:stop].tolist(),
                                         self.items.posterior[start:stop].tolist(), strict=True):
            if code < 0 or math.isnan(posterior):
                continue
            yes = self.labels[code] == YES
            chances.append((str(name), yes, posterior if yes else 1.0 - posterior))
        if not chances:
            return ""
        chosen = [f"{name} ({chance:.2f})" for name, yes, chance in chances if yes]
        if chosen:
            return ", ".join(chosen)
        ranked = sorted(chances, key=lambda c: -c[2])
        return "none above 0.5: " + ", ".join(f"{name} {chance:.2f}" for name, _, chance in ranked)

    def block(self, at: int) -> dict[str, Any] | None:
        """The task's ``consensus``, as its meta carries it (None: it has none)."""
        start, stop = int(self.indptr[at]), int(self.indptr[at + 1])
        label, posterior, tie = (self.items.label[start:stop], self.items.posterior[start:stop],
                                 self.items.tie[start:stop])
        if stop == start or (label < 0).all():
            return None
        values = [self.labels[code] if code >= 0 else None for code in label.tolist()]
        chances = [None if math.isnan(p) else p for p in posterior.tolist()]
        out: dict[str, Any]
        if stop - start == 1:
            out = {"label": values[0], "posterior": chances[0]}
        elif self.label_set:
            _, names = split_item_names([str(key) for key in self.keys(at)], self.config_labels)
            defined = [p for p in chances if p is not None]
            out = {"label": [str(name) for name, value in zip(names.tolist(), values, strict=True) if value == YES],
                   "posterior": min(defined) if defined else None}
        else:
            defined = [p for p in chances if p is not None]
            out = {"label": values, "posterior": min(defined) if defined else None}
        out["method"] = self.method
        if tie.any():
            out["tie"] = True
        return out


def short_key(task: int, key: Any) -> str:
    """An item's key as a task's meta shows it: without its task's id, which the task already says.

    >>> short_key(17, "17:0-5"), short_key(17, "17:sentiment:pos"), short_key(17, ("x", 1))
    ('0-5', 'sentiment:pos', "('x', 1)")
    """
    text, prefix = str(key), f"{task}:"
    return text.removeprefix(prefix)


def task_consensus(method: str, items: ItemConsensus, per_task: np.ndarray, *, labels: Sequence[Any],
                   keys: Callable[[int], tuple[Any, ...]], key_codes: np.ndarray, label_set: bool = False,
                   config_labels: Sequence[str] = ()) -> TaskConsensus:
    """Items' consensus grouped by task (``per_task``: how many items each task has, in order), rounded."""
    rounded = ItemConsensus(label=items.label, posterior=np.round(items.posterior, POSTERIOR_DIGITS), tie=items.tie)
    indptr = np.concatenate([[0], np.cumsum(per_task)]).astype(np.intp)
    return TaskConsensus(method=method, indptr=indptr, items=rounded,
                         labels=labels if isinstance(labels, LabelValues) else tuple(labels), keys=keys,
                         key_codes=np.asarray(key_codes, dtype=np.int64), label_set=label_set,
                         config_labels=tuple(config_labels))
