"""The state of one project: what Label Studio holds, as items and running sums, and the scores it implies.

One class serves every path. ``sync`` fills it from a full read; ``serve``
fills it the same way and then replaces one task at a time, with the task as
Label Studio returns it after an event (events only say which task to read);
the report reads it. So live equals batch by construction: a task's items,
its sums and its agreement block depend only on the task as read and on the
project's running sums, never on the order in which tasks arrived.

Per task it keeps, as codes (:class:`TaskEntry`), the counted submissions'
annotators and times, the agreement block of the meta as last read from
Label Studio (the write-back merges into a fresh read, never into this), the
annotation ids (deletion events carry only those), and what its mapping
skipped, so that the skip report always equals a batch read of the same
tasks. Per control it keeps each task's rows as int16 codes (int32 where a
task's need it; :mod:`plugin.codes`) and the running sums (:class:`agreement.RunningAgreement`),
which keep no per-item copy: the items' counts are derived from the rows,
vectorized over every task, when scoring needs them. Updating one task costs
O(its annotations) for nominal controls, whatever the number of categories;
a full read adds its tasks to the sums in vectorized batches.
A span-like control also keeps each task's spans, submitters and continua's
lengths (:class:`plugin.span_state.SpanTasks`): a task's pairwise F1 and
gamma cost O(its spans), gamma's expected disorder is sampled when every
task is scored and held in between, as the lowest-decile cut is.
"""

from __future__ import annotations

import json
import math
import warnings
from array import array
from collections import Counter
from collections.abc import Iterable, Iterator, Mapping, MutableMapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime, timedelta
from types import MappingProxyType
from typing import Any

import numpy as np
import pandas as pd

from agreement import RunningAgreement, UndefinedMeasureWarning, agreement_weights, gwet_ac
from agreement.augmented import classify_items, ranked_labels
from agreement.counts import SparseCounts
from agreement.gamma import ExpectedDisorder
from agreement.gwet import LEVEL_WEIGHTS
from agreement.ranges import ranges
from agreement.running_augmented import RunningAugmented
from agreement.span_f1 import SpanF1
from agreement.uniques import unique_inverse
from plugin import __version__
from plugin.annotations import Skips, Submission, collect_submissions, task_id
from plugin.clock import now_iso
from plugin.codes import IdIndex, Interned, ItemKeys, categorical, item_counts, pack_rows, stacked_rows, unpack_rows
from plugin.labelconfig import Control
from plugin.mapping import UNIT_MAPPERS, MappedControl, count_unmapped_results, map_control, map_project
from plugin.mapping.base import RANKED_COLUMNS, ROW_COLUMNS
from plugin.mapping.span_units import continuum_length
from plugin.references import is_reference, reference_block, reference_frame, task_reference_shares, task_references
from plugin.scoring import (
    CONSTANT_LOW,
    SPAN_FLAG_KEYS,
    ControlScore,
    number,
    rounded,
    score_control,
    spa_interval,
    task_terms,
)
from plugin.settings import MappingOptions, ReviewOptions, ScoringOptions
from plugin.span_state import ScoredSpans, SpanTasks
from plugin.task_scores import ControlColumns, TaskScores, lowest_decile
from plugin.writeback import META_KEY, TaskAsRead, agreement_block, diff_key, needed_write

__all__ = ["ControlState", "ProjectScores", "ProjectSnapshot", "ProjectState", "TaskEntry"]

SUMS_BATCH = 5_000
"""Tasks whose rows a batch adds to the sums at once: a vectorized call each, with bounded memory."""


NO_TIME = -(2**63)
"""The code of a submission time that does not read as ISO 8601."""
_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)


def _instant(text: str) -> int:
    """Microseconds since the epoch of an ISO 8601 time (UTC when it names no zone), or :data:`NO_TIME`."""
    try:
        moment = datetime.fromisoformat(text)
    except ValueError:
        return NO_TIME
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    return (moment - _EPOCH) // timedelta(microseconds=1)


def _iso(instant: int) -> str:
    """:func:`_instant`'s inverse, in UTC ("" for :data:`NO_TIME`)."""
    if instant == NO_TIME:
        return ""
    return (_EPOCH + timedelta(microseconds=instant)).isoformat().replace("+00:00", "Z")


_NO_META, _EMPTY_META = diff_key(None), diff_key({})
"""The diff keys of a task without meta, shared by every such task."""


@dataclass(frozen=True, slots=True)
class TaskEntry:
    """One task as last read from Label Studio.

    Only what scoring and the diff need is kept, compactly: the results are
    dropped once mapped (a re-read of a changed task brings them back), the
    counted annotations' annotators, times and every annotation id are one
    int64 array (:attr:`codes`), the meta's agreement block is compact JSON.

    Attributes
    ----------
    codes : bytes
        int64: the number ``n`` of counted annotations (one per annotator),
        their annotators' codes in ``people``, when each was submitted
        (microseconds since the epoch, :data:`NO_TIME` if unreadable), then
        every annotation id on the task (counted or not).
    people : list of str
        The project's annotators by code (shared by every entry).
    meta : bytes or object
        The agreement block of the task's meta as its diff key
        (:func:`plugin.writeback.diff_key`: JSON, its ``updated_at`` left
        out); the meta as read when it is not JSON.
    data_score, overlap : object
        The mirrored score and the overlap as read.
    skips : Counter or None
        What reading and mapping this task left out, by reason (None: nothing).
    times : tuple of str, optional
        The submission times as read, kept only when one does not read as ISO 8601.
    """

    codes: bytes
    people: list[str]
    meta: object
    data_score: object
    overlap: object
    skips: Counter[str] | None
    times: tuple[str, ...] | None = None

    @classmethod
    def of(cls, task: Mapping[str, Any], counted: Sequence[Submission], ids: Sequence[int], *, people: Interned,
           skips: Counter[str] | None) -> TaskEntry:
        """The entry of ``task`` as read, its ``counted`` submissions and its annotation ids."""
        instants = [_instant(s.created_at) for s in counted]
        read = TaskAsRead.of(task).diffed()
        if read.meta is None or read.meta == {}:  # no meta yet (most tasks, until a first write): one key for all
            meta: object = _NO_META if read.meta is None else _EMPTY_META
        else:
            try:
                meta = diff_key(read.meta)
            except (TypeError, ValueError):
                meta = read.meta
        codes = array("q", [len(counted), *(people.code(s.annotator) for s in counted), *instants, *ids]).tobytes()
        return cls(codes, people.values, meta, read.data_score, read.overlap, skips,
                   tuple(s.created_at for s in counted) if NO_TIME in instants else None)

    def _parts(self) -> tuple[int, np.ndarray]:
        values = np.frombuffer(self.codes, dtype=np.int64)
        return int(values[0]), values

    @property
    def n_annotations(self) -> int:
        """Counted annotations (one per annotator)."""
        return int(np.frombuffer(self.codes, dtype=np.int64, count=1)[0])

    @property
    def annotators(self) -> tuple[str, ...]:
        """The annotator of each counted annotation."""
        n, values = self._parts()
        return tuple(self.people[code] for code in values[1: 1 + n].tolist())

    @property
    def created(self) -> tuple[str, ...]:
        """When each counted annotation was submitted (ISO 8601), in the same order: the report's timeline."""
        if self.times is not None:
            return self.times
        n, values = self._parts()
        return tuple(_iso(instant) for instant in values[1 + n: 1 + 2 * n].tolist())

    @property
    def annotations(self) -> tuple[int, ...]:
        """Every annotation id on the task (counted or not)."""
        n, values = self._parts()
        return tuple(values[1 + 2 * n:].tolist())

    @property
    def read(self) -> TaskAsRead:
        """What the diff reads of the task: the agreement block of its meta, the mirrored score and the overlap as
        read (only ever compared with, never written back: a write merges into a fresh read of the task)."""
        meta = json.loads(self.meta) if isinstance(self.meta, bytes) else self.meta
        return TaskAsRead(meta, self.data_score, self.overlap)


