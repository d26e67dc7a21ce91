"""A project's task index: per task, what its counted submissions and its meta were when last read.

Each task's entry (:class:`TaskEntry`) is a few codes: the submissions' annotators and times, the annotation ids
(deletion events carry only those), the diff key of its meta as read, and what its mapping skipped, so that the
skip report always equals a batch read of the same tasks.
"""

from __future__ import annotations

import json
import sys
from array import array
from collections import Counter
from collections.abc import Iterable, Iterator, Mapping, MutableMapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from types import MappingProxyType
from typing import Any

import numpy as np

from plugin.mapping.annotations import Submission
from plugin.state.blocks import TaskAsRead, diff_key
from plugin.state.codes import (
    Interned,
)
from plugin.state.predictions import HeldPrediction

__all__ = ["NO_TIME", "TaskEntries", "TaskEntry"]


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


def _counted(codes: bytes) -> int:
    """The number of counted annotations :attr:`TaskEntry.codes` starts with."""
    return int.from_bytes(codes[:8], sys.byteorder, signed=True)


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
        (:func:`plugin.state.blocks.diff_key`: JSON, its ``updated_at`` left
        out); the meta as read when it is not JSON.
    data_score, overlap : object
        The mirrored score and the overlap as read.
    skips : Counter or None
        What reading and mapping this task left out, by reason (None: nothing).
    times : tuple of str, optional
        The submission times as read, kept only when one does not read as ISO 8601.
    prediction : tuple, optional
        The task's consensus prediction as read (:class:`~plugin.state.predictions.HeldPrediction`'s fields).
    """

    codes: bytes
    people: list[str]
    meta: object
    data_score: object
    overlap: object
    skips: Counter[str] | None
    times: tuple[str, ...] | None = None
    prediction: tuple[int, bytes, tuple[int, ...]] | None = None

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
        held = read.prediction
        return cls(codes, people.values, meta, read.data_score, read.overlap, skips,
                   tuple(s.created_at for s in counted) if NO_TIME in instants else None,
                   (held.id, held.key, held.extra) if held is not None else None)

    def _parts(self) -> tuple[int, np.ndarray]:
        values = np.frombuffer(self.codes, dtype=np.int64)
        return int(values[0]), values

    @property
    def n_annotations(self) -> int:
        """Counted annotations (one per annotator)."""
        return _counted(self.codes)

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
        """What the diff reads of the task: its meta's agreement block, mirrored score and overlap, as read.

        These are only ever compared with, never written back: a write merges into a fresh read of the task.
        """
        meta = json.loads(self.meta) if isinstance(self.meta, bytes) else self.meta
        return TaskAsRead(meta, self.data_score, self.overlap,
                          HeldPrediction(*self.prediction) if self.prediction is not None else None)


class TaskEntries(MutableMapping[int, TaskEntry]):
    """Every task's :class:`TaskEntry` by task id, each field held in a dict of its own.

    The fields are made into an entry when read.

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
        self._n_annotations = 0  # counted annotations over every entry, kept as entries change
        self._codes: dict[int, bytes] = {}
        self._meta: dict[int, object] = {}
        self._data_score: dict[int, object] = {}
        self._overlap: dict[int, object] = {}
        self._skips: dict[int, Counter[str]] = {}
        self._times: dict[int, tuple[str, ...]] = {}
        self._prediction: dict[int, tuple[int, bytes, tuple[int, ...]]] = {}

    def __getitem__(self, task: int) -> TaskEntry:
        return TaskEntry(self._codes[task], self._people.values, self._meta[task], self._data_score[task],
                         self._overlap[task], self._skips.get(task), self._times.get(task),
                         self._prediction.get(task))

    def __setitem__(self, task: int, entry: TaskEntry) -> None:
        old = self._codes.get(task)
        self._n_annotations += _counted(entry.codes) - (_counted(old) if old is not None else 0)
        self._codes[task] = entry.codes
        self._meta[task] = entry.meta
        self._data_score[task] = entry.data_score
        self._overlap[task] = entry.overlap
        for held, value in ((self._skips, entry.skips), (self._times, entry.times),
                            (self._prediction, entry.prediction)):
            if value is None:
                held.pop(task, None)
            else:
                held[task] = value

    def __delitem__(self, task: int) -> None:
        self._n_annotations -= _counted(self._codes.pop(task))  # KeyError for a task not held, as a dict's
        for held in (self._meta, self._data_score, self._overlap, self._skips, self._times, self._prediction):
            held.pop(task, None)

    def __iter__(self) -> Iterator[int]:
        return iter(self._codes)

    def __len__(self) -> int:
        return len(self._codes)

    def __contains__(self, task: object) -> bool:
        return task in self._codes

    def n_annotations(self) -> int:
        """Counted annotations over every task: the sum of :attr:`TaskEntry.n_annotations`, kept as tasks change."""
        return self._n_annotations

    def codes(self, tasks: Iterable[int] | None = None) -> list[bytes]:
        """:attr:`TaskEntry.codes` of ``tasks`` (default: every task, in order)."""
        held = self._codes
        return list(held.values()) if tasks is None else [held[task] for task in tasks]

    def held(self, task: int) -> tuple[object, ...]:
        """Every field of ``task``'s entry, to compare with the entry after the task is read again.

        Its mirrored score and overlap come with their types, as in :meth:`read_alike`.
        """
        return self._codes[task], *self.read_alike(task), self._skips.get(task), self._times.get(task)

    def read_alike(self, task: int) -> tuple[object, ...]:
        """What the diff reads of ``task`` as last read, without making its entry.

        That is its meta's diff key (:attr:`TaskEntry.meta`), then the type and value of its mirrored score and of
        its overlap, then its consensus prediction. It is equal for two reads the diff reads alike: 1, 1.0 and True
        are equal in Python, but an overlap of 2 asks for one more annotator and one of 2.0 does not.
        """
        score, overlap = self._data_score[task], self._overlap[task]
        return self._meta[task], type(score), score, type(overlap), overlap, self._prediction.get(task)

    def skips_by_task(self) -> Mapping[int, Counter[str]]:
        """:attr:`TaskEntry.skips` of the tasks whose reading skipped something (read-only; most have none)."""
        return MappingProxyType(self._skips)

    def times_by_task(self) -> Mapping[int, tuple[str, ...]]:
        """:attr:`TaskEntry.times` of the tasks whose times are kept as read (read-only; most have none)."""
        return MappingProxyType(self._times)

