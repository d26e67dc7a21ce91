"""A span-like control's spans per task, and the span measures each task carries.

For every span-like control (:func:`plugin.mapping.span_units.is_span_control`)
:class:`plugin.state.project.ControlState` keeps a :class:`SpanTasks`: per task its
span rows ``(task, scope, annotator, label, start, end)``, the annotators who
submitted it and the length of each of its continua (from the task's data,
:func:`plugin.mapping.span_units.continuum_length`). From them each task gets

- ``f1`` and ``f1_overlap``: pairwise F1 (Hripcsak & Rothschild 2005),
  :math:`F_1 = 2\\,TP / (|A| + |B|)` for each pair of annotators who
  submitted the task, with TP, |A| and |B| summed over the task's continua
  and labels, then the mean over the pairs (a pair who both marked nothing
  there has no F1 and is left out). ``f1`` matches spans with the same start,
  end and label; ``f1_overlap`` spans with the same label and Jaccard overlap
  at least the mapping's ``span_jaccard``, one to one by an optimal
  assignment (:func:`agreement.span_f1.span_f1`).
- ``gamma``: :math:`1 - D_o(t) / D_e`, with :math:`D_o(t)` the task's own
  best-alignment disorder (Mathet, Widlöcher & Métivier 2015; its continua's
  total disorders over their summed units per annotator) and :math:`D_e` the
  project's expected disorder. :math:`D_e` is sampled when every task is
  scored (a pass, a sync, a report), as the lowest-decile cut is, and held
  for the tasks scored one by one in between; before the first full scoring
  a task's gamma is None.

A task's values are computed when it is first scored after it changed, from
its own units alone (O(its spans)), and kept until it changes again; tasks
scored together are computed in one vectorized call (a block of at most
:data:`SPANS_AT_ONCE` spans at a time). Each task's per-pair
counts are kept too, and the project's running per-pair sums of TP and
``|A| + |B|`` (exact and overlap) are updated as tasks change: the live
summary's F1 is the mean over pairs of those sums' F1, which equals the batch
:meth:`agreement.span_f1.SpanF1.total` of the same tasks.

Past 600 lines, it holds the span tasks and the span measures of each task together, as the one
place where a span control's spans are kept and scored; the measures themselves are in :mod:`agreement`.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from itertools import pairwise
from typing import Any, NamedTuple

import numpy as np

from agreement import UndefinedMeasureWarning
from agreement.gamma import ExpectedDisorder, expected_disorder, observed_disorder
from agreement.ranges import block_edges, ranges
from agreement.set_partition import CROWDED_REASON
from agreement.span_f1 import SpanF1, span_f1
from agreement.uniques import unique_counts, unique_inverse
from agreement.units import Units
from plugin.mapping import MappedControl
from plugin.mapping.labelconfig import Control
from plugin.mapping.span_units import continuum_extents, span_units
from plugin.settings import MappingOptions, ScoringOptions
from plugin.state.codes import NARROW, Interned, pack_floats, stack_numbers, unpack_numbers
from plugin.state.scoring import number, rounded

__all__ = ["MATCHES", "ScoredSpans", "ScoredTasks", "SpanTasks", "TaskSpans", "gamma_caveat", "pair_f1",
           "unitizing_caveat"]

MATCHES = ("exact", "overlap")
Pair = tuple[str, str]
Continuum = tuple[int, tuple[Any, ...]]


def pair_f1(counts: Mapping[Pair, tuple[int, int]]) -> float:
    """The mean over annotator pairs of :math:`2\\,TP / (|A| + |B|)`.

    Pairs with no span are left out (NaN if none).

    >>> pair_f1({("a", "b"): (1, 4), ("a", "c"): (2, 4), ("b", "c"): (0, 0)})
    0.75
    """
    return _mean_defined([2.0 * tp / total if total > 0 else math.nan for tp, total in counts.values()])


def gamma_caveat(n_unaligned_tasks: int) -> str | None:
    """Which tasks gamma leaves out, in words; None where it leaves out none.

    >>> gamma_caveat(0) is None, gamma_caveat(2)
    (True, 'leaves out 2 tasks: units there overlap among too many annotators to align exactly (over 65,536 \
candidate groups)')
    """
    if n_unaligned_tasks <= 0:
        return None
    return f"leaves out {n_unaligned_tasks} task{'' if n_unaligned_tasks == 1 else 's'}: {CROWDED_REASON}"


def unitizing_caveat(most_annotators: int) -> str | None:
    """Why the 1995/2004 unitizing alpha is not to be read on these spans, in words; None where it may be.

    ``most_annotators`` is the most annotators on one continuum. The form was built for two coders and misbehaves
    with more (Krippendorff, Mathet, Bouvry & Widlöcher 2016, who replace it by u-alpha): each pair is scored on its
    own and the pairs averaged, so what a third annotator did never enters a pair's comparison.

    >>> unitizing_caveat(2) is None, unitizing_caveat(3)
    (True, 'unreliable here: up to 3 annotators on a task, and this form, built for two, averages pairs that each \
see two of them (Krippendorff et al. 2016 replace it by u-alpha)')
    """
    if most_annotators <= 2:
        return None
    return (f"unreliable here: up to {most_annotators} annotators on a task, and this form, built for two, averages "
            "pairs that each see two of them (Krippendorff et al. 2016 replace it by u-alpha)")


def _mean_defined(values: list[float]) -> float:
    """The mean of the pairs' F1 values, those that are NaN left out; NaN if none.

    A NaN value is a pair without spans. Summed in ascending order, as :func:`_means_defined` sums each task's,
    so that the pairs' order never changes it.
    """
    total = 0.0
    defined = sorted(value for value in values if not math.isnan(value))
    for value in defined:  # one by one, as np.bincount adds (Python's sum compensates since 3.12)
        total += value
    return total / len(defined) if defined else math.nan


def _means_defined(values: np.ndarray, owner: np.ndarray, n_owners: int) -> np.ndarray:
    """:func:`_mean_defined` of each owner's values, for every owner at once.

    ``owner`` gives each value's owner. These are the same sums in the same order (``np.bincount`` adds its
    weights one by one, in the order given).
    """
    keep = ~np.isnan(values)
    kept, whose = values[keep], owner[keep]
    order = np.lexsort((kept, whose))
    sums = np.bincount(whose[order], weights=kept[order], minlength=n_owners)
    counts = np.bincount(whose, minlength=n_owners)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(counts > 0, sums / counts, np.nan)


class TaskSpans(NamedTuple):
    """One task's span measures for one control, as :class:`ScoredTasks` decodes them from its bytes.

    Attributes
    ----------
    counts : bytes
        int32 rows, one per annotator pair ``(a, b)``, ``a < b``: the pair's
        code in ``pair_names``, then per match (:data:`MATCHES`) the task's
        ``TP`` and ``|A| + |B|`` over its continua and labels.
    pair_names : list of tuple
        The control's annotator pairs by code (shared by every task).
    disorder, weight : float
        The summed best-alignment disorders of the task's continua and their
        summed units per annotator (0 where no continuum has a defined disorder).
    f1_exact, f1_overlap : float
        The task's pairwise F1 per match (:meth:`f1`), computed once.
    """

    counts: bytes
    pair_names: list[Pair]
    disorder: float
    weight: float
    f1_exact: float = math.nan
    f1_overlap: float = math.nan

    def _table(self) -> np.ndarray:
        return np.frombuffer(self.counts, dtype=np.int32).reshape(-1, 1 + 2 * len(MATCHES))

    @property
    def pairs(self) -> dict[str, dict[Pair, tuple[int, int]]]:
        """Per match (``"exact"``, ``"overlap"``): per annotator pair, the task's ``(TP, |A| + |B|)``."""
        table = self._table().tolist()
        return {match: {self.pair_names[row[0]]: (row[1 + 2 * m], row[2 + 2 * m]) for row in table}
                for m, match in enumerate(MATCHES)}

    def f1(self, match: str) -> float:
        """The task's pairwise F1 with ``match``.

        It is the mean over its pairs (NaN while undefined; :func:`pair_f1`).
        """
        return self.f1_exact if match == "exact" else self.f1_overlap

    def gamma(self, expected: float | None) -> float:
        """``1 - D_o(task) / D_e``; 1 without disorder; NaN while undefined or before ``D_e`` is known."""
        if self.weight <= 0 or expected is None or not math.isfinite(expected):
            return math.nan
        if self.disorder == 0:  # no disorder is perfect agreement, as agreement.gamma has it
            return 1.0
        return 1.0 - (self.disorder / self.weight) / expected if expected > 0 else math.nan