class TaskEntries(MutableMapping[int, TaskEntry]):
    """Every task's :class:`TaskEntry` by task id, each field held in a dict of its own, and made into an entry
    when read.

    Every full collection of the garbage collector walks every container it
    tracks, and the pages of a read set one off about once a page. A dict
    whose keys and values are all numbers, text, bytes or None is never
    tracked; a dict holding one tracked object (an entry, or a tuple of its
    fields until a collection has met it) is, and each full collection then
    walks all of it. So the fields a task always has (its codes, its meta's
    diff key, its mirrored score and its overlap) are held in dicts of their
    own, which stay untracked: a read of a million tasks sets off about a
    thousand full collections, and a dict of a million entries walked by each
    made the build superlinear. The fields most tasks lack (``skips``,
    ``times``) are held only for the tasks that have them. A meta that is not
    JSON, or a mirrored score or an overlap that is a list, makes its dict
    tracked again: the tasks stay correct, the collections cost what they did.

    The bulk readers (:meth:`codes`, :meth:`read_alike`, :meth:`skips_by_task`,
    :meth:`times_by_task`) read the fields without making entries.
    """

    def __init__(self, people: Interned) -> None:
        self._people = people
        self._codes: dict[int, bytes] = {}
        self._meta: dict[int, object] = {}
        self._data_score: dict[int, object] = {}
        self._overlap: dict[int, object] = {}
        self._skips: dict[int, Counter[str]] = {}
        self._times: dict[int, tuple[str, ...]] = {}

    def __getitem__(self, task: int) -> TaskEntry:
        return TaskEntry(self._codes[task], self._people.values, self._meta[task], self._data_score[task],
                         self._overlap[task], self._skips.get(task), self._times.get(task))

    def __setitem__(self, task: int, entry: TaskEntry) -> None:
        self._codes[task] = entry.codes
        self._meta[task] = entry.meta
        self._data_score[task] = entry.data_score
        self._overlap[task] = entry.overlap
        for held, value in ((self._skips, entry.skips), (self._times, entry.times)):
            if value is None:
                held.pop(task, None)
            else:
                held[task] = value

    def __delitem__(self, task: int) -> None:
        del self._codes[task]  # KeyError for a task not held, as a dict's
        for held in (self._meta, self._data_score, self._overlap, self._skips, self._times):
            held.pop(task, None)

    def __iter__(self) -> Iterator[int]:
        return iter(self._codes)

    def __len__(self) -> int:
        return len(self._codes)

    def __contains__(self, task: object) -> bool:
        return task in self._codes

    def codes(self, tasks: Iterable[int] | None = None) -> list[bytes]:
        """:attr:`TaskEntry.codes` of ``tasks`` (default: every task, in order)."""
        held = self._codes
        return list(held.values()) if tasks is None else [held[task] for task in tasks]

    def held(self, task: int) -> tuple[object, ...]:
        """Every field of ``task``'s entry (its mirrored score and overlap with their types, as
        :meth:`read_alike`), to compare with the entry after the task is read again."""
        return self._codes[task], *self.read_alike(task), self._skips.get(task), self._times.get(task)

    def read_alike(self, task: int) -> tuple[object, ...]:
        """What the diff reads of ``task`` as last read, without making its entry: its meta's diff key
        (:attr:`TaskEntry.meta`), then the type and value of its mirrored score and of its overlap. Equal for two
        reads the diff reads alike: 1, 1.0 and True are equal in Python, but an overlap of 2 asks for one more
        annotator and one of 2.0 does not."""
        score, overlap = self._data_score[task], self._overlap[task]
        return self._meta[task], type(score), score, type(overlap), overlap

    def skips_by_task(self) -> Mapping[int, Counter[str]]:
        """:attr:`TaskEntry.skips` of the tasks whose reading skipped something (read-only; most have none)."""
        return MappingProxyType(self._skips)

    def times_by_task(self) -> Mapping[int, tuple[str, ...]]:
        """:attr:`TaskEntry.times` of the tasks whose times are kept as read (read-only; most have none)."""
        return MappingProxyType(self._times)


def _label_column(values: Sequence[Any], codes: np.ndarray) -> Any:
    """The labels of ``codes``, of the type pandas infers for a list of them (ratings: int64; text: pandas' string
    type where it infers one): inferred from the distinct labels used, then taken for every row."""
    if not len(codes):
        return []  # what pandas makes of no rows, as before
    used, place = unique_inverse(codes)
    return pd.Series([values[code] for code in used.tolist()]).array.take(place)


