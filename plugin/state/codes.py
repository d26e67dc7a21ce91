"""A task's rows as codes: what a project's state keeps of each task, compactly.

A project holds up to millions of tasks; a row kept as a Python tuple of
strings costs hundreds of bytes, the same row as three int16 codes six.
Each task's rows are one ``bytes`` object (:func:`pack_rows`): the codes of its
items' keys, then its rows as fixed-width groups of codes, int16 where every
code of the task fits, else int32 (:func:`pack_codes`). Values that
repeat across tasks (labels, annotators, the part of an item's key after the
task's id) are interned once per control (:class:`Interned`, :class:`ItemKeys`).
The counts of many tasks' items are derived from their rows at once, with
numpy (:func:`item_counts`).
"""

from __future__ import annotations

from array import array
from collections.abc import Hashable, Sequence
from dataclasses import dataclass, field
from typing import Any, NamedTuple

import numpy as np
import pandas as pd

from agreement.counts import SparseCounts, sparse_counts
from agreement.itemsums import bytes_order, compress_rows
from agreement.ranges import ranges
from agreement.uniques import unique_inverse

__all__ = ["NARROW", "WIDE", "IdIndex", "Interned", "ItemKeys", "RowsTally", "Stacked", "answered", "categorical",
           "item_counts", "pack_codes", "pack_floats", "pack_rows", "stack_numbers", "stacked_rows", "unpack_numbers",
           "unpack_rows"]

NARROW, WIDE = 1, 2
"""The first byte of a packed array's head (:func:`pack_codes`, :func:`pack_floats`): its values in the narrow
type, or in the wide."""
_INT16_HEAD, _INT32_HEAD = bytes([NARROW]) + bytes(1), bytes([WIDE]) + bytes(3)
_FLOAT32_HEAD, _FLOAT64_HEAD = bytes([NARROW]) + bytes(3), bytes([WIDE]) + bytes(7)
"""Each layout's head: one slot of its type, its first byte the layout."""


def pack_codes(values: Sequence[int]) -> bytes:
    """Whole numbers as bytes in int16 where that holds every one of them, else in int32, behind a head.

    The head is one slot of that type whose first byte names the layout (:data:`NARROW`, :data:`WIDE`).
    :func:`unpack_numbers` with ``narrow=np.int16, wide=np.int32`` reads them back.

    A project holds millions of tasks' codes, and most are below 32,768; the
    head keeps the values after it aligned. The values are packed with the
    standard library's :class:`array.array`, which refuses a value out of
    range (a task holds tens of them: numpy's calls would cost more).

    >>> len(pack_codes([1, 2, 300])), len(pack_codes([1, 2, 40_000]))
    (8, 16)
    """
    try:
        return _INT16_HEAD + array("h", values).tobytes()  # C's short: int16, native order, as numpy's
    except OverflowError:
        return _INT32_HEAD + np.array(values, dtype=np.int32).tobytes()


def pack_floats(values: Sequence[float]) -> bytes:
    """Numbers as bytes in float32 where that holds every one exactly, else in float64, behind a head.

    float32 is used when it holds every number exactly (NaN included). The head is one slot of that type whose
    first byte names the layout (:func:`pack_codes`; read back with ``narrow=np.float32, wide=np.float64``).

    >>> unpack_numbers(pack_floats([0.5, 0.1]), narrow=np.float32, wide=np.float64).tolist(), len(pack_floats([0.5]))
    ([0.5, 0.1], 8)
    """
    wide = array("d", values).tobytes()
    narrow = array("f", values)  # beyond float32's range: inf, not equal, so kept wide
    if array("d", narrow).tobytes() == wide:  # the same bits back: exact (and NaN stays NaN)
        return _FLOAT32_HEAD + narrow.tobytes()
    return _FLOAT64_HEAD + wide


def unpack_numbers(blob: bytes, *, narrow: type[np.generic], wide: type[np.generic]) -> np.ndarray:
    """The values of :func:`pack_codes` or :func:`pack_floats`, in ``wide``.

    ``narrow`` and ``wide`` are their two types.
    """
    dtype = np.dtype(narrow if blob[0] == NARROW else wide)
    values = np.frombuffer(blob, dtype=dtype, offset=dtype.itemsize)
    return values if dtype == np.dtype(wide) else values.astype(wide)


