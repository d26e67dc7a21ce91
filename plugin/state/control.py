"""One control's rows per task as codes, with the running sums they add up to.

A task's rows are one ``bytes`` object of int16 (or int32) codes (:mod:`plugin.state.codes`); the running sums
(:class:`agreement.RunningAgreement`) keep no per-item copy, and a task's update costs O(its annotations) for a
nominal control, whatever the number of categories. A span-like control also holds its spans per task
(:class:`plugin.state.spans.SpanTasks`).

:class:`ControlState` has more than 20 methods because a control's rows, its running sums and its span tasks
change together on every task: each method keeps the three in step for one kind of change or one read.

It is past 600 lines: one control's codes, sums, task scores and consensus, which a task's update changes
together; the decoding and the consensus's lookups live in :mod:`plugin.state.decoded` and
:mod:`plugin.state.consensus`.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from agreement import RunningAgreement, UndefinedMeasureWarning, agreement_weights, gwet_ac
from agreement.augmented import classify_items, ranked_labels
from agreement.counts import SparseCounts
from agreement.gwet import LEVEL_WEIGHTS
from agreement.running_augmented import RunningAugmented
from plugin.mapping import MappedControl
from plugin.mapping.base import RANKED_COLUMNS, ROW_COLUMNS
from plugin.mapping.choices import NO, YES
from plugin.mapping.coded import CodedRows, RankedItems
from plugin.mapping.labelconfig import Control
from plugin.settings import MappingOptions, ScoringOptions
from plugin.state.codes import (
    Interned,
    ItemKeys,
    RowsTally,
    Stacked,
    item_counts,
    pack_rows,
    stacked_rows,
    unpack_rows,
)
from plugin.state.consensus import (
    ConsensusFit,
    LabelNumbers,
    LabelValues,
    TaskConsensus,
    fit_items,
    has_consensus,
    held_items,
    known_labels,
    short_key,
    task_consensus,
    with_known,
)
from plugin.state.decoded import annotator_column, by_task, coded_rows, decoded_table
from plugin.state.flags import CONSTANT_LOW, SPAN_FLAG_KEYS
from plugin.state.given import GivenColumn
from plugin.state.scoring import (
    number,
    rounded,
    spa_interval_of_shapes,
    task_terms,
)
from plugin.state.spans import ScoredSpans, SpanTasks
from plugin.state.task_scores import ControlColumns

__all__ = ["SUMS_BATCH", "ControlState"]

SUMS_BATCH = 5_000
"""Tasks whose rows a batch adds to the sums at once: a vectorized call each, with bounded memory."""


def _ranked_by_item(rows: Iterable[tuple[Any, str, Any, int]]) -> dict[Any, list[tuple[str, Any, int]]]:
    """Ranked rows grouped by item, in row order.

    Rows ``(item, annotator, label, rank)`` become each item's ``(annotator, label, rank)``.
    """
    out: dict[Any, list[tuple[str, Any, int]]] = {}
    for item, annotator, label, rank in rows:
        out.setdefault(item, []).append((annotator, label, rank))
    return out


@dataclass
class ControlState:
    """One control's items, per task, and its running sums.

    A task's items and rows are held as one ``bytes`` object of int16 or int32 codes
    (:func:`plugin.state.codes.pack_rows`): each item's key as a code of :attr:`keys`, and each
    row as its item's place, the annotator's code and the label's column.
    The items' counts are derived from the rows when scoring needs them
    (vectorized over every task at once, :meth:`counts`), so the running
    sums keep no per-item copy (:meth:`agreement.RunningAgreement.apply_items`).

    Attributes
    ----------
    control : Control
    level : str
        The level of measurement of its labels.
    labels : Interned
        The label of each column of the running sums, in the order labels were
        first seen (the config's categories first).
    sums : RunningAgreement
    records : dict of int to bytes
        Per task, its items and mapped rows ``(task, item, annotator, label)`` as codes
        (:meth:`task_items` and :meth:`task_records` decode them).
    annotators : Interned
        The annotators of the rows, by code.
    keys : ItemKeys
        The item keys of every task, interned.
    ranked : dict of int to bytes
        Per task, for multiple choices, the ranked rows ``(task, item, annotator, label, rank)`` as codes.
    augmented : RunningAugmented, optional
        Multiple choices: the sums behind each item's class (Rosenberg & Binkowski 2004).
    spans : SpanTasks, optional
        Span-like controls: each task's spans, submitters and continua's
        lengths, and the span measures (pairwise F1, gamma) of each task.
    references : dict of int to tuple
        Per task with a reference (:mod:`plugin.state.references`), the rows of the
        task mapped with its references as more annotators.
    categories : tuple, optional
        The config's categories, or None when the labels seen are the categories.
    consensus : ConsensusFit, optional
        The consensus model of the last scoring of every task (:mod:`plugin.state.consensus`): a live change's
        items are scored with it.
    """

    control: Control
    level: str
    labels: Interned
    sums: RunningAgreement
    categories: tuple[Any, ...] | None
    records: dict[int, bytes] = field(default_factory=dict)
    annotators: Interned = field(default_factory=Interned)
    keys: ItemKeys = field(default_factory=ItemKeys)
    ranked: dict[int, bytes] = field(default_factory=dict)
    _ranked_labels: Interned = field(default_factory=Interned)
    augmented: RunningAugmented | None = None
    spans: SpanTasks | None = None
    references: dict[int, tuple[tuple[Any, ...], ...]] = field(default_factory=dict)
    consensus: ConsensusFit | None = None
    _batched: list[tuple[bytes | None, bytes | None]] | None = None
    _label_numbers: LabelNumbers = field(default_factory=LabelNumbers)
    _tally: RowsTally | None = None

    @classmethod
    def create(cls, probe: MappedControl) -> ControlState:
        """An empty control state, with the level and categories its mapping gives (``probe`` maps no task)."""
        categories = probe.categories
        return cls(control=probe.control, level=probe.level, categories=categories,
                   labels=Interned.of(categories or ()),
                   sums=RunningAgreement(len(categories or ()), coincidence=probe.level != "nominal"),
                   augmented=RunningAugmented() if probe.ranked_records is not None else None,
                   spans=SpanTasks(probe.control) if probe.spans is not None else None)

    def set_task(self, task: int, mapped: MappedControl, *,
                 lengths: Mapping[tuple[int, tuple[Any, ...]], float | None] | None = None) -> None:
        """Replace the items of ``task`` with those ``mapped`` holds (the task's mapping alone).

        ``lengths`` are the lengths of the task's continua, for a span-like control.
        O(the task's rows): the sums take away the old rows' items and add the new ones'.
        """
        annotator_code, label_code = self.annotators.code, self.labels.code
        blob = self._pack(task, [(item, annotator_code(annotator), label_code(label))
                                 for _, item, annotator, label in mapped.records])
        old = self.records.get(task)
        if blob != old:
            self._replace_rows(old, blob)
            if blob is not None:
                self.records[task] = blob
            else:
                del self.records[task]
        self._set_ranked(task, mapped.ranked_records or ())
        if self.spans is not None:
            self.spans.set_task(task, mapped, lengths or {})

    def _replace_rows(self, old: bytes | None, new: bytes | None) -> None:
        """Take a task's ``old`` rows' items out of the sums and put its ``new`` ones in.

        In a batch (:meth:`batch`), this is done once for the whole batch.
        """
        if self._batched is None:
            self._apply([(old, new)])
            return
        self._batched.append((old, new))
        if len(self._batched) >= SUMS_BATCH:
            self._apply(self._batched, tally=False)
            self._batched = []

    def _apply(self, changes: list[tuple[bytes | None, bytes | None]], *, tally: bool = True) -> None:
        """Update the sums with tasks' rows replaced (the sums are sums: the order does not matter).

        With ``tally``, the live summary's tally too, if one is kept (:meth:`_rows_tally`); without, it is
        dropped: a batch's rows are tallied once, when a summary next asks.
        """
        if not tally:
            self._tally = None
        for sign, blobs in ((-1, [old for old, _ in changes if old is not None]),
                            (1, [new for _, new in changes if new is not None])):
            if blobs:
                stacked = stacked_rows(blobs, 3)
                counts = item_counts(blobs, stacked=stacked)[0]
                self.sums.apply_items(counts.indptr, counts.columns, counts.counts, sign=float(sign))
                if self._tally is not None:
                    self._tally.update(blobs, sign=sign, stacked=stacked, counts=counts)

    def _rows_tally(self) -> RowsTally:
        """What the live summary reads of every task's rows (:class:`plugin.state.codes.RowsTally`).

        Tallied from every task's rows the first time, or after a batch; then kept as tasks change (O(their rows)).
        """
        if self._tally is None:
            self._tally = RowsTally.of(list(self.records.values()))
        return self._tally

    def start_batch(self) -> None:
        """Hold the sums' updates until :meth:`end_batch`.

        They are applied :data:`SUMS_BATCH` tasks at a time: tasks read in a batch update them in one vectorized
        call, where a call per task costs more than its arithmetic.
        """
        self._batched = []
        self._tally = None

    def end_batch(self) -> None:
        """Apply the updates held since :meth:`start_batch`."""
        held, self._batched = self._batched or [], None
        self._apply(held, tally=False)

    def _pack(self, task: int, rows: Iterable[tuple[Any, ...]]) -> bytes | None:
        """A task's rows ``(item, code, ...)`` as codes (:func:`plugin.state.codes.pack_rows`).

        Each item is coded as its place in the order first seen; None without rows.
        """
        text = str(task)
        places: dict[Any, int] = {}
        keys: list[int] = []
        codes: list[int] = []
        key_code = self.keys.code
        for item, *rest in rows:
            place = places.get(item)
            if place is None:
                place = places[item] = len(places)
                keys.append(key_code(text, item))
            codes.append(place)
            codes += rest
        return pack_rows(keys, codes) if places else None

    def task_items(self, task: int) -> tuple[Any, ...]:
        """The keys of the task's items, in the order its rows first name them."""
        blob = self.records.get(task)
        return () if blob is None else self.keys.decode(task, unpack_rows(blob, 3)[0])

    def task_records(self, task: int) -> tuple[tuple[Any, ...], ...]:
        """The task's mapped rows ``(task, item, annotator, label)``, decoded from :attr:`records`."""
        blob = self.records.get(task)
        if blob is None:
            return ()
        codes, rows = unpack_rows(blob, 3)
        items, labels, annotators = self.keys.decode(task, codes), self.labels.values, self.annotators.values
        return tuple((task, items[place], annotators[who], labels[column]) for place, who, column in rows.tolist())

    def stacked(self, tasks: Iterable[int]) -> Stacked:
        """Those of ``tasks`` this control holds rows of, in order, with their rows decoded at once.

        What a full scoring decodes once and reads for the counts, the consensus and the coded rows.
        """
        known = [task for task in tasks if task in self.records]
        return Stacked(np.array(known, dtype=np.int64), stacked_rows([self.records[task] for task in known], 3))

    def counts(self, tasks: Sequence[int], *, stacked: Stacked | None = None) -> tuple[SparseCounts, np.ndarray]:
        """The counts of every item of ``tasks`` and the task of each item, vectorized over all of them.

        :meth:`~agreement.counts.SparseCounts.packed` gives what every nominal
        per-item measure needs, whatever the number of labels;
        :meth:`~agreement.counts.SparseCounts.dense` one column per label.
        ``stacked`` is :meth:`stacked` of ``tasks`` when the caller decoded them already.
        """
        known, rows = self.stacked(tasks) if stacked is None else stacked
        counts, per_task = item_counts((), n_categories=len(self.labels.values), stacked=rows)
        return counts, np.repeat(known, per_task)

    def coded(self, stacked: Stacked, *, ranked: RankedItems | None = None) -> CodedRows:
        """The rows of :meth:`stacked` as codes, to score (:func:`plugin.state.decoded.coded_rows`).

        ``ranked`` is a multiple-choice control's :meth:`ranked_classes`, when the caller computed them.
        """
        return coded_rows(stacked, keys=self.keys, labels=self.labels.values, annotators=self.annotators.values,
                          ranked=ranked)

    def _set_ranked(self, task: int, rows: tuple[tuple[Any, ...], ...]) -> None:
        """Replace the task's ranked rows (multiple choices), and each item's share of the augmented sums."""
        if self.augmented is None:
            return
        blob = self._pack(task, ((item, self.annotators.code(annotator), self._ranked_labels.code(label), int(rank))
                                 for _, item, annotator, label, rank in rows))
        if blob == self.ranked.get(task):  # read again as it was (every pass): the sums stay as they are
            return
        for labels in self._ranked_items(task).values():
            self.augmented.add_labels(labels, sign=-1.0)
        if blob is not None:
            self.ranked[task] = blob
        else:
            self.ranked.pop(task, None)
        # the rows just mapped, grouped as _ranked_items would decode the blob just packed
        for labels in _ranked_by_item((item, annotator, label, int(rank))
                                      for _, item, annotator, label, rank in rows).values():
            self.augmented.add_labels(labels)

    def _ranked_items(self, task: int) -> dict[Any, list[tuple[str, Any, int]]]:
        """The task's ranked rows as each item's ``(annotator, label, rank)``."""
        blob = self.ranked.get(task)
        if blob is None:
            return {}
        codes, rows = unpack_rows(blob, 4)
        items, names, labels = self.keys.decode(task, codes), self.annotators.values, self._ranked_labels.values
        return _ranked_by_item((items[place], names[who], labels[label], rank)
                               for place, who, label, rank in rows.tolist())

    def ranked_records(self, task: int) -> tuple[tuple[Any, ...], ...]:
        """The task's ranked rows ``(task, item, annotator, label, rank)``."""
        return tuple((task, item, *row) for item, rows in self._ranked_items(task).items() for row in rows)

    def held(self, task: int) -> tuple[Any, ...]:
        """What this control holds of ``task``: its rows, ranked rows, spans and references.

        It is compared with what the control holds after the task is read again.
        """
        return (self.records.get(task), self.ranked.get(task),
                self.spans.tasks.get(task) if self.spans is not None else None, self.references.get(task))

    def remove_task(self, task: int) -> None:
        """Forget the items of ``task``."""
        self._replace_rows(self.records.pop(task, None), None)
        self.references.pop(task, None)
        self._set_ranked(task, ())
        if self.spans is not None:
            self.spans.remove_task(task)

    def values(self) -> np.ndarray | None:
        """Numeric value of each column for the ordinal and interval levels."""
        if self.level == "nominal":
            return None
        return np.array([float(label) for label in self.labels.values])

    def agreement_weights(self) -> np.ndarray:
        """Gwet's weights between the columns of an ordered control, over the categories in use.

        The config's categories (a Rating's 1..maxRating) when it has them,
        else the values holding a rating now, in value order: a label seen
        once and deleted since does not stretch the scale.
        """
        values = self.values()
        assert values is not None
        used = (np.ones(len(values), dtype=bool) if self.categories is not None
                else self.sums.rated_columns()[: len(values)])
        order = np.flatnonzero(used)
        order = order[np.argsort(values[order], kind="stable")]
        weights = np.eye(len(values))
        if len(order):
            weights[np.ix_(order, order)] = agreement_weights(len(order), kind=LEVEL_WEIGHTS[self.level],
                                                              values=values[order])
        return weights

    def expected(self) -> float:
        """The project's expected disagreement ``D_e`` (NaN while undefined)."""
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", UndefinedMeasureWarning)
            return self.sums.expected_disagreement(level=self.level, values=self.values())  # type: ignore[arg-type]

    def task_scores(self, tasks: Sequence[int], *, every_task: bool = False, mapping: MappingOptions | None = None,
                    scoring: ScoringOptions | None = None, resample: bool = True,
                    built: dict[str, ScoredSpans] | None = None,
                    coded: dict[str, CodedRows] | None = None) -> ControlColumns:
        """This control's ``spa``, ``alpha`` and ``n_items`` for each of ``tasks``, as aligned columns.

        A span-like control adds ``f1``, ``f1_overlap`` and ``gamma``
        (:meth:`plugin.state.spans.SpanTasks.task_scores`, with ``mapping``,
        ``scoring`` and ``resample``; the defaults without). When it scored
        every task in one block, what that built is put in ``built`` under the
        control's name, for the project's scores to reuse; ``coded`` receives the rows as codes
        (:meth:`coded`), decoded once for the counts, the consensus and the project's scores.

        One vectorized :func:`plugin.state.scoring.task_terms` over all their items.
        Multiple choices add each task's ``item_class``: from the running sums
        for a few tasks, and with ``every_task`` (``tasks`` is every task) from
        :func:`agreement.augmented.classify_items` over all of them at once,
        which computes the same pair sums in one vectorized pass.
        Nominal items are passed packed (their non-zero counts only), so the
        cost does not grow with the number of categories.
        """
        wanted = np.asarray(tasks, dtype=np.int64)
        order = np.argsort(wanted, kind="stable")
        size = len(wanted)
        nominal = self.level == "nominal"
        has_items = np.zeros(size, dtype=bool)
        spa, alpha, agreement = np.full(size, np.nan), np.full(size, np.nan), None if nominal else np.full(size, np.nan)
        n_items = np.zeros(size, dtype=np.int64)
        stacked = self.stacked(tasks)
        sparse, owners = self.counts(tasks, stacked=stacked)
        if len(owners):
            counts = sparse.packed() if nominal else sparse.dense()
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", UndefinedMeasureWarning)
                table = task_terms(counts, owners, level=self.level, values=None if nominal else self.values(),
                                   expected=self.expected(),
                                   marginals=None if nominal else self.sums.pairable_totals,
                                   weights=None if nominal else self.agreement_weights())
            at = order[np.searchsorted(wanted, table.tasks, sorter=order)]
            has_items[at] = True
            spa[at], alpha[at], n_items[at] = rounded(table.spa), rounded(table.alpha), table.n_items
            if agreement is not None:  # distance-aware: a 4 against a 5 is near-agreement
                agreement[at] = rounded(table.agreement)
        item_class = ranked = None
        if self.augmented is not None:
            item_class = np.full(size, None, dtype=object)
            places = np.flatnonzero(has_items)
            if every_task:
                ranked = self.ranked_classes()
                item_class[places] = self._batch_classes(wanted[places], ranked)
            else:
                item_class[places] = [self._item_class(task) for task in wanted[places].tolist()]
        if coded is not None:
            coded[self.control.name] = self.coded(stacked, ranked=ranked[2] if ranked is not None else None)
        has_spans = np.zeros(size, dtype=bool)
        spans = flag_on = None
        if self.spans is not None:
            scoring = scoring or ScoringOptions()
            scored, values, whole = self.spans.task_scores(tasks, mapping or MappingOptions(), scoring,
                                                           every_task=every_task, resample=resample,
                                                           keep=built is not None)
            if whole is not None and built is not None:
                built[self.control.name] = whole
            at = order[np.searchsorted(wanted, np.asarray(scored, dtype=np.int64), sorter=order)]
            has_spans[at] = True
            spans = {key: np.full(size, np.nan) for key in values}
            for key, column in values.items():
                spans[key][at] = column
            flag_on = SPAN_FLAG_KEYS.get(scoring.span_flag_on)
        consensus = self._consensus(wanted, every_task=every_task, scoring=scoring or ScoringOptions(),
                                    stacked=stacked)
        return ControlColumns(has_items, has_spans, spa, alpha, n_items, agreement=agreement, item_class=item_class,
                              spans=spans, flag_on=flag_on, consensus=consensus,
                              given=self._given(wanted, flag_on, stacked, sparse))

    def _given(self, tasks: np.ndarray, flag_on: str | None, stacked: Stacked, counts: SparseCounts) -> GivenColumn:
        """Where each of ``tasks`` finds what its annotators gave here (``stacked`` and ``counts``: their rows)."""
        ids = tasks.tolist()
        scored = self.spans.scored if self.spans is not None else None
        spans = None
        if scored is not None:
            spans = np.full((len(ids), 3), -1, dtype=np.int32)
            held = np.fromiter((task in scored.held for task in ids), dtype=bool, count=len(ids))
            spans[held] = scored.matched([task for task, on in zip(ids, held.tolist(), strict=True) if on],
                                         "exact" if flag_on == "f1" else "overlap")
        _, n_items, _, key_codes = stacked.rows
        rows = np.fromiter((self.records.get(task) for task in ids), dtype=object, count=len(ids))
        return GivenColumn.of(tasks, rows, counts, n_items, key_codes, keys=self.keys, labels=self.labels.values,
                              label_set=self.control.multiple and self.categories == (NO, YES),
                              config_labels=tuple(self.control.labels or ()), spans=spans)

    def _consensus(self, tasks: np.ndarray, *, every_task: bool, scoring: ScoringOptions,
                   stacked: Stacked | None = None) -> TaskConsensus | None:
        """Each of ``tasks``' consensus (:mod:`plugin.state.consensus`); None where the control has none.

        Scoring every task fits the model from scratch and holds it; scoring a few scores their items with the
        model held (fit first if there is none yet), O(their annotations). ``stacked`` is :meth:`stacked` of
        ``tasks``, when the caller decoded them already.
        """
        method = scoring.consensus
        if not has_consensus(self.level, method):
            self.consensus = None
            return None
        if self.consensus is None and not every_task:
            self._consensus(np.array(list(self.records), dtype=np.int64), every_task=True, scoring=scoring)
        ids = tasks.tolist()
        rows, per_blob, _, key_codes = (stacked if stacked is not None else self.stacked(ids)).rows
        per_task = np.zeros(len(ids), dtype=np.intp)
        held = np.fromiter((task in self.records for task in ids), dtype=bool, count=len(ids))
        per_task[held] = per_blob
        n_items = int(per_task.sum())
        labels, known, fit_known = self._known(tasks, per_task)
        if every_task or self.consensus is None:
            self.consensus, items = fit_items(rows, n_items, known=fit_known, method=method,
                                              labels=self.labels.values, annotators=self.annotators.values,
                                              n_categories=len(self.categories or ()), prior=scoring.consensus_prior)
        else:
            items = held_items(self.consensus, rows, n_items, known=fit_known, n_labels=len(self.labels.values),
                               labels=self.labels.values, numbers=self._label_numbers(self.labels.values))
        return task_consensus(self.consensus.method, with_known(items, known), per_task, labels=labels,
                              keys=lambda at: tuple(short_key(ids[at], key) for key in self.task_items(ids[at])),
                              key_codes=key_codes,
                              label_set=self.control.multiple and self.categories == (NO, YES),
                              config_labels=self.control.labels)

    def _known(self, tasks: np.ndarray, per_task: np.ndarray) -> tuple[LabelValues, np.ndarray, np.ndarray]:
        """The items' labels known from ground truth (:func:`plugin.state.consensus.known_labels`), as codes.

        Gives the labels the codes stand for (the state's, then the ground truth's labels it never coded), each
        item's known label (-1: none), and the same where the label may inform a fit (-1 elsewhere): a ground
        truth's label that neither the config lists nor an annotator gives now is known, but the fit does without
        it. A live state may hold such a label coded from an earlier read where a batch read of the same tasks
        never coded it; fit with it in one and without it in the other, they would disagree.
        """
        n_coded = len(self.labels.values)
        extra: dict[Any, int] = {}

        def code(label: Any) -> int:
            found = self.labels.find(label)
            return found if found >= 0 else extra.setdefault(label, n_coded + len(extra))

        known = known_labels(tasks, per_task, self.references, items=self.task_items, code=code)
        labels = LabelValues(self.labels.values, tuple(extra))  # no copy of a free-text control's every answer
        at = np.flatnonzero(known >= 0)
        if not len(at):  # no ground truth on these items (nearly always)
            return labels, known, known.copy()
        codes = known[at]  # a known label informs a fit if it is one of the config's, or an annotator gives it now
        rated = self.sums.rated_columns()
        inside = codes < min(n_coded, len(rated))
        informs = codes < len(self.categories or ())
        informs[inside] |= rated[codes[inside]]
        fit_known = np.full_like(known, -1)
        fit_known[at[informs]] = codes[informs]
        return labels, known, fit_known

    def ranked_classes(self) -> tuple[np.ndarray, np.ndarray, RankedItems] | None:
        """Every task's multiple-choice items read at once: the tasks in order, their items' number, and the items.

        The items' primary and secondary labels (:func:`agreement.augmented.ranked_labels`) and each item's class
        (Rosenberg & Binkowski 2004; :func:`agreement.augmented.classify_items`), as the project's augmented kappa
        reads them; items are numbered, in task order, not named. None without ranked rows.
        """
        held = sorted(self.ranked)
        if not held:
            return None
        rows, n_items, _, _ = stacked_rows([self.ranked[task] for task in held], 4)
        frame = pd.DataFrame({"item": rows[:, 0], "annotator": annotator_column(self.annotators.values, rows[:, 1]),
                              "label": np.array(self._ranked_labels.values, dtype=object)[rows[:, 2]],
                              "rank": rows[:, 3]})
        labels = ranked_labels(frame)
        return np.array(held, dtype=np.int64), n_items, RankedItems(labels, classify_items(labels)["item_class"])

    def _batch_classes(self, tasks: np.ndarray, ranked: tuple[np.ndarray, np.ndarray, RankedItems] | None
                       ) -> np.ndarray:
        """The class of each of ``tasks``' multiple-choice items (:meth:`_item_class`), from :meth:`ranked_classes`.

        Taken from every item's class (Rosenberg & Binkowski 2004) computed at once.
        """
        out = np.full(len(tasks), None, dtype=object)
        if ranked is None:
            return out
        held_ids, n_items, items = ranked
        classes = items.classes
        per_item = np.full(int(n_items.sum()), None, dtype=object)
        codes, names = pd.factorize(classes)  # a few classes: each put in words once (NaN: -1, no class)
        per_item[classes.index.to_numpy(dtype=np.intp)] = np.array([*(str(c) for c in names), None],
                                                                   dtype=object)[codes]
        owner = np.repeat(np.arange(len(held_ids)), n_items)
        low = np.bincount(owner, weights=per_item == CONSTANT_LOW, minlength=len(held_ids)) > 0
        defined = np.flatnonzero(pd.notna(per_item))
        first = np.full(len(held_ids), -1)
        owners = owner[defined]
        heads = np.ones(len(defined), dtype=bool)  # owners ascend: each one's first defined item
        heads[1:] = owners[1:] != owners[:-1]
        first[owners[heads]] = defined[heads]
        by_task = np.where(low, CONSTANT_LOW, np.where(first >= 0, per_item[np.maximum(first, 0)], None))
        place = np.searchsorted(held_ids, tasks).clip(max=len(held_ids) - 1)  # held in order
        found = held_ids[place] == tasks
        out[found] = by_task[place[found]]
        return out

    def _item_class(self, task: int) -> str | None:
        """The class (Rosenberg & Binkowski 2004) of the task's multiple-choice item, from the running sums.

        It is "constant low" if any of its items is, else the first item's that is defined.
        """
        assert self.augmented is not None
        classes = [self.augmented.labels_class(labels) for labels in self._ranked_items(task).values()]
        defined = [c for c in classes if c is not None]
        return CONSTANT_LOW if CONSTANT_LOW in defined else (defined[0] if defined else None)

    def mapped(self, *, span_rows: bool = True, built: ScoredSpans | None = None,
               coded: CodedRows | None = None) -> MappedControl:
        """Every task's rows as one mapped control, for the project's full scores.

        The rows as codes (``coded``, when the caller decoded them: :meth:`task_scores`), which the scores read;
        the rows as tables (:func:`plugin.state.decoded.decoded_table`; no tuple per row) only once a reader asks
        for them (a report), from the blobs as they are now: they are immutable, and so are the codes they refer
        to.

        A span-like control's span rows and submitters too; without
        ``span_rows``, its units instead (:meth:`plugin.state.spans.SpanTasks.mapped`, ``built``'s when they are
        current).
        """
        spans = (self.spans.mapped(self.level, rows=span_rows, built=built) if self.spans is not None
                 else None)
        # the blobs as they are now, by task (a list of them, not a dict: a million tasks' dict is tens of MB)
        records, ranked = by_task(self.records), by_task(self.ranked)
        annotators = tuple(self.annotators.values)

        def decode() -> tuple[pd.DataFrame, pd.DataFrame | None]:
            return (decoded_table(records, ROW_COLUMNS, keys=self.keys, labels=self.labels.values,
                                  annotators=annotators),
                    decoded_table(ranked, RANKED_COLUMNS, keys=self.keys, labels=self._ranked_labels.values,
                                  annotators=annotators) if ranked[0] else None)

        return MappedControl(self.control, self.level, (),  # type: ignore[arg-type]
                             categories=self.categories, ranked_records=() if ranked[0] else None,
                             spans=spans.spans if spans is not None else None,
                             submitted=spans.submitted if spans is not None else None,
                             lengths=spans.lengths if spans is not None else None,
                             units=spans.units if spans is not None else None,
                             decode=decode,
                             coded=coded if coded is not None else self.coded(self.stacked(records[0])))

    def live_summary(self, scoring: ScoringOptions, mapping: MappingOptions | None = None) -> dict[str, Any]:
        """SPA with its bootstrap interval and alpha, from the running sums (what ``/status`` shows).

        ``n_annotations`` counts the annotations that answered the control (distinct task and annotator pairs,
        :func:`plugin.state.codes.answered`), ``n_labels`` the labels they gave over its items (a span control's
        regions, and the "no span" of an annotator who marked none there), and a span control's ``n_regions`` its
        regions alone.

        A span-like control adds ``f1``: ``{"exact", "overlap"}``, the mean over
        annotator pairs of their F1 from the running per-pair sums
        (:meth:`plugin.state.spans.SpanTasks.live_f1`).
        """
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", UndefinedMeasureWarning)
            spa = self.sums.spa()
            alpha = self.sums.alpha(level=self.level, values=self.values())  # type: ignore[arg-type]
            tally = self._rows_tally()  # the annotations and the items' shapes, kept as tasks change
            interval = None
            if not math.isnan(spa):
                ci = spa_interval_of_shapes(tally.shapes(), scoring)
                interval = list(ci) if ci is not None else None
            if self.level == "nominal":  # AC1 from the running sums, O(1)
                ac = self.sums.gwet_ac1(n_categories=len(self.categories) if self.categories else None)
            else:  # AC2 over the few ordered categories: the config's, or those holding a rating now
                counts = item_counts(list(self.records.values()), n_categories=len(self.labels.values))[0]
                matrix, values = counts.dense(), self.values()
                if self.categories is None and values is not None:
                    used = self.sums.rated_columns()[: len(values)]
                    matrix, values = matrix[:, used], values[used]
                ac = gwet_ac(matrix, level=self.level, values=values).value if len(matrix) else math.nan
        out = {"tag": self.control.tag, "level": self.level, "spa": number(spa), "ci": interval,
               "alpha": number(alpha), "gwet": {"coefficient": "AC1" if self.level == "nominal" else "AC2",
                                                "value": number(ac)},
               "n_items": self.sums.n_items, "n_annotations": tally.answered,
               "n_labels": int(self.sums.n_annotations)}
        if self.spans is not None:
            out["n_regions"] = self.spans.n_regions()
            out["f1"] = self.spans.live_f1(mapping or MappingOptions(), scoring)
        if self.consensus is not None:  # as fit at the last pass
            out["consensus"] = {"method": self.consensus.method, "n_items": self.consensus.n_items,
                                "accuracy": self.consensus.accuracy({}), "n_answers": self.consensus.answers({})}
        return out