def _ranked_by_item(rows: Iterable[tuple[Any, str, Any, int]]) -> dict[Any, list[tuple[str, Any, int]]]:
    """Ranked rows ``(item, annotator, label, rank)`` as each item's ``(annotator, label, rank)``, in row order."""
    out: dict[Any, list[tuple[str, Any, int]]] = {}
    for item, annotator, label, rank in rows:
        out.setdefault(item, []).append((annotator, label, rank))
    return out


@dataclass
class ControlState:
    """One control's items, per task, and its running sums.

    A task's items and rows are held as one ``bytes`` object of int16 or int32 codes
    (:func:`plugin.codes.pack_rows`): each item's key as a code of :attr:`keys`, and each
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
        Per task with a reference (:mod:`plugin.references`), the rows of the
        task mapped with its references as more annotators.
    categories : tuple, optional
        The config's categories, or None when the labels seen are the categories.
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
    _batched: list[tuple[bytes | None, bytes | None]] | None = None

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
        """Take a task's ``old`` rows' items out of the sums and put its ``new`` ones in; in a batch
        (:meth:`batch`), once for the whole batch."""
        if self._batched is None:
            self._apply([(old, new)])
            return
        self._batched.append((old, new))
        if len(self._batched) >= SUMS_BATCH:
            self._apply(self._batched)
            self._batched = []

    def _apply(self, changes: list[tuple[bytes | None, bytes | None]]) -> None:
        """Update the sums with tasks' rows replaced (the sums are sums: the order does not matter)."""
        for sign, blobs in ((-1.0, [old for old, _ in changes if old is not None]),
                            (1.0, [new for _, new in changes if new is not None])):
            if blobs:
                counts = item_counts(blobs)[0]
                self.sums.apply_items(counts.indptr, counts.columns, counts.counts, sign=sign)

    def start_batch(self) -> None:
        """Hold the sums' updates until :meth:`end_batch` (applied :data:`SUMS_BATCH` tasks at a time): tasks read
        in a batch update them in one vectorized call, where a call per task costs more than its arithmetic."""
        self._batched = []

    def end_batch(self) -> None:
        """Apply the updates held since :meth:`start_batch`."""
        held, self._batched = self._batched or [], None
        self._apply(held)

    def _pack(self, task: int, rows: Iterable[tuple[Any, ...]]) -> bytes | None:
        """A task's rows ``(item, code, ...)`` as codes (:func:`plugin.codes.pack_rows`), each item as its place
        in the order first seen; None without rows."""
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

    def counts(self, tasks: Sequence[int]) -> tuple[SparseCounts, np.ndarray]:
        """The counts of every item of ``tasks`` and the task of each item, vectorized over all of them.

        :meth:`~agreement.counts.SparseCounts.packed` gives what every nominal
        per-item measure needs, whatever the number of labels;
        :meth:`~agreement.counts.SparseCounts.dense` one column per label.
        """
        known = [task for task in tasks if task in self.records]
        counts, per_task = item_counts([self.records[task] for task in known], n_categories=len(self.labels.values))
        return counts, np.repeat(np.array(known, dtype=np.int64), per_task)

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
        """What this control holds of ``task`` (its rows, ranked rows, spans and references), to compare with what
        it holds after the task is read again."""
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
                    built: dict[str, ScoredSpans] | None = None) -> ControlColumns:
        """``spa``, ``alpha`` and ``n_items`` of this control for each of ``tasks``, as columns aligned on them.

        A span-like control adds ``f1``, ``f1_overlap`` and ``gamma``
        (:meth:`plugin.span_state.SpanTasks.task_scores`, with ``mapping``,
        ``scoring`` and ``resample``; the defaults without). When it scored
        every task in one block, what that built is put in ``built`` under the
        control's name, for the project's scores to reuse.

        One vectorized :func:`plugin.scoring.task_terms` over all their items.
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
        sparse, owners = self.counts(tasks)
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
        item_class = None
        if self.augmented is not None:
            item_class = np.full(size, None, dtype=object)
            places = np.flatnonzero(has_items)
            if every_task:
                item_class[places] = self._batch_classes(wanted[places])
            else:
                item_class[places] = [self._item_class(task) for task in wanted[places].tolist()]
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
        return ControlColumns(has_items, has_spans, spa, alpha, n_items, agreement=agreement, item_class=item_class,
                              spans=spans, flag_on=flag_on)

    def _batch_classes(self, tasks: np.ndarray) -> np.ndarray:
        """The class of each of ``tasks``' multiple-choice items (:meth:`_item_class`), from every item's class
        (Rosenberg & Binkowski 2004) computed at once (:func:`agreement.augmented.classify_items`)."""
        held = list(self.ranked)
        out = np.full(len(tasks), None, dtype=object)
        if not held:
            return out
        rows, n_items, _, _ = stacked_rows([self.ranked[task] for task in held], 4)
        frame = pd.DataFrame({"item": rows[:, 0], "annotator": self._annotator_column(rows[:, 1]),
                              "label": np.array(self._ranked_labels.values, dtype=object)[rows[:, 2]],
                              "rank": rows[:, 3]})
        classes = classify_items(ranked_labels(frame))["item_class"]
        per_item = np.full(int(n_items.sum()), None, dtype=object)
        codes, names = pd.factorize(classes)  # a few classes: each put in words once (NaN: -1, no class)
        per_item[classes.index.to_numpy(dtype=np.intp)] = np.array([*(str(c) for c in names), None],
                                                                   dtype=object)[codes]
        owner = np.repeat(np.arange(len(held)), n_items)
        low = np.bincount(owner, weights=per_item == CONSTANT_LOW, minlength=len(held)) > 0
        defined = np.flatnonzero(pd.notna(per_item))
        first = np.full(len(held), -1)
        owners = owner[defined]
        heads = np.ones(len(defined), dtype=bool)  # owners ascend: each one's first defined item
        heads[1:] = owners[1:] != owners[:-1]
        first[owners[heads]] = defined[heads]
        by_task = np.where(low, CONSTANT_LOW, np.where(first >= 0, per_item[np.maximum(first, 0)], None))
        held_ids = np.array(held, dtype=np.int64)
        order = np.argsort(held_ids, kind="stable")
        place = np.searchsorted(held_ids, tasks, sorter=order).clip(max=len(held) - 1)
        found = held_ids[order[place]] == tasks
        out[found] = by_task[order[place[found]]]
        return out

    def _item_class(self, task: int) -> str | None:
        """The class (Rosenberg & Binkowski 2004) of the task's multiple-choice item, from the running sums:
        "constant low" if any of its items is, else the first item's that is defined."""
        assert self.augmented is not None
        classes = [self.augmented.labels_class(labels) for labels in self._ranked_items(task).values()]
        defined = [c for c in classes if c is not None]
        return CONSTANT_LOW if CONSTANT_LOW in defined else (defined[0] if defined else None)

    def table(self, blobs: Mapping[int, bytes], columns: Sequence[str], labels: Interned) -> pd.DataFrame:
        """Every task's rows of ``blobs`` (:attr:`records` or :attr:`ranked`) as one table, tasks in order, decoded
        with numpy from the codes: what :func:`plugin.mapping.base.frame` makes of the same rows as tuples."""
        tasks = sorted(blobs)
        rows, n_items, n_rows, keys = stacked_rows([blobs[task] for task in tasks], len(columns) - 1)
        ids = np.array(tasks, dtype=np.int64)
        # items as a categorical over their distinct names: every later grouping by item reads integer codes
        texts = self.keys.texts(np.repeat(ids, n_items), keys)
        if self.keys.texts_distinct(keys):  # every item its own name: its place is its code
            item, names = rows[:, 0], texts
        else:
            codes, names = pd.factorize(texts)
            item = codes[rows[:, 0]]
        out = {"task": np.repeat(ids, n_rows), "item": categorical(item, names),
               "annotator": self._annotator_column(rows[:, 1]),
               "label": _label_column(labels.values, rows[:, 2])}
        if len(columns) > 4:
            out[columns[4]] = rows[:, 3].astype(np.int64)
        return pd.DataFrame(out, columns=list(columns))

    def _annotator_column(self, codes: np.ndarray) -> pd.Categorical:
        """The annotators of rows by code, as a categorical over their names in sorted order: every grouping, sort
        and deduplication by annotator then reads integer codes, in the order the names would sort."""
        names = np.array([str(a) for a in self.annotators.values], dtype=object)
        order = np.argsort(names, kind="stable")
        place = np.empty(len(order), dtype=np.intp)
        place[order] = np.arange(len(order))
        return categorical(place[codes], names[order])

    def mapped(self, *, span_rows: bool = True, built: ScoredSpans | None = None) -> MappedControl:
        """Every task's rows as one mapped control, for the project's full scores, decoded as tables
        (:meth:`table`; no tuple per row).

        A span-like control's span rows and submitters too; without
        ``span_rows``, its units instead (:meth:`plugin.span_state.SpanTasks.mapped`, ``built``'s when they are
        current).
        """
        spans = (self.spans.mapped(self.level, rows=span_rows, built=built) if self.spans is not None
                 else None)
        return MappedControl(self.control, self.level, (),  # type: ignore[arg-type]
                             categories=self.categories, ranked_records=() if self.ranked else None,
                             spans=spans.spans if spans is not None else None,
                             submitted=spans.submitted if spans is not None else None,
                             lengths=spans.lengths if spans is not None else None,
                             units=spans.units if spans is not None else None,
                             tables=(self.table(self.records, ROW_COLUMNS, self.labels),
                                     self.table(self.ranked, RANKED_COLUMNS, self._ranked_labels)
                                     if self.ranked else None))

    def live_summary(self, scoring: ScoringOptions, mapping: MappingOptions | None = None) -> dict[str, Any]:
        """SPA with its bootstrap interval and alpha, from the running sums (what ``/status`` shows).

        A span-like control adds ``f1``: ``{"exact", "overlap"}``, the mean over
        annotator pairs of their F1 from the running per-pair sums
        (:meth:`plugin.span_state.SpanTasks.live_f1`).
        """
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", UndefinedMeasureWarning)
            spa = self.sums.spa()
            alpha = self.sums.alpha(level=self.level, values=self.values())  # type: ignore[arg-type]
            counts = self.counts(list(self.records))[0]
            interval = None
            if not math.isnan(spa):
                ci = spa_interval(counts.packed(), scoring)
                interval = list(ci) if ci is not None else None
            if self.level == "nominal":  # AC1 from the running sums, O(1)
                ac = self.sums.gwet_ac1(n_categories=len(self.categories) if self.categories else None)
            else:  # AC2 over the few ordered categories: the config's, or those holding a rating now
                matrix, values = counts.dense(), self.values()
                if self.categories is None and values is not None:
                    used = self.sums.rated_columns()[: len(values)]
                    matrix, values = matrix[:, used], values[used]
                ac = gwet_ac(matrix, level=self.level, values=values).value if len(matrix) else math.nan
        out = {"tag": self.control.tag, "level": self.level, "spa": number(spa), "ci": interval,
               "alpha": number(alpha), "gwet": {"coefficient": "AC1" if self.level == "nominal" else "AC2",
                                                "value": number(ac)},
               "n_items": self.sums.n_items, "n_annotations": int(self.sums.n_annotations)}
        if self.spans is not None:
            out["f1"] = self.spans.live_f1(mapping or MappingOptions(), scoring)
        return out