def stack_numbers(blobs: Sequence[bytes], *, narrow: type[np.generic],
                  wide: type[np.generic]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The values of many blobs of :func:`pack_codes` or :func:`pack_floats` as one array in ``wide``.

    Each blob's values come after the one before, with a slot for its head left before them. Also returned: where
    each blob's values start, and how many it holds.

    Every blob's layout is read from the joined bytes; when they are all of
    one layout (the usual case) the joined bytes are read as its type, else
    the blobs of each layout are joined apart, read, and placed. No Python
    work a value.

    >>> flat, starts, sizes = stack_numbers([pack_codes([7, 40_000]), pack_codes([5])], narrow=np.int16,
    ...                                     wide=np.int32)
    >>> flat[starts[1]:starts[1] + sizes[1]].tolist(), flat[starts[0]:starts[0] + sizes[0]].tolist()
    ([5], [7, 40000])
    """
    joined = np.frombuffer(b"".join(blobs), dtype=np.uint8)
    n_bytes = np.fromiter(map(len, blobs), dtype=np.intp, count=len(blobs))
    at = np.cumsum(n_bytes) - n_bytes
    is_narrow = joined[at] == NARROW  # each blob's first byte (a blob is never empty: it has its head)
    slots = n_bytes // np.where(is_narrow, np.dtype(narrow).itemsize, np.dtype(wide).itemsize)
    heads = np.cumsum(slots) - slots
    if is_narrow.all() or not is_narrow.any():  # one layout (the usual case): the blobs as they stand
        flat = joined.view(narrow if is_narrow.all() and len(blobs) else wide).astype(wide, copy=False)
    else:  # each layout's blobs joined apart (no index a byte), read as its type, and placed
        flat = np.empty(int(slots.sum()), dtype=wide)
        for layout, dtype in ((is_narrow, narrow), (~is_narrow, wide)):
            picked = np.flatnonzero(layout)
            flat[ranges(heads[picked], slots[picked])] = np.frombuffer(
                b"".join([blobs[i] for i in picked.tolist()]), dtype=dtype)
    return flat, heads + 1, slots - 1


@dataclass
class Interned:
    """Values by code, in the order first seen."""

    values: list[Any] = field(default_factory=list)
    _codes: dict[Hashable, int] = field(default_factory=dict)

    @classmethod
    def of(cls, values: Sequence[Hashable]) -> Interned:
        """``values`` (distinct) coded in order."""
        return cls(list(values), {value: code for code, value in enumerate(values)})

    def find(self, value: Hashable) -> int:
        """The code of ``value``, -1 if it was never seen (nothing is coded)."""
        return self._codes.get(value, -1)

    def code(self, value: Hashable) -> int:
        """The code of ``value`` (a new one the first time it is seen)."""
        found = self._codes.get(value)
        if found is None:
            found = self._codes.setdefault(value, len(self.values))
            self.values.append(value)
        return found


@dataclass
class ItemKeys:
    """Item keys interned per control.

    A key that starts with its task's id (``"17"``, ``"17:price"``, ``"17:0-5"``) is kept as the rest (code >= 0,
    shared by every task), any other as itself (code < 0).

    >>> keys = ItemKeys()
    >>> codes = [keys.code("17", "17:price"), keys.code("17", ("x", 1)), keys.code("18", "18:price")]
    >>> codes, keys.decode(18, codes)
    ([0, -1, 0], ('18:price', ('x', 1), '18:price'))
    """

    suffixes: Interned = field(default_factory=Interned)
    others: Interned = field(default_factory=Interned)

    def code(self, task_text: str, key: Hashable) -> int:
        """The code of ``key`` on the task whose id reads ``task_text``."""
        if isinstance(key, str) and key.startswith(task_text):
            return self.suffixes.code(key[len(task_text):])
        return -1 - self.others.code(key)

    def texts(self, tasks: np.ndarray, codes: np.ndarray) -> np.ndarray:
        """The keys of ``codes``, each on the task beside it, as text in an object array.

        The text is an item's name in a table of rows.

        Each distinct task is put in words once, and its text joined to each suffix by numpy's elementwise
        ``+`` over object arrays: no Python loop per item.

        >>> keys = ItemKeys()
        >>> codes = np.array([keys.code("17", "17:price"), keys.code("17", ("x", 1)), keys.code("18", "18")])
        >>> keys.texts(np.array([17, 17, 18]), codes).tolist()
        ['17:price', "('x', 1)", '18']
        """
        tasks, codes = np.asarray(tasks), np.asarray(codes)
        out = np.empty(len(codes), dtype=object)
        suffixed = codes >= 0
        if suffixed.any():
            distinct, which = unique_inverse(tasks[suffixed], sort=False)
            words = np.array([str(task) for task in distinct.tolist()], dtype=object)
            suffixes = np.array(self.suffixes.values, dtype=object)
            out[suffixed] = words[which] + suffixes[codes[suffixed]]
        if not suffixed.all():
            others = self.others.values
            out[~suffixed] = [str(others[-1 - c]) for c in codes[~suffixed].tolist()]
        return out

    def texts_distinct(self, codes: np.ndarray) -> bool:
        """Whether :meth:`texts` of distinct ``(task, code)`` pairs are distinct.

        Every key starts with its task's id and goes on with no digit (``"17"``, ``"17:price"``), so no two tasks'
        keys read alike.

        >>> keys = ItemKeys()
        >>> codes = np.array([keys.code("1", "1:7"), keys.code("17", "17")])
        >>> keys.texts_distinct(codes), keys.texts_distinct(np.array([keys.code("1", "17")]))
        (True, False)
        """
        if len(codes) == 0:
            return True
        if int(codes.min()) < 0:
            return False
        return not any(suffix[:1].isdigit() for suffix in self.suffixes.values)

    def decode(self, task: int, codes: Sequence[int] | np.ndarray) -> tuple[Any, ...]:
        """The keys of ``codes`` on ``task``."""
        text, suffixes, others = str(task), self.suffixes.values, self.others.values
        return tuple(text + suffixes[c] if c >= 0 else others[-1 - c] for c in np.asarray(codes).tolist())


def categorical(codes: np.ndarray, names: np.ndarray) -> pd.Categorical:
    """The categorical of ``codes`` over ``names``, which must be distinct.

    ``names`` are distinct as :func:`pandas.factorize` gives them.

    pandas checks the categories' uniqueness by hashing every name, which
    for a project's millions of item names costs more than finding them;
    here they are known distinct, so the check is skipped where pandas offers
    a way to (its dtype's fast path), and made otherwise.
    """
    fast = getattr(pd.CategoricalDtype, "_from_fastpath", None)
    dtype = fast(pd.Index(names), False) if fast is not None else pd.CategoricalDtype(names)
    return pd.Categorical.from_codes(codes, dtype=dtype, validate=False)


def pack_rows(keys: Sequence[int], codes: Sequence[int]) -> bytes:
    """A task's item key codes and its rows' codes as one object.

    The rows' codes are flattened, a fixed number per row. Stored as int16 where every code fits, else int32
    (:func:`pack_codes`).
    """
    return pack_codes([len(keys), *keys, *codes])


def unpack_rows(blob: bytes, width: int) -> tuple[np.ndarray, np.ndarray]:
    """The item key codes and the rows, with shape (n_rows, ``width``), of :func:`pack_rows`."""
    flat = unpack_numbers(blob, narrow=np.int16, wide=np.int32)
    k = int(flat[0])
    return flat[1: 1 + k], flat[1 + k:].reshape(-1, width)


def stacked_rows(blobs: Sequence[bytes], width: int) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """The rows of every blob at once, with how many items and rows each blob holds, and the key codes.

    Each row's item place is made global (the blobs' items numbered in order). Also returned: how many items, and
    how many rows, each blob holds; and every item's key code, in that order.

    >>> rows, n_items, n_rows, keys = stacked_rows([pack_rows([0], [0, 5, 1]),
    ...                                             pack_rows([3, 4], [1, 6, 2, 0, 7, 2])], 3)
    >>> rows.tolist(), n_items.tolist(), n_rows.tolist(), keys.tolist()
    ([[0, 5, 1], [2, 6, 2], [1, 7, 2]], [1, 2], [1, 2], [0, 3, 4])
    """
    if not blobs:
        empty = np.zeros(0, dtype=np.intp)
        return np.zeros((0, width), dtype=np.intp), empty, empty, empty
    flat, starts, lengths = stack_numbers(blobs, narrow=np.int16, wide=np.int32)
    n_items = flat[starts].astype(np.intp)
    # the rows are every code but each blob's heads (its layout, its count of items and their keys): masked out,
    # so that only the heads are indexed one by one, not the rows' many codes
    body = np.ones(len(flat), dtype=bool)
    body[ranges(starts - 1, 2 + n_items)] = False
    rows = flat[body].reshape(-1, width).astype(np.intp)
    n_rows = (lengths - 1 - n_items) // width
    rows[:, 0] += np.repeat(np.cumsum(n_items) - n_items, n_rows)
    return rows, n_items, n_rows, flat[ranges(starts + 1, n_items)].astype(np.intp)


class Stacked(NamedTuple):
    """Tasks and their rows of one control, decoded at once (:func:`stacked_rows`)."""

    tasks: np.ndarray
    """The tasks, in the order of their rows."""
    rows: tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]
    """:func:`stacked_rows` of their blobs."""


def answered(rows: np.ndarray, n_rows: np.ndarray) -> int:
    """How many (blob, annotator) pairs rows of :func:`stacked_rows` hold: the annotations behind a control's labels.

    >>> rows, _, n_rows, _ = stacked_rows([pack_rows([0, 1], [0, 5, 1, 1, 5, 2]), pack_rows([0], [0, 5, 1])], 3)
    >>> answered(rows, n_rows)
    2
    """
    if not len(rows):
        return 0
    owner = np.repeat(np.arange(len(n_rows), dtype=np.int64), n_rows)
    return len(np.unique(owner * (int(rows[:, 1].max()) + 1) + rows[:, 1]))


def item_counts(blobs: Sequence[bytes], *, n_categories: int | None = None,
                stacked: tuple[np.ndarray, ...] | None = None) -> tuple[SparseCounts, np.ndarray]:
    """The counts of every item of ``blobs``, and how many items each blob holds.

    The blobs hold rows ``(place, annotator, column)``; the blobs' items are in order. ``stacked`` is
    :func:`stacked_rows` of them when the caller decoded them already for another use.

    One vectorized pass over all of them (:func:`stacked_rows`): no Python loop per task or item.

    Examples
    --------
    >>> a = pack_rows([0], [0, 0, 1, 0, 1, 1, 0, 2, 0])     # one item: labels 1, 1, 0
    >>> b = pack_rows([3, 4], [1, 0, 2, 0, 1, 2])           # two items: label 2 each
    >>> counts, per_blob = item_counts([a, b])
    >>> counts.indptr.tolist(), counts.columns.tolist(), counts.counts.tolist(), per_blob.tolist()
    ([0, 2, 3, 4], [0, 1, 2, 2], [1.0, 2.0, 1.0, 1.0], [1, 2])
    """
    rows, per_blob, _, _ = stacked_rows(blobs, 3) if stacked is None else stacked
    return sparse_counts(rows[:, 0], rows[:, 2], n_categories=n_categories if len(per_blob) else (n_categories or 0),
                         n_items=int(per_blob.sum())), per_blob


class RowsTally:
    """What a control's live summary reads of every task's rows, kept as tasks change.

    The annotations behind the rows (:func:`answered`: distinct task and annotator pairs), and each item's shape:
    its counts in decreasing order, whatever labels hold them, with how many items have each shape. SPA's bootstrap
    interval reads no more of the items (:func:`plugin.state.scoring.spa_interval_of_shapes`), and items of a few
    annotators take a handful of shapes. A task's change updates them in O(its rows), so ``/status`` after each
    event costs O(shapes), where deriving them from every task's rows costs O(annotations).

    >>> tally = RowsTally.of([pack_rows([0], [0, 0, 1, 0, 1, 1, 0, 2, 0]), pack_rows([3], [0, 0, 2, 0, 1, 2])])
    >>> tally.answered, tally.shapes()[0].tolist(), tally.shapes()[1].tolist()
    (5, [[2.0, 0.0], [2.0, 1.0]], [1, 1])
    >>> tally.update([pack_rows([3], [0, 0, 2, 0, 1, 2])], sign=-1)
    >>> tally.answered, tally.shapes()[0].tolist()
    (3, [[2.0, 1.0]])
    """

    _SMALL = 64
    """Items read one by one below this many (a task's), with numpy from there (a batch)."""

    def __init__(self) -> None:
        self.answered = 0
        self._shapes: dict[tuple[float, ...], int] = {}

    @classmethod
    def of(cls, blobs: Sequence[bytes]) -> RowsTally:
        """The tally of every task's rows ``blobs``."""
        tally = cls()
        if blobs:
            tally.update(blobs, sign=1)
        return tally

    def update(self, blobs: Sequence[bytes], *, sign: int, stacked: tuple[np.ndarray, ...] | None = None,
               counts: SparseCounts | None = None) -> None:
        """Count the rows of ``blobs`` (:func:`pack_rows`) in (``sign`` 1) or out (-1).

        ``stacked`` is :func:`stacked_rows` of them, and ``counts`` :func:`item_counts`, when the caller has them.
        """
        stacked = stacked_rows(blobs, 3) if stacked is None else stacked
        counts = item_counts(blobs, stacked=stacked)[0] if counts is None else counts
        self.answered += sign * answered(stacked[0], stacked[2])
        if not counts.n_items:
            return
        ordered = -np.sort(-counts.packed(), axis=1) + 0.0  # + 0.0: no -0.0
        rows, multiplicity = ((ordered, np.ones(len(ordered), dtype=np.int64)) if len(ordered) < self._SMALL
                              else compress_rows(ordered))
        held = self._shapes
        for row, n in zip(rows.tolist(), multiplicity.tolist(), strict=True):
            shape = tuple(value for value in row if value > 0)
            left = held.get(shape, 0) + sign * n
            if left:
                held[shape] = left
            else:
                held.pop(shape, None)

    def shapes(self) -> tuple[np.ndarray, np.ndarray]:
        """The items' distinct shapes and how many items have each.

        The shapes are rows as wide as the widest (zeros after their counts), in the order
        :func:`agreement.itemsums.compress_rows` gives them: what it gives of
        :func:`agreement.bootstrap.canonical_rows` of every item's counts.
        """
        shapes = [shape for shape, n in self._shapes.items() if n > 0]
        if not shapes:
            return np.zeros((0, 1)), np.zeros(0, dtype=np.int64)
        rows = np.zeros((len(shapes), max(1, *map(len, shapes))))
        for at, shape in enumerate(shapes):
            rows[at, : len(shape)] = shape
        multiplicity = np.array([self._shapes[shape] for shape in shapes], dtype=np.int64)
        order = bytes_order(rows)
        return rows[order], multiplicity[order]


class IdIndex:
    """Which task each annotation id belongs to, in 16 bytes an id where a dict took about 80.

    The ids are two sorted int64 arrays (id, task) looked up by bisection,
    with the changes since they were last merged in a small dict over them
    (a task's owner, or :attr:`GONE` for an id gone); the dict is merged in once it
    holds a quarter as many ids as the arrays, so a full read of ``n`` ids
    costs O(n log n) in all.

    >>> index = IdIndex()
    >>> index.set(7, (), (70, 71))
    >>> index.set(8, (), (80,))
    >>> index.set(7, (70, 71), (71,))   # annotation 70 deleted
    >>> index.get(71), index.get(80), index.get(70), len(index)
    (7, 8, None, 2)
    """

    _MERGE_AT = 1024
    GONE = -(2**63)

    def __init__(self) -> None:
        self._ids = np.zeros(0, dtype=np.int64)
        self._tasks = np.zeros(0, dtype=np.int64)
        self._changes: dict[int, int] = {}

    def set(self, task: int, old: Sequence[int], new: Sequence[int]) -> None:
        """Task ``task`` held the ids ``old`` and now holds ``new``."""
        for gone in set(old).difference(new):
            self._changes[gone] = self.GONE
        for annotation in new:
            self._changes[annotation] = task
        if len(self._changes) > max(self._MERGE_AT, len(self._ids) // 4):
            self._merge()

    def get(self, annotation: int) -> int | None:
        """The task of ``annotation``, or None if it is unknown."""
        task = self._changes.get(annotation)
        if task is None:
            at = int(np.searchsorted(self._ids, annotation))
            task = int(self._tasks[at]) if at < len(self._ids) and self._ids[at] == annotation else self.GONE
        return None if task == self.GONE else task

    def __len__(self) -> int:
        self._merge()
        return len(self._ids)

    def _merge(self) -> None:
        if not self._changes:
            return
        changed = np.fromiter(self._changes, dtype=np.int64, count=len(self._changes))
        owners = np.fromiter(self._changes.values(), dtype=np.int64, count=len(self._changes))
        keep = ~np.isin(self._ids, changed)
        held = owners != self.GONE
        ids = np.concatenate([self._ids[keep], changed[held]])
        tasks = np.concatenate([self._tasks[keep], owners[held]])
        order = np.argsort(ids, kind="stable")
        self._ids, self._tasks = ids[order], tasks[order]
        self._changes = {}