_HEAD = 4 * 8
"""The bytes before a scored task's pairs (:class:`ScoredTasks`): disorder, weight, f1 exact, f1 overlap."""


class ScoredTasks(Mapping[int, TaskSpans]):
    """The span measures of the tasks scored since they last changed, one ``bytes`` a task.

    A task's bytes are four float64 (:class:`TaskSpans`'s ``disorder``,
    ``weight``, ``f1_exact``, ``f1_overlap``), then its pairs' int32 rows (its
    ``counts``; a task's counts are at most twice its spans). A project holds
    one a task: with three annotators about 200 bytes, its dict entry
    included, where a named tuple of its six fields took about 420
    (:func:`plugin.keeper.memory.deep_size` of 100,000 tasks of ``bench/scale.py``'s
    span shape). Reading a task decodes it as a :class:`TaskSpans`.
    """

    def __init__(self, pair_names: list[Pair]) -> None:
        self.held: dict[int, bytes] = {}
        self.pair_names = pair_names

    def __getitem__(self, task: int) -> TaskSpans:
        blob = self.held[task]
        disorder, weight, f1_exact, f1_overlap = np.frombuffer(blob, dtype=np.float64, count=4).tolist()
        return TaskSpans(blob[_HEAD:], self.pair_names, disorder, weight, f1_exact, f1_overlap)

    def __contains__(self, task: object) -> bool:
        return task in self.held

    def __iter__(self) -> Iterator[int]:
        return iter(self.held)

    def __len__(self) -> int:
        return len(self.held)

    def __eq__(self, other: object) -> bool:
        if isinstance(other, ScoredTasks):
            return self.held == other.held and self.pair_names == other.pair_names
        return super().__eq__(other)

    __hash__ = None  # type: ignore[assignment]  # mutable, as a dict

    def pop(self, task: int) -> TaskSpans | None:
        """Forget ``task``'s measures and return them (None if it had none, where ``dict.pop`` would raise)."""
        found = self[task] if task in self.held else None
        self.held.pop(task, None)
        return found

    def store(self, tasks: list[int], heads: np.ndarray, rows: np.ndarray, bounds: np.ndarray) -> None:
        """Hold each task's ``heads`` row and span rows, all as one buffer of 4-byte words.

        Each task's ``heads`` row is four float64 and its rows are ``rows[bounds[i]:bounds[i + 1]]`` (int32). The
        buffer is cut a task at a time; every task's bytes are a whole number of words.
        """
        sizes = _HEAD // 4 + np.diff(bounds) * rows.shape[1]  # in words
        at = np.cumsum(sizes) - sizes
        words = np.empty(int(sizes.sum()), dtype=np.uint32)
        words[ranges(at, np.full(len(tasks), _HEAD // 4))] = np.ascontiguousarray(heads, dtype=np.float64).view(
            np.uint32).ravel()
        words[ranges(at + _HEAD // 4, sizes - _HEAD // 4)] = np.ascontiguousarray(rows, dtype=np.int32).view(
            np.uint32).ravel()
        flat, starts, ends = words.tobytes(), (4 * at).tolist(), (4 * (at + sizes)).tolist()
        self.held.update(zip(tasks, [flat[lo:hi] for lo, hi in zip(starts, ends, strict=True)], strict=True))

    def matched(self, tasks: list[int], match: str) -> np.ndarray:
        """Each task's matched spans, spans compared and annotator pairs, as int64 rows, for every task at once.

        For each of ``tasks`` (each held), summed over its annotator pairs: the spans that found a match with
        ``match``, the spans compared, and how many pairs. A pair's F1 is its matched spans over its spans
        compared, :math:`2\\,TP / (|A| + |B|)`.
        """
        if not tasks:
            return np.zeros((0, 3), dtype=np.int64)
        blobs = [self.held[task] for task in tasks]
        width = 1 + 2 * len(MATCHES)
        sizes = np.fromiter(map(len, blobs), dtype=np.intp, count=len(blobs)) // 4
        n_pairs = (sizes - _HEAD // 4) // width
        words = np.frombuffer(b"".join(blobs), dtype=np.int32)
        rows = words[ranges(np.cumsum(sizes) - sizes + _HEAD // 4, n_pairs * width)].reshape(-1, width)
        owner, m = np.repeat(np.arange(len(tasks)), n_pairs), MATCHES.index(match)
        sums = [np.bincount(owner, weights=rows[:, column], minlength=len(tasks)) for column in (1 + 2 * m, 2 + 2 * m)]
        return np.column_stack([2 * sums[0], sums[1], n_pairs]).astype(np.int64)

    def heads(self, tasks: list[int]) -> np.ndarray:
        """The four float64 of each of ``tasks`` (each held) as rows: disorder, weight, f1 exact, f1 overlap."""
        if not tasks:
            return np.zeros((0, 4))
        blobs = [self.held[task] for task in tasks]
        sizes = np.fromiter(map(len, blobs), dtype=np.intp, count=len(blobs)) // 4
        words = np.frombuffer(b"".join(blobs), dtype=np.uint32)
        return words[(np.cumsum(sizes) - sizes)[:, None] + np.arange(_HEAD // 4)].view(np.float64)

    def __repr__(self) -> str:
        return f"ScoredTasks({len(self.held)} tasks)"


def _gammas(disorder: np.ndarray, weight: np.ndarray, expected: float | None) -> np.ndarray:
    """:meth:`TaskSpans.gamma` of every task at once, from their summed disorders and weights."""
    if expected is None or not math.isfinite(expected):
        return np.full(len(weight), np.nan)
    with np.errstate(divide="ignore", invalid="ignore"):
        value = 1.0 - (disorder / weight) / expected if expected > 0 else np.full(len(weight), np.nan)
    return np.where(weight > 0, np.where(disorder == 0, 1.0, value), np.nan)


SPANS_AT_ONCE = 8_000_000
"""Spans scored in one call at most, about 2 GiB while their tasks are scored (:meth:`SpanTasks.task_scores`);
a first full scoring of fewer hands its units and matches to the project's measures."""


_RESCAN_FROM = 1024
"""Changed tasks that :attr:`SpanTasks.dirty` holds at least before a scan of every task replaces it."""


def _width(blob: bytes) -> int:
    """The bytes of one of a task's packed numbers: 4 in float32, 8 in float64 (read from its head)."""
    return 4 if blob[0] == NARROW else 8


def _n_spans(blob: bytes) -> int:
    """About how many span rows a task's packed numbers hold, without decoding them.

    The count is its size over a row's.
    """
    return len(blob) // (5 * _width(blob)) if blob else 0


class ScoredSpans(NamedTuple):
    """What scoring a batch of tasks built (:meth:`SpanTasks.task_scores`).

    The project's scores reuse it when the batch was every task, rather than build the units and match the spans
    again.

    Attributes
    ----------
    tasks : list of int
        The tasks scored, sorted.
    units : Units
        Their units (:meth:`SpanTasks.units`).
    lengths : ndarray of float
        Each continuum's length as the tasks give it (NaN where they do not).
    f1 : dict of str to SpanF1
        Per match (:data:`MATCHES`), the pairwise F1 counts of every continuum.
    version : int
        :attr:`SpanTasks.version` when they were built.
    """

    tasks: list[int]
    units: Units
    lengths: np.ndarray
    f1: dict[str, SpanF1]
    version: int


@dataclass
class SpanTasks:
    """A span-like control's spans per task, the span measures of each task, and running per-pair sums.

    Attributes
    ----------
    control : Control
    tasks : dict of int to bytes
        Per task, one array of numbers (:meth:`task_spans` decodes it): the
        numbers of span rows, submitters and continua, then its span rows
        ``(task, scope, annotator, label, start, end)`` as quintuples of the
        codes of scope, annotator and label (:attr:`objects`), start and end;
        the code of each annotator who submitted it; and each continuum's
        scope code and length (NaN where the task's data does not give it).
        The numbers are float32 when each of them is one exactly (codes and
        offsets below 2**24: every text's, and times in whole or binary
        fractions of a second), else float64; a head of one slot names the
        layout. A project holds millions of spans: 20 bytes each (40 in
        float64), where a tuple of six took 150.
    objects : Interned
        The scopes, annotators and labels of the rows, by code.
    scored : ScoredTasks
        The measures of the tasks scored since they last changed.
    sums : dict
        Per match, per annotator pair, ``[TP, |A| + |B|]`` summed over :attr:`scored`.
    expected : ExpectedDisorder or None
        The project's expected disorder as of the last time every task was scored.
    version : int
        Counts changes, so that :attr:`expected` is sampled again only when a task changed.
    dirty : set of int
        Tasks changed since they were last scored, so that :meth:`live_f1`
        finds them without a scan; once they are more than half the tasks (a
        full read) the set is dropped and ``rescan`` set instead, as scoring
        them costs a scan's order anyway.
    rescan : bool
        Whether the tasks to score are found by a scan of every task rather than from :attr:`dirty`.
    """

    control: Control
    tasks: dict[int, bytes] = field(default_factory=dict)
    objects: Interned = field(default_factory=Interned)
    _pairs: Interned = field(default_factory=Interned)
    scored: ScoredTasks = field(init=False)
    sums: dict[str, dict[Pair, list[int]]] = field(default_factory=lambda: {m: {} for m in MATCHES})
    expected: ExpectedDisorder | None = None
    version: int = 0
    dirty: set[int] = field(default_factory=set)
    rescan: bool = False
    _expected_version: int = -1

    def __post_init__(self) -> None:
        self.scored = ScoredTasks(self._pairs.values)

    def set_task(self, task: int, mapped: MappedControl, lengths: Mapping[Continuum, float | None]) -> None:
        """Replace ``task``'s spans and its continua's lengths with those of ``mapped``.

        ``mapped`` is the task's mapping alone.

        A task read again as it was keeps its scores (a pass re-reads every task).
        """
        blob = self._pack([row for row in mapped.spans or () if row[0] == task],
                          [annotator for owner, annotator in mapped.submitted or () if owner == task], lengths)
        if blob == self.tasks.get(task, b""):
            return
        self._forget(task)
        if blob:
            self.tasks[task] = blob
        else:
            self.tasks.pop(task, None)

    def _pack(self, rows: list[tuple[Any, ...]], submitters: list[str],
              lengths: Mapping[Continuum, float | None]) -> bytes:
        """A task's span rows, submitters and continua's lengths as one array behind its layout's head.

        The array is float32 where that holds every number exactly, else float64 (see :attr:`tasks`); empty bytes
        for none.
        """
        if not (rows or submitters or lengths):
            return b""
        code = self.objects.code
        values: list[float] = [len(rows), len(submitters), len(lengths)]
        for _, scope, annotator, label, start, end in rows:
            values += (code(scope), code(annotator), code(label), start, end)
        values += [code(annotator) for annotator in submitters]
        for (_, scope), length in lengths.items():
            values += (code(scope), math.nan if length is None else length)
        return pack_floats(values)

    def task_spans(self, task: int) -> tuple[tuple[tuple[Any, ...], ...], tuple[tuple[int, str], ...],
                                             dict[Continuum, float | None]]:
        """The task's span rows, submitters and continua's lengths, decoded from :attr:`tasks`.

        The span rows are ``(task, scope, annotator, label, start, end)``, the submitters ``(task, annotator)``,
        and the continua's lengths are by ``(task, scope)``.
        """
        blob = self.tasks.get(task)
        if not blob:
            return (), (), {}
        values = unpack_numbers(blob, narrow=np.float32, wide=np.float64)
        n_rows, n_submitters, n_lengths = (int(v) for v in values[:3])
        objects, at = self.objects.values, 3 + 5 * n_rows
        rows = tuple((task, objects[int(scope)], objects[int(annotator)], objects[int(label)], start, end)
                     for scope, annotator, label, start, end in values[3:at].reshape(-1, 5).tolist())
        submitted = tuple((task, objects[int(a)]) for a in values[at: at + n_submitters].tolist())
        at += n_submitters
        lengths = {(task, objects[int(scope)]): (None if math.isnan(length) else length)
                   for scope, length in values[at: at + 2 * n_lengths].reshape(-1, 2).tolist()}
        return rows, submitted, lengths

    def n_regions(self) -> int:
        """The spans every task holds (each task's first packed number): ``/status``'s ``n_regions``."""
        if not self.tasks:
            return 0
        flat, at, _ = stack_numbers(list(self.tasks.values()), narrow=np.float32, wide=np.float64)
        return int(flat[at].sum())

    def _submitted(self, task: int) -> bool:
        """Whether anyone submitted ``task``.

        That is, its number of submitters (the blob's second number after the head, a whole number at least 0) is
        not 0.0, whose bytes are all zero (read without an array a task).
        """
        blob = self.tasks.get(task)
        if blob is None:
            return False
        width = _width(blob)
        return blob[2 * width:3 * width] != bytes(width)

    def remove_task(self, task: int) -> None:
        """Forget ``task``."""
        self._forget(task)
        self.tasks.pop(task, None)

    def _forget(self, task: int) -> None:
        self.version += 1
        if not self.rescan:
            self.dirty.add(task)
            if len(self.dirty) > max(_RESCAN_FROM, len(self.tasks) // 2):
                self.rescan = True
                self.dirty.clear()
        old = self.scored.pop(task)
        if old is not None:
            for match, counts in old.pairs.items():
                for pair, (tp, total) in counts.items():
                    running = self.sums[match][pair]
                    running[0] -= tp
                    running[1] -= total

    def mapped(self, level: str, *, rows: bool = True, built: ScoredSpans | None = None) -> MappedControl:
        """Every task's span rows, submitters and lengths (in task order) as one mapped control, without items.

        Without ``rows``: its :attr:`~plugin.mapping.base.MappedControl.units`
        built from the packed rows (:meth:`units`; ``built``'s, when it holds
        every task's as they are now) and the continua's lengths, and its span
        rows and submitters left empty (a project's snapshot: no Python object
        per span).
        """
        if rows:
            return self._mapped(sorted(self.tasks), level)
        if built is not None and built.version == self.version and built.tasks == sorted(self.tasks):
            units, given = built.units, built.lengths
        else:
            units, given = self._units(sorted(self.tasks))
        lengths: dict[Continuum, float | None] = {
            doc: (None if math.isnan(length) else length)  # type: ignore[misc]  # Units.docs are objects
            for doc, length in zip(units.docs, given.tolist(), strict=True)}
        return MappedControl(self.control, level, (), spans=(), submitted=(),  # type: ignore[arg-type]
                             lengths=lengths, units=units)

    def _mapped(self, tasks: list[int], level: str = "nominal") -> MappedControl:
        """The span rows, submitters and lengths of ``tasks`` (sorted) as one mapped control, without items."""
        spans: list[tuple[Any, ...]] = []
        submitted: list[tuple[int, str]] = []
        lengths: dict[Continuum, float | None] = {}
        for task in tasks:
            rows, submitters, continua = self.task_spans(task)
            spans += rows
            submitted += submitters
            lengths.update(continua)
        return MappedControl(self.control, level, (),  # type: ignore[arg-type]
                             spans=tuple(spans), submitted=tuple(submitted), lengths=lengths)

    def units(self, tasks: list[int]) -> Units:
        """The units of ``tasks`` (sorted), built from the packed rows with numpy.

        They are :func:`plugin.mapping.span_units.span_units` of :meth:`_mapped`, built with no Python object per
        span (the same units, the same order).
        """
        return self._units(tasks)[0]

    def _units(self, tasks: list[int]) -> tuple[Units, np.ndarray]:
        """:meth:`units`, and each continuum's length as the tasks give it (NaN where they do not)."""
        known = [task for task in tasks if task in self.tasks]
        if not known:
            mapped = self._mapped([])
            return span_units(mapped, lengths=mapped.lengths), np.zeros(0)
        flat, at, _ = stack_numbers([self.tasks[task] for task in known], narrow=np.float32, wide=np.float64)
        n_rows, n_sub, n_len = (flat[at + k].astype(np.intp) for k in range(3))
        rows = flat[ranges(at + 3, 5 * n_rows)].reshape(-1, 5)
        submitters = flat[ranges(at + 3 + 5 * n_rows, n_sub)].astype(np.intp)
        given = flat[ranges(at + 3 + 5 * n_rows + n_sub, 2 * n_len)].reshape(-1, 2)
        index = np.arange(len(known))
        row_task, sub_task, len_task = np.repeat(index, n_rows), np.repeat(index, n_sub), np.repeat(index, n_len)
        objects = self.objects.values
        width = len(objects)
        scope, who, what = (rows[:, k].astype(np.intp) for k in range(3))
        # continua: each (task, scope) in the order the rows first name it, then each task submitted with no span
        keys, first_row, inverse = np.unique(row_task * width + scope, return_index=True, return_inverse=True)
        order = np.argsort(first_row, kind="stable")
        rank = np.empty_like(order)
        rank[order] = np.arange(len(order))
        doc = rank[inverse.reshape(-1)]
        empty = np.flatnonzero((n_sub > 0) & (n_rows == 0))
        ordered = keys[order]
        docs = (*((known[int(k) // width], objects[int(k) % width]) for k in ordered.tolist()),
                *((known[int(t)], ()) for t in empty.tolist()))
        doc_task = np.concatenate([ordered // width, empty])
        # annotators sorted by name; labels the config's, then the others sorted
        used = unique_inverse(np.concatenate([who, submitters]))[0]
        annotators = tuple(sorted({objects[c] for c in used.tolist()}))
        named = {name: i for i, name in enumerate(annotators)}
        annotator_of = np.zeros(width, dtype=np.intp)
        annotator_of[used] = [named[objects[c]] for c in used.tolist()]
        seen_labels = unique_inverse(what)[0]
        labels = tuple(dict.fromkeys([*self.control.labels, *sorted({objects[c] for c in seen_labels.tolist()})]))
        coded = {label: i for i, label in enumerate(labels)}
        label_of = np.zeros(width, dtype=np.intp)
        label_of[seen_labels] = [coded[objects[c]] for c in seen_labels.tolist()]
        # each continuum's length as given (NaN: unknown), else the extent of its units; a task submitted with no
        # span is its continuum of scope () (keyed apart when no task has one: a length can then never name it)
        n_docs = len(docs)
        empty_scope = next((code for code, value in enumerate(objects) if value == ()), None)
        doc_keys = np.concatenate([ordered, empty * width + empty_scope if empty_scope is not None
                                   else -1 - np.arange(len(empty))])
        len_keys = len_task * width + given[:, 0].astype(np.intp)
        length = np.full(n_docs, np.nan)
        if n_docs:
            sorter = np.argsort(doc_keys)
            found = sorter[np.searchsorted(doc_keys, len_keys, sorter=sorter).clip(max=n_docs - 1)]
            hit = doc_keys[found] == len_keys
            length[found[hit]] = given[hit, 1]
        start, end = rows[:, 3], rows[:, 4]
        offset, extent = continuum_extents(doc, start, end, length)
        # who annotated each continuum: every submitter on each of the task's continua, and every unit's annotator
        present = np.zeros((n_docs, len(annotators)), dtype=bool)
        by_task = np.argsort(doc_task, kind="stable")
        per_task = np.bincount(doc_task, minlength=len(known))
        reach = per_task[sub_task]
        present[by_task[ranges((np.cumsum(per_task) - per_task)[sub_task], reach)],
                np.repeat(annotator_of[submitters], reach)] = True
        present[doc, annotator_of[who]] = True
        return Units(doc, annotator_of[who], label_of[what], start - offset[doc], end - offset[doc], docs,
                     annotators, labels, present, extent), length

    def task_scores(self, tasks: Iterable[int], mapping: MappingOptions, scoring: ScoringOptions, *,
                    every_task: bool = False, resample: bool = True,
                    keep: bool = False) -> tuple[list[int], dict[str, np.ndarray], ScoredSpans | None]:
        """The submitted tasks of ``tasks``, and their ``f1``, ``f1_overlap`` and ``gamma``.

        The scores are columns aligned on the tasks annotators submitted (rounded as
        :func:`plugin.state.scoring.number`, NaN where undefined).

        Tasks not scored since they changed are scored together, from their own
        units, in blocks of at most :data:`SPANS_AT_ONCE` spans. With
        ``every_task`` (``tasks`` is every task) the project's expected
        disorder is sampled first, if any task changed since it last was (with
        ``resample=False`` only if it was never sampled). With ``keep``, what
        the scoring built is returned too when it scored every task in one
        block (a first full scoring; :meth:`mapped` and the project's span
        measures then reuse it), else None.
        """
        wanted = [t for t in tasks if self._submitted(t)]
        held = self.scored.held
        blocks = self._blocks(sorted(t for t in wanted if t not in held))
        whole = None
        for block in blocks:
            whole = None  # what the block before built is let go before the next is built
            whole = self._score(block, mapping, scoring)
        if every_task:  # every submitted task is scored now: none is left to find
            self.dirty.clear()
            self.rescan = False
        if not (every_task and len(blocks) == 1 and whole is not None and whole.tasks == sorted(self.tasks)):
            whole = None
        if every_task and self._expected_version != self.version and (resample or self.expected is None):
            self.expected = self._expected(scoring, whole.units if whole is not None else None)
            self._expected_version = self.version
        expected = self.expected.value if self.expected is not None else None
        columns = self.scored.heads(wanted)  # disorder, weight, f1_exact, f1_overlap
        return wanted, {"f1": rounded(columns[:, 2]), "f1_overlap": rounded(columns[:, 3]),
                        "gamma": rounded(_gammas(columns[:, 0], columns[:, 1], expected))}, whole if keep else None

    def _blocks(self, tasks: list[int]) -> list[list[int]]:
        """``tasks`` (sorted) cut into runs of at most about :data:`SPANS_AT_ONCE` spans.

        Each run is scored in one call: what a call builds (units, pairs of spans, alignments) is never held for a
        whole large project at once.
        """
        sizes = np.fromiter((_n_spans(self.tasks.get(task, b"")) for task in tasks), dtype=np.int64, count=len(tasks))
        edges = block_edges(sizes, at_most=SPANS_AT_ONCE)
        return [tasks[lo:hi] for lo, hi in pairwise(edges)]

    def _expected(self, scoring: ScoringOptions, units: Units | None = None) -> ExpectedDisorder:
        """The expected disorder sampled from every task's units (``units``, when the caller just built them).

        Tasks left unaligned (see :meth:`observed`) are left out of it too: ``D_e`` is sampled from the tasks
        ``D_o`` measures.
        """
        units = self.units(sorted(self.tasks)) if units is None else units
        held = list(self.scored)
        left = np.array(held, dtype=np.int64)[np.isnan(self.scored.heads(held)[:, 0])] if held else []
        leave_out = np.isin(np.array([task for task, _ in units.docs], dtype=np.int64), left) if len(left) else None
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", UndefinedMeasureWarning)
            return expected_disorder(units, n_samples=scoring.gamma_samples, seed=scoring.gamma_seed,
                                     alpha=scoring.gamma_alpha, beta=scoring.gamma_beta,
                                     delta_empty=scoring.gamma_empty, leave_out=leave_out)

    def _score(self, tasks: list[int], mapping: MappingOptions, scoring: ScoringOptions) -> ScoredSpans | None:
        """Score ``tasks`` in one vectorized call per measure.

        None of ``tasks`` has been scored since it changed. Return them sorted, with what was built to score them
        (None for no task).
        """
        if not tasks:
            return None
        tasks = sorted(tasks)
        self.dirty.difference_update(tasks)
        units, given = self._units(tasks)
        task_of = np.array([task for task, _ in units.docs], dtype=np.int64)
        ids = np.array(tasks, dtype=np.int64)
        place = np.searchsorted(ids, task_of)  # each continuum's task, by its place in ``tasks``
        width = len(units.annotators) ** 2
        # per match, per continuum and annotator pair: TP and |A| + |B|, summed per task and pair
        found = [span_f1(units, match=match, jaccard=mapping.span_jaccard) for match in MATCHES]
        keys = [place[r.doc] * width + r.pair_key for r in found]
        rows = unique_counts(np.concatenate(keys))[0] if keys else np.zeros(0, dtype=np.int64)  # by task: runs
        sums = []
        for result, key in zip(found, keys, strict=True):
            at = np.searchsorted(rows, key)
            sums += [np.bincount(at, weights=result.tp.sum(axis=1), minlength=len(rows)).astype(np.int64),
                     np.bincount(at, weights=result.sizes.sum(axis=1),
                                 minlength=len(rows)).astype(np.int64)]
        owner, pair = np.divmod(rows, width)
        distinct, pair_at = unique_inverse(pair)
        names = [(units.annotators[p // len(units.annotators)], units.annotators[p % len(units.annotators)])
                 for p in distinct.tolist()]
        codes = np.array([self._pairs.code(name) for name in names], dtype=np.int64)
        table = np.column_stack([codes[pair_at], *sums])
        for m, match in enumerate(MATCHES):  # the running per-pair sums, per pair over every task at once
            tp = np.bincount(pair_at, weights=sums[2 * m], minlength=len(names)).astype(np.int64).tolist()
            size = np.bincount(pair_at, weights=sums[2 * m + 1], minlength=len(names)).astype(np.int64).tolist()
            for name, hits, total in zip(names, tp, size, strict=True):
                running = self.sums[match].setdefault(name, [0, 0])
                running[0] += hits
                running[1] += total
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", UndefinedMeasureWarning)
            disorder = observed_disorder(units, alpha=scoring.gamma_alpha, beta=scoring.gamma_beta,
                                         delta_empty=scoring.gamma_empty)
        defined = disorder.units_per_annotator > 0
        totals = np.bincount(place, weights=np.where(defined, disorder.total, 0.0), minlength=len(tasks))
        weights = np.bincount(place, weights=disorder.units_per_annotator, minlength=len(tasks))
        unaligned = np.bincount(place, weights=disorder.unaligned, minlength=len(tasks)) > 0
        totals[unaligned], weights[unaligned] = np.nan, 0.0  # held as NaN: left out, and counted, by :meth:`observed`
        f1 = [_means_defined(np.where(sums[2 * m + 1] > 0, 2.0 * sums[2 * m] / np.maximum(sums[2 * m + 1], 1),
                                      np.nan), owner, len(tasks))
              for m in range(len(MATCHES))]  # pair_f1's mean over each task's pairs
        self.scored.store(tasks, np.column_stack([totals, weights, *f1]), table,
                          np.searchsorted(owner, np.arange(len(tasks) + 1)))
        return ScoredSpans(tasks, units, given, dict(zip(MATCHES, found, strict=True)), self.version)

    def observed(self) -> tuple[float, int]:
        """The project's observed disorder from the tasks' held best alignments (NaN if none is defined), and the
        tasks it leaves out.

        The disorder is their summed disorders over their summed units per annotator
        (:attr:`agreement.gamma.ObservedDisorder.value`'s sums). A task whose spans overlap among too many
        annotators to align exactly has its disorder held as NaN
        (:data:`agreement.set_partition.MAX_CANDIDATES`): it is left out, and counted. Every task must be scored
        (:meth:`task_scores` over every task).
        """
        heads = self.scored.heads(list(self.scored))
        weight = sum(heads[:, 1].tolist())
        unaligned = np.isnan(heads[:, 0])
        value = sum(heads[~unaligned, 0].tolist()) / weight if weight > 0 else math.nan
        return value, int(unaligned.sum())

    def live_f1(self, mapping: MappingOptions, scoring: ScoringOptions) -> dict[str, float | None]:
        """The project's pairwise F1, exact and overlap: the mean over pairs of the running sums' F1.

        Tasks changed since they were last scored are scored first (O(their spans)).
        """
        changed = self.tasks.keys() - self.scored.held.keys() if self.rescan else self.dirty
        pending = sorted(t for t in changed if self._submitted(t))  # O(tasks changed) when they are few
        for block in self._blocks(pending):  # every task, after a first read: a block of spans at a time
            self._score(block, mapping, scoring)
        self.dirty.clear()  # only once they are scored: a scoring that fails leaves them to find again
        self.rescan = False
        return {match: number(pair_f1({pair: (tp, total) for pair, (tp, total) in self.sums[match].items()}))
                for match in MATCHES}