def _continuum_lengths(task: int, mapped: MappedControl, data: Mapping[str, Any],
                       results: list[Mapping[str, Any]]) -> dict[tuple[int, tuple[Any, ...]], float | None]:
    """The length of each of the task's continua for a span-like control, from its data and results.

    A task submitted with no span marked is the continuum ``(task, ())``.
    """
    last: dict[tuple[Any, ...], float] = {}
    for row in mapped.spans or ():
        if row[0] == task:
            last[row[1]] = max(last.get(row[1], 0.0), row[5])
    if not last and any(pair[0] == task for pair in mapped.submitted or ()):
        last[()] = 0.0
    return {(task, scope): continuum_length(mapped.control, data, results, scope=scope, last_end=end)
            for scope, end in last.items()}


@dataclass(frozen=True)
class ProjectScores:
    """Everything scored from a project's state at one moment (the sync summary and the report read this).

    Attributes
    ----------
    controls : dict of str to ControlScore
    tasks : TaskScores
    skips : Skips
    n_annotations : int
        Counted annotations over all tasks.
    annotators : tuple of str
    config : dict
        Per control with any: the ``problems`` that made it skipped, and ``notes``.
    """

    controls: dict[str, ControlScore]
    tasks: TaskScores
    skips: Skips
    n_annotations: int
    annotators: tuple[str, ...]
    config: dict[str, dict[str, list[str]]] = field(default_factory=dict)


@dataclass(frozen=True)
class ProjectSnapshot:
    """What the project's full scores are computed from, taken in one cheap step (O(annotations), no scoring).

    The service takes it under the project's lock and scores it after
    releasing the lock, so events do not wait for the bootstrap.

    Attributes
    ----------
    mapped : dict of str to MappedControl
        Every task's rows, per control.
    tasks : TaskScores
    skips : Skips
    n_annotations : int
    annotators : tuple of str
    config : dict
    times : DataFrame
        ``task``, ``annotator`` and ``time`` (UTC) of every counted
        annotation (:meth:`ProjectState.annotation_times`).
    scoring : ScoringOptions
    mapping : MappingOptions
        Its ``span_jaccard`` is the Jaccard of overlap F1.
    expected : dict of str to ExpectedDisorder
        Per span-like control, gamma's expected disorder as sampled when
        every task was scored (so that it is sampled once per pass).
    observed : dict of str to float
        Per span-like control, gamma's observed disorder from every task's
        held best alignment (so that no task is aligned twice).
    span_f1 : dict of str to dict
        Per span-like control whose tasks were all scored in one block when
        the snapshot was taken: per match, the pairwise F1 counts of every
        continuum (so that no span is matched twice).
    references : dict of str to tuple
        Per control with references, the rows mapped with them (see
        :attr:`ControlState.references`).
    reference_authors : dict of int to str
        Per task whose ground truth a reviewer marked, its author.
    """

    mapped: dict[str, MappedControl]
    tasks: TaskScores
    skips: Skips
    n_annotations: int
    annotators: tuple[str, ...]
    config: dict[str, dict[str, list[str]]]
    times: pd.DataFrame = field(compare=False)
    scoring: ScoringOptions
    mapping: MappingOptions = field(default_factory=MappingOptions)
    expected: dict[str, ExpectedDisorder] = field(default_factory=dict)
    observed: dict[str, float] = field(default_factory=dict)
    span_f1: dict[str, dict[str, SpanF1]] = field(default_factory=dict, compare=False)
    references: dict[str, tuple[tuple[Any, ...], ...]] = field(default_factory=dict)
    reference_authors: dict[int, str] = field(default_factory=dict)

    def reference_scores(self, name: str) -> dict[str, Any] | None:
        """The control's ``references`` block (:func:`plugin.references.reference_block`), None without any."""
        mapped = self.mapped[name]
        return control_references(self.references.get(name, ()), self.reference_authors, level=mapped.level,
                                  categories=mapped.categories, scoring=self.scoring)

    def scores(self) -> ProjectScores:
        """The full project scores (kappa family, augmented kappa, per label, span measures, references) and every
        task's scores."""
        return ProjectScores(
            controls={name: replace(score_control(mapped, self.scoring, span_jaccard=self.mapping.span_jaccard,
                                                  expected=self.expected.get(name),
                                                  observed=self.observed.get(name),
                                                  f1_counts=self.span_f1.get(name)),
                                    references=self.reference_scores(name))
                      for name, mapped in self.mapped.items()},
            tasks=self.tasks, skips=self.skips, n_annotations=self.n_annotations, annotators=self.annotators,
            config=self.config)


def _items_are_fixed(control: Control) -> bool:
    """Whether a control's items on a task are the same whoever answered it (a task-level control with the
    config's labels), so a reference's rows can be mapped apart from the annotators'."""
    if control.tag not in UNIT_MAPPERS or control.tag == "ranker" or control.per_region or control.pattern:
        return False
    return not (control.multiple and (control.tag == "taxonomy" or not control.labels))


def control_references(rows: Sequence[tuple[Any, ...]], authors: Mapping[int, str], *, level: str,
                       categories: tuple[Any, ...] | None, scoring: ScoringOptions,
                       people: Mapping[str, str] | None = None) -> dict[str, Any] | None:
    """A control's ``references`` block from its rows mapped with the references (None without any)."""
    if not rows:
        return None
    return reference_block(reference_frame(rows), authors, level=level, categories=categories,
                           confidence=scoring.confidence, min_gt_accuracy=scoring.min_gt_accuracy,
                           min_gt_items=scoring.min_gt_items, people=people)


class ProjectState:
    """A project's tasks as last read, their items per control, and the running sums.

    Parameters
    ----------
    project : int or None
        The project id (None for an export read offline). A task read from
        Label Studio that names another project is refused.
    controls : mapping of str to Control
    mapping, scoring : MappingOptions, ScoringOptions

    Attributes
    ----------
    decile_cut : float or None
        With ``scoring.lowest_decile``: the project's 10th percentile of task
        scores, computed whenever every task is scored (a pass, a sync, a
        report) and used for the tasks scored one by one in between.
    changes : int
        Counts the tasks set that differ from what the state held of them
        (a task read again as it was is not one) and the tasks removed: what
        the state holds differs from what it held at an earlier count only if
        the count moved.

    Not thread-safe: the service holds its lock around every call.
    """

    def __init__(self, project: int | None, controls: Mapping[str, Control], *, mapping: MappingOptions,
                 scoring: ScoringOptions) -> None:
        self.project = project
        self.mapping = mapping
        self.scoring = scoring
        self.control_specs = dict(sorted(controls.items()))
        probes = map_project(self.control_specs, {}, Skips(), mapping)
        self.controls = {name: ControlState.create(probe) for name, probe in probes.items()}
        self._people = Interned()
        self.tasks = TaskEntries(self._people)
        self._task_of_annotation = IdIndex()
        self.refused: Counter[str] = Counter()
        self.decile_cut: float | None = None
        self.changes = 0
        self._stale: tuple[int, ReviewOptions, array[int]] | None = None  # the last pass's answer, at a count
        self.reference_authors: dict[int, str] = {}
        self.latest_models: dict[int, str] = {}

    def mapped_with(self, controls: Mapping[str, Control], *, mapping: MappingOptions,
                    scoring: ScoringOptions) -> bool:
        """Whether this state was mapped with ``controls`` (a label config as read now) and these options: a state
        mapped otherwise is read again in full, never added to."""
        same_options = (self.mapping, self.scoring) == (mapping, scoring)
        return same_options and self.control_specs == dict(sorted(controls.items()))

    @classmethod
    def from_tasks(cls, tasks: Iterable[Mapping[str, Any]], controls: Mapping[str, Control], *,
                   mapping: MappingOptions, scoring: ScoringOptions, project: int | None = None) -> ProjectState:
        """The state of tasks as Label Studio gives them (a JSON export, or a read): the one way in offline."""
        state = cls(project, controls, mapping=mapping, scoring=scoring)
        state.load(tasks)
        return state

    # --- what Label Studio holds ---

    def set_task(self, task: Mapping[str, Any]) -> int | None:
        """Replace one task with ``task`` as Label Studio returned it; return its id, or None if refused.

        A task without an id, or of another project than this state's, is
        refused and counted in :attr:`refused`.
        """
        identifier = task_id(task)
        if identifier is None:
            self.refused["task without an id"] += 1
            return None
        owner = task.get("project")
        if self.project is not None and owner is not None and owner != self.project:
            self.refused["task of another project (ignored)"] += 1
            return None
        before = self._held(identifier)
        try:
            return self._set_task(identifier, task)
        finally:  # a task read again as it was is no change; one whose read failed half-way is compared as it is
            if before is None or self._held(identifier) != before:
                self.changes += 1

    def _held(self, task: int) -> tuple[Any, ...] | None:
        """Everything the state holds of ``task`` (None: not known), to compare before and after a read of it."""
        if task not in self.tasks:
            return None
        return (self.tasks.held(task), self.reference_authors.get(task), self.latest_models.get(task),
                *(control.held(task) for control in self.controls.values()))

    def _set_task(self, identifier: int, task: Mapping[str, Any]) -> int:
        """:meth:`set_task` once the task is taken."""
        skips = Skips()
        submissions = collect_submissions([task], skips, include_ground_truth=self.mapping.include_ground_truth)
        counted = submissions.get(identifier, [])
        own = Skips()
        mapped = self._map(identifier, counted, own)
        skips.reasons.update(own.reasons)
        self._set_references(identifier, task, counted, skips, mapped=mapped, own=own)
        data = task.get("data")
        results = [result for submission in counted for result in submission.results]
        for name, control in self.controls.items():
            lengths = (_continuum_lengths(identifier, mapped[name], data if isinstance(data, Mapping) else {},
                                          results) if control.spans is not None else None)
            control.set_task(identifier, mapped[name], lengths=lengths)
        annotations = task.get("annotations")
        ids = tuple(dict.fromkeys(a["id"] for a in annotations if isinstance(a, Mapping)
                                  and isinstance(a.get("id"), int) and not isinstance(a.get("id"), bool)
                                  and -(2**63) < a["id"] < 2**63)) if isinstance(annotations, list) else ()
        previous = self.tasks.get(identifier)
        held = previous.annotations if previous is not None else ()
        if held != ids:  # a task read again as it was (every pass) leaves the index as it is
            self._task_of_annotation.set(identifier, held, ids)
        self.tasks[identifier] = TaskEntry.of(task, counted, ids, people=self._people, skips=skips.reasons or None)
        return identifier

    def _set_references(self, task: int, read: Mapping[str, Any], counted: list[Submission], skips: Skips, *,
                        mapped: Mapping[str, MappedControl], own: Skips) -> None:
        """Map the task's references with its annotations (``mapped``, as this read mapped them) and keep the rows
        (:mod:`plugin.references`); what the references' results leave out is counted as theirs."""
        references = task_references(read, task, skips)
        self.reference_authors.pop(task, None)
        self.latest_models.pop(task, None)
        if not references.submissions:
            for control in self.controls.values():
                control.references.pop(task, None)
            return
        if references.author is not None:
            self.reference_authors[task] = references.author
        if references.latest_model is not None:
            self.latest_models[task] = references.latest_model
        # A control whose items do not depend on who answered maps the references alone, beside the annotators'
        # rows; the others (regions, spans, label sets without the config's labels, repeaters) are mapped again
        # with the annotators, so the references' regions are aligned with theirs. What the references leave out:
        # their results of controls not in the config, the skips of their own mapping, and what the joint mapping
        # skipped beyond what the annotators' alone did.
        refs, theirs = list(references.submissions), Skips()
        count_unmapped_results(self.control_specs, {task: refs}, theirs)
        fixed = {name: c for name, c in self.control_specs.items() if _items_are_fixed(c)}
        joint_specs = {name: c for name, c in self.control_specs.items() if name not in fixed}
        alone_refs = self._map(task, refs, theirs, specs=fixed) if fixed else {}
        if joint_specs:
            both = Skips()
            joint = self._map(task, [*counted, *refs], both, specs=joint_specs)
            theirs.reasons.update(both.reasons - own.reasons)
        else:
            joint = {}
        skips.reasons.update({f"in a reference: {reason}": n for reason, n in theirs.reasons.items()})
        for name, control in self.controls.items():
            rows = (joint[name].records if name in joint
                    else (*mapped[name].records, *alone_refs[name].records))
            if any(is_reference(row[2]) for row in rows):
                control.references[task] = rows
            else:
                control.references.pop(task, None)

    def _map(self, task: int, counted: list[Submission], skips: Skips,
             specs: Mapping[str, Control] | None = None) -> dict[str, MappedControl]:
        """The task's items per control (of ``specs``, a subset mapped for the references: without counting the
        others' results, and items only; by default every control); a control whose mapping fails on this task is
        skipped with the reason."""
        attempt = Skips()
        subset = specs is not None
        specs = self.control_specs if specs is None else specs
        try:
            mapped = map_project(specs, {task: counted}, attempt, self.mapping, count_unmapped=not subset,
                                 with_spans=not subset)
        except Exception:  # noqa: BLE001 (one control's failure must not poison the task: map them one by one)
            mapped = None
        if mapped is not None:
            skips.reasons.update(attempt.reasons)
            return mapped
        out = {}
        for name, control in specs.items():
            try:
                out[name] = map_control(control, {task: counted}, skips, self.mapping, controls=self.control_specs)
            except Exception as error:  # noqa: BLE001
                skips.add(f"result the mapping failed on ({type(error).__name__}): {control.describe()}")
                out[name] = map_control(control, {}, Skips(), self.mapping, controls=self.control_specs)
        return out

    def remove_task(self, task: int) -> bool:
        """Forget a task (deleted in Label Studio); return whether it was known."""
        entry = self.tasks.pop(task, None)
        if entry is None:
            return False
        self.changes += 1
        self._task_of_annotation.set(task, entry.annotations, ())
        for control in self.controls.values():
            control.remove_task(task)
        self.reference_authors.pop(task, None)
        self.latest_models.pop(task, None)
        return True

    def load(self, tasks: Iterable[Mapping[str, Any]]) -> None:
        """Add every task of a full read (on an empty state: the batch path)."""
        with self.batch():
            for task in tasks:
                self.set_task(task)

    @contextmanager
    def batch(self) -> Iterator[None]:
        """Tasks set within are added to the sums in batches (:meth:`ControlState.start_batch`): a full read's
        path. The sums are up to date once it ends, and only then."""
        for control in self.controls.values():
            control.start_batch()
        try:
            yield
        finally:
            for control in self.controls.values():
                control.end_batch()

    def task_of_annotation(self, annotation: int) -> int | None:
        """The task an annotation id belongs to, if it is known."""
        return self._task_of_annotation.get(annotation)

    def meta(self, task: int) -> Any:
        """The task's meta as last read, as far as the diff reads it: its agreement block alone."""
        entry = self.tasks.get(task)
        return None if entry is None else entry.read.meta

    # --- what it implies ---

    def skips(self) -> Skips:
        """What reading and mapping left out, by reason, over every task (as a batch read would count it),
        and the tasks refused."""
        total = Skips()
        for skips in self.tasks.skips_by_task().values():
            total.reasons.update(skips)
        total.reasons.update(self.refused)
        return total

    def task_scores(self, tasks: Iterable[int] | None = None, *, resample: bool = True,
                    built: dict[str, ScoredSpans] | None = None) -> TaskScores:
        """The scores of ``tasks`` (default: every known task), one vectorized pass per control, held as columns
        (:class:`plugin.task_scores.TaskScores`: a task's score is built when it is read).

        Scoring every task samples each span control's expected disorder again
        if a task changed; with ``resample=False`` the disorder held from the
        last time is kept (sampled only if there is none yet). ``built``
        receives, per span-like control that scored every task in one block,
        what that built (:meth:`ControlState.task_scores`).
        """
        wanted = list(dict.fromkeys(t for t in (self.tasks if tasks is None else tasks) if t in self.tasks))
        columns: dict[str, ControlColumns] = {}
        for name, control in self.controls.items():
            columns[name] = scores = control.task_scores(wanted, every_task=tasks is None, mapping=self.mapping,
                                                         scoring=self.scoring, resample=resample, built=built)
            if control.references:
                rows = reference_frame(row for task in wanted for row in control.references.get(task, ()))
                shares = task_reference_shares(rows, self.reference_authors, self.latest_models)
                present = scores.has_items | scores.has_spans
                scores.extra.update((place, shares[task]) for place, task in enumerate(wanted)
                                    if task in shares and present[place])
        n_annotations = self._counted(self.tasks.codes(wanted))[0]
        if self.scoring.lowest_decile and tasks is None:  # every task scored: the cut moves here, and only here
            self.decile_cut = lowest_decile(columns, n_annotations)
        cut = self.decile_cut if self.scoring.lowest_decile else None
        return TaskScores(wanted, n_annotations, columns, self.scoring, decile_cut=cut)

    def blocks(self, tasks: Iterable[int] | None = None, *, updated_at: str) -> dict[int, dict[str, Any]]:
        """The agreement block each of ``tasks`` (default: every known task) should carry in its meta."""
        return dict(self._blocks(tasks, updated_at=updated_at))

    def _blocks(self, tasks: Iterable[int] | None = None, *, updated_at: str) -> Iterator[tuple[int, dict[str, Any]]]:
        """:meth:`blocks` one task at a time (a pass over every task never holds them all)."""
        for task, score in self.task_scores(tasks).items():
            yield task, agreement_block(score, version=__version__, updated_at=updated_at)

    def stale_tasks(self, *, review: ReviewOptions | None = None) -> list[int]:
        """Tasks whose meta (and with ``review``, the mirrored score and the overlap), as last read, differ from
        what they should carry (:func:`plugin.writeback.needed_write`).

        Tasks with equal score columns carry equal blocks
        (:meth:`plugin.task_scores.TaskScores.score_codes`), so each distinct
        block is built once, and a task whose meta's diff key equals its
        block's (:func:`plugin.writeback.diff_key`) is compared no further
        than its mirrored score and overlap. Any other task is diffed in full,
        once for all tasks that share its block and read alike (the same meta
        diff key, and the same mirrored score and overlap, of the same types):
        a first pass, before any block is written, diffs each distinct block
        once, not every task.

        A pass on a state that has not changed since the last one (no task
        removed, or read other than as it was held: :attr:`changes`; a pass
        of changed tasks reads the last few again), with the same ``review``,
        gives the last answer again without computing anything: what a task
        should carry and what it carries both come from the state alone. Tasks
        written since are not taken out of it: a write is known here once the
        task is read again (a pass reads the tasks Label Studio changed), and a
        write that never landed stays stale.
        """
        review = review or ReviewOptions(tab=False)
        if self._stale is not None and self._stale[0] == self.changes and self._stale[1] == review:
            return self._stale[2].tolist()
        at = self.changes
        stale = self._stale_now(review)
        self._stale = (at, review, array("q", stale))  # 8 bytes a task: a first pass may find every task stale
        return stale

    def _stale_now(self, review: ReviewOptions) -> list[int]:
        """:meth:`stale_tasks`, computed."""
        updated_at = now_iso()
        scores = self.task_scores()
        codes, own = scores.score_codes()
        blocks: dict[int, tuple[dict[str, Any], bytes]] = {}  # per code: its block and the block's diff key
        decided: dict[tuple[Any, ...], bool] = {}  # per code and task as read: whether it needs a write
        stale = []
        for place, (task, code, alone) in enumerate(zip(scores.tasks.tolist(), codes.tolist(), own.tolist(),
                                                        strict=True)):
            held = None if alone else blocks.get(code)
            if held is None:
                block = agreement_block(scores.at(place), version=__version__, updated_at=updated_at)
                try:
                    held = (block, diff_key({META_KEY: block}))
                except (TypeError, ValueError):  # not JSON: never taken as current, always diffed in full
                    held = (block, b"")
                if not alone:
                    blocks[code] = held
            block, key = held
            alike = self.tasks.read_alike(task)
            meta = alike[0]
            current = meta == key  # the meta carries the block: only mirror and overlap remain
            if current and not (review.mirror_to_data or review.escalate):
                continue
            memo = None if alone or not isinstance(meta, bytes) else (code, *alike)  # a meta not JSON: diffed alone
            try:
                needed = decided.get(memo) if memo is not None else None
            except TypeError:  # a mirrored score or an overlap that is not hashable (any JSON): diffed alone
                memo, needed = None, None
            if needed is None:
                needed = needed_write(self.tasks[task].read, block, review=review, meta_current=current) is not None
                if memo is not None:
                    decided[memo] = needed
            if needed:
                stale.append(task)
        return sorted(stale)

    def config_remarks(self) -> dict[str, dict[str, list[str]]]:
        """Per control whose config has any: its ``problems`` (the control is skipped) and ``notes``."""
        return {name: {"problems": list(c.problems), "notes": list(c.notes)}
                for name, c in self.control_specs.items() if c.problems or c.notes}

    def mapped(self, *, span_rows: bool = True, built: Mapping[str, ScoredSpans] | None = None
               ) -> dict[str, MappedControl]:
        """Every control's rows over all tasks (immutable: safe to score after the lock is released); without
        ``span_rows``, span-like controls' units instead of their span rows (:meth:`ControlState.mapped`; those
        ``built`` holds for the control, when current)."""
        built = built or {}
        return {name: control.mapped(span_rows=span_rows, built=built.get(name))
                for name, control in self.controls.items()}

    def reference_inputs(self) -> tuple[dict[str, tuple[tuple[Any, ...], str, tuple[Any, ...] | None]],
                                        dict[int, str]]:
        """Per control with references, its rows mapped with them, its level and categories; and the authors of
        reviewer-marked ground truths: what :func:`control_references` scores, taken in O(rows) under the lock."""
        inputs = {name: (tuple(row for task in sorted(control.references) for row in control.references[task]),
                         control.level, control.categories)
                  for name, control in self.controls.items() if control.references}
        return inputs, dict(self.reference_authors)

    def annotators(self) -> tuple[str, ...]:
        """Every annotator with a counted annotation."""
        _, who, _ = self._counted(self.tasks.codes())
        return tuple(sorted({self._people.values[code] for code in np.unique(who).tolist()}))

    def n_annotations(self) -> int:
        """Counted annotations over all tasks."""
        return int(self._counted(self.tasks.codes())[0].sum())

    @staticmethod
    def _counted(blobs: Sequence[bytes]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Of entries' :attr:`TaskEntry.codes`, each one's number of counted annotations; and of every counted
        annotation, its annotator's code and when it was submitted, decoded for all entries at once."""
        flat = np.frombuffer(b"".join(blobs), dtype=np.int64)
        lengths = np.fromiter(map(len, blobs), dtype=np.intp, count=len(blobs)) // 8
        starts = np.cumsum(lengths) - lengths
        n = flat[starts].astype(np.intp)
        return n, flat[ranges(starts + 1, n)], flat[ranges(starts + 1 + n, n)]

    def live_summary(self) -> dict[str, dict[str, Any]]:
        """Per control, SPA with its interval and alpha from the running sums."""
        return {name: control.live_summary(self.scoring, self.mapping) for name, control in self.controls.items()}

    def annotation_times(self) -> pd.DataFrame:
        """``task``, ``annotator`` and ``time`` (UTC, NaT where it does not read as ISO 8601) of every counted
        annotation: the report's timeline. Decoded from the entries' codes with numpy, not a tuple an annotation."""
        n, who, instants = self._counted(self.tasks.codes())
        time = pd.Series(instants.view("datetime64[us]")).dt.tz_localize("UTC")
        first = np.cumsum(n) - n
        kept = self.tasks.times_by_task()  # times kept as read (one is not ISO 8601): few tasks, usually none
        for at, task in enumerate(self.tasks if kept else ()):
            if (times := kept.get(task)) is not None:
                time.iloc[first[at]: first[at] + n[at]] = pd.to_datetime(
                    pd.Series(times), utc=True, errors="coerce", format="ISO8601").to_numpy()
        return pd.DataFrame({"task": np.repeat(np.fromiter(self.tasks, dtype=np.int64, count=len(n)), n),
                             "annotator": np.array(self._people.values, dtype=object)[who], "time": time})

    def snapshot(self) -> ProjectSnapshot:
        """What the full scores are computed from, without computing them (see :class:`ProjectSnapshot`)."""
        # Taken under the service's lock: a span control's expected disorder (seconds of sampling) is the one held
        # from the last pass, and sampled here only when there is none yet (an offline report).
        built: dict[str, ScoredSpans] = {}  # a first full scoring's units and matches, reused below
        tasks = self.task_scores(resample=False, built=built)
        expected = {name: control.spans.expected for name, control in self.controls.items()
                    if control.spans is not None and control.spans.expected is not None}
        observed = {name: control.spans.observed() for name, control in self.controls.items()
                    if control.spans is not None}  # every task was scored just above
        inputs, authors = self.reference_inputs()
        times = self.annotation_times()  # every counted annotation: their number and annotators are read from it
        return ProjectSnapshot(mapped=self.mapped(span_rows=False, built=built),
                               tasks=tasks, skips=self.skips(), n_annotations=len(times),
                               annotators=tuple(sorted(times["annotator"].unique().tolist())),
                               config=self.config_remarks(), times=times,
                               scoring=self.scoring, mapping=self.mapping, expected=expected, observed=observed,
                               span_f1={name: spans.f1 for name, spans in built.items()},
                               references={name: rows for name, (rows, _, _) in inputs.items()},
                               reference_authors=authors)

    def scores(self) -> ProjectScores:
        """The full project scores (kappa family, augmented kappa, per label) and every task's scores."""
        return self.snapshot().scores()

