"""What every mapping module produces, and the units of results they share.

A *unit* is what one annotator said in one item's place: the results of one
control in one task (task-level controls), or in one matched region
(per-region controls). Task-level families (choices, numbers, text, taxonomy,
ranker, dates) turn units into labels; region families only say where their
regions are (:mod:`plugin.mapping.regions`).
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from typing import TYPE_CHECKING, Any, Literal, NamedTuple

import pandas as pd

from agreement import AnnotatorLabels, LabelCounts, annotator_labels, label_counts
from agreement.counts import SparseCounts, code_labels, sparse_counts
from agreement.units import Units
from plugin.mapping.annotations import Skips, Submission
from plugin.mapping.labelconfig import Control

if TYPE_CHECKING:
    from plugin.mapping.coded import CodedRows

__all__ = [
    "RANKED_COLUMNS",
    "ROW_COLUMNS",
    "MappedControl",
    "SkipResult",
    "Unit",
    "MAX_MAGNITUDE",
    "control_results",
    "finite_number",
    "frame",
    "reason",
    "single_labels",
    "task_units",
    "usable_result",
]

ROW_COLUMNS = ("task", "item", "annotator", "label")
RANKED_COLUMNS = ("task", "item", "annotator", "label", "rank")
Level = Literal["nominal", "ordinal", "interval"]


@dataclass(frozen=True)
class MappedControl:
    """One control's annotations as items with one label per annotator.

    Attributes
    ----------
    control : Control
    level : {"nominal", "ordinal", "interval"}
        The level of measurement its labels imply.
    records : tuple of tuple
        ``(task, item, annotator, label)``: one per annotator and item. The
        live path reads these directly; :attr:`rows` is the same as a table.
    categories : tuple, optional
        Every possible label in order (from the config), or None when the
        labels observed are the categories.
    ranked_records : tuple of tuple, optional
        Multiple choices only: ``(task, item, annotator, label, rank)`` with
        rank 1 primary and 2 secondary, for the augmented kappa.
    spans : tuple of tuple, optional
        Span-like controls only (:func:`plugin.mapping.span_units.is_span_control`):
        ``(task, scope, annotator, label, start, end)``, one per labelled
        stretch, for pairwise F1, unitizing alpha and gamma; each
        ``(task, scope)`` is one continuum (see :mod:`plugin.mapping.span_units`).
        None for every other control.
    submitted : tuple of tuple, optional
        With :attr:`spans`: ``(task, annotator)`` for every annotator who
        submitted each task mapped, marked or not (present on every continuum
        of the task). One tuple shared by the project's span controls.
    lengths : mapping, optional
        With :attr:`spans`: each continuum's length by ``(task, scope)``, as
        :func:`plugin.mapping.span_units.continuum_length` finds it in the
        task's data (None where it does not); None when the tasks' data was
        not read (the continua are then the extent of their units).
    units : Units, optional
        With :attr:`spans`: the units built already, which
        :func:`plugin.mapping.span_units.span_units` returns as they are. A
        project state's snapshot builds them from its packed rows with numpy
        and leaves :attr:`spans` and :attr:`submitted` empty, so that a
        project's spans are never all Python tuples at once.
    tables : tuple of (DataFrame, DataFrame or None), optional
        :attr:`rows` and :attr:`ranked` built already: a project state's
        snapshot decodes them from its codes with numpy and leaves
        :attr:`records` empty and :attr:`ranked_records` empty or None.
    decode : callable, optional
        In place of :attr:`tables`: makes them when :attr:`rows` or
        :attr:`ranked` is first read (a project's scores read :attr:`coded`,
        and only a report's tables need the rows in words).
    coded : CodedRows, optional
        :attr:`rows` as codes (:mod:`plugin.mapping.coded`): when given, the
        counts and each annotator's labels are read from them
        (:meth:`label_counts`, :meth:`annotator_labels`), never from the table.
    """

    control: Control
    level: Level
    records: tuple[tuple[Any, ...], ...]
    categories: tuple[Any, ...] | None = None
    ranked_records: tuple[tuple[Any, ...], ...] | None = None
    spans: tuple[tuple[Any, ...], ...] | None = None
    submitted: tuple[tuple[int, str], ...] | None = None
    lengths: Mapping[tuple[int, tuple[Any, ...]], float | None] | None = field(default=None, compare=False)
    units: Units | None = field(default=None, compare=False)
    tables: tuple[pd.DataFrame, pd.DataFrame | None] | None = field(default=None, compare=False, repr=False)
    decode: Callable[[], tuple[pd.DataFrame, pd.DataFrame | None]] | None = field(default=None, compare=False,
                                                                                    repr=False)
    coded: CodedRows | None = field(default=None, compare=False, repr=False)

    @cached_property
    def _tables(self) -> tuple[pd.DataFrame, pd.DataFrame | None] | None:
        return self.decode() if self.tables is None and self.decode is not None else self.tables

    @cached_property
    def rows(self) -> pd.DataFrame:
        """:attr:`records` as a table with the columns ``task``, ``item``, ``annotator``, ``label``."""
        return self._tables[0] if self._tables is not None else frame(self.records)

    @cached_property
    def ranked(self) -> pd.DataFrame | None:
        """:attr:`ranked_records` as a table, or None."""
        if self.ranked_records is None:
            return None
        if self._tables is not None and self._tables[1] is not None:
            return self._tables[1]
        return frame(self.ranked_records, RANKED_COLUMNS)

    @property
    def n_rows(self) -> int:
        """Rows, a label or not."""
        return self.coded.n_rows if self.coded is not None else len(self.rows)

    def n_annotators(self) -> int:
        """Annotators with a row."""
        return self.coded.n_annotators() if self.coded is not None else int(self.rows["annotator"].nunique())

    def n_answered(self) -> int:
        """The annotations that answered the control: distinct task and annotator pairs with a row."""
        if self.coded is not None and self.coded.n_answered is not None:
            return self.coded.n_answered
        return len(self.rows[["task", "annotator"]].drop_duplicates())

    def n_items(self) -> int:
        """Items with a row."""
        return self.coded.n_items() if self.coded is not None else int(self.rows["item"].nunique())

    def n_labels(self) -> int:
        """Distinct labels given, or the categories' number when the config names them."""
        if self.categories:
            return len(self.categories)
        return self.coded.n_labels() if self.coded is not None else int(self.rows["label"].nunique())

    def label_counts(self) -> LabelCounts:
        """Per-item label counts over :attr:`categories` (:func:`agreement.label_counts` of :attr:`rows`)."""
        if self.coded is not None:
            return self.coded.label_counts(self.categories)
        return label_counts(self.rows, categories=self.categories)

    def annotator_labels(self) -> AnnotatorLabels:
        """Each annotator's label of each item (:func:`agreement.annotator_labels` of :attr:`rows`)."""
        return self.coded.annotator_labels() if self.coded is not None else annotator_labels(self.rows)

    def sparse_counts(self) -> tuple[SparseCounts, pd.Index]:
        """The label counts as :class:`agreement.counts.SparseCounts`, and their categories.

        Items are in order of first appearance, as :meth:`label_counts` puts them.
        """
        if self.coded is not None:
            return self.coded.sparse_counts(self.categories)
        rows = self.rows
        item_codes, items = pd.factorize(rows["item"], sort=False)
        present = rows["label"].notna().to_numpy()
        label_codes, labels = code_labels(rows.loc[present, "label"], self.categories)
        return sparse_counts(item_codes[present], label_codes, n_categories=len(labels), n_items=len(items)), labels


def frame(rows: Sequence[tuple[Any, ...]], columns: Sequence[str] = ROW_COLUMNS) -> pd.DataFrame:
    """A DataFrame of ``rows`` with ``columns``, typed even when empty."""
    table = pd.DataFrame(list(rows), columns=list(columns))
    table["task"] = table["task"].astype("int64")
    table["item"] = table["item"].astype(str)
    table["annotator"] = table["annotator"].astype(str)
    return table


MAX_MAGNITUDE = 1e100
"""The largest magnitude of a position or a number the mapping reads: the measures sum squared differences of
positions (gamma, unitizing alpha) and of numbers (interval alpha) over a project, which overflow a float for
values near 1e154 (a span ending at 1e300 made them raise or turn NaN)."""


def finite_number(value: Any, *, limit: float = math.inf) -> float | None:
    """``value`` as a float when it is a finite number (an int or a float, not a bool) within ``±limit``, else None.

    JSON allows an integer of any number of digits, which Python reads exactly: one too large for a float is None
    here, where ``math.isfinite`` would raise.

    >>> finite_number(3), finite_number(2.5), finite_number(True), finite_number(10**400), finite_number(float("inf"))
    (3.0, 2.5, None, None, None)
    >>> finite_number(1e300), finite_number(1e300, limit=MAX_MAGNITUDE)
    (1e+300, None)
    """
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    try:
        number = float(value)
    except OverflowError:
        return None
    return number if math.isfinite(number) and abs(number) <= limit else None


def reason(control: Control, what: str, detail: str = "") -> str:
    """A skip reason that names the control and its tag: ``malformed value (rating 0): Rating 'quality'``."""
    return f"{what}{f' ({detail})' if detail else ''}: {control.describe()}"


class SkipResult(ValueError):
    """A result value a mapping cannot use; the message is the reason's kind, e.g. ``malformed value``.

    ``detail`` adds what was wrong (the label, the number).
    """

    def __init__(self, what: str, detail: str = "") -> None:
        super().__init__(what)
        self.what = what
        self.detail = detail


def control_results(submission: Submission, control: Control, skips: Skips) -> Iterator[Mapping[str, Any]]:
    """The result items of ``submission`` that belong to ``control``, with a ``value`` object.

    Items of another ``type`` than the control's are skipped and counted.
    """
    for result in submission.results:
        if control.matches(result.get("from_name")) and usable_result(result, control, skips):
            yield result


def usable_result(result: Mapping[str, Any], control: Control, skips: Skips) -> bool:
    """Whether a result of ``control`` has the control's type and a value object.

    A result that does not is counted in ``skips``.
    """
    kind = result.get("type", "")
    if kind != control.result_type:  # as stored (the usual case), else read as text in lower case
        kind = str(kind).lower()
        if kind and kind != control.result_type:
            skips.add(reason(control, "malformed value", f"result of type {kind!r}"))
            return False
    value = result.get("value")
    if type(value) is not dict and not isinstance(value, Mapping):
        skips.add(reason(control, "malformed value", "no value object"))
        return False
    return True


class Unit(NamedTuple):
    """What one annotator said at one item: the control's results there (possibly none).

    A named tuple: a task makes one per control and annotator.

    Attributes
    ----------
    task : int
    item : str
        The item: ``str(task)`` for a task-level control, ``"{task}:{from_name}"``
        for a control repeated by ``<Repeater>``, the region's item for a
        per-region control.
    annotator : str
    results : tuple of dict
        The control's result items at this item, as stored.
    """

    task: int
    item: str
    annotator: str
    results: tuple[Mapping[str, Any], ...]


def task_units(control: Control, submissions: Mapping[int, list[Submission]], skips: Skips) -> list[Unit]:
    """One unit per task (per repeated instance) and annotator who submitted the task.

    Inside a ``<Repeater>`` every ``from_name`` seen on a task (``action_0``,
    ``action_1``) is its own item, and each annotator of the task has a unit
    there, empty when they left it blank.
    """
    units = []
    for task, task_submissions in submissions.items():
        found = {s.annotator: list(control_results(s, control, skips)) for s in task_submissions}
        if not control.pattern:
            units.extend(Unit(task, str(task), s.annotator, tuple(found[s.annotator])) for s in task_submissions)
            continue
        names = sorted({str(r.get("from_name")) for results in found.values() for r in results})
        for name in names:
            units.extend(Unit(task, f"{task}:{name}", s.annotator,
                              tuple(r for r in found[s.annotator] if r.get("from_name") == name))
                         for s in task_submissions)
    return units


def _canonical(value: Any) -> str:
    return json.dumps(value, sort_keys=True, default=str)


def single_labels(control: Control, units: Sequence[Unit], skips: Skips,
                  parse: Callable[[Mapping[str, Any]], Any]) -> tuple[tuple[Any, ...], ...]:
    """Rows for controls with one answer per unit: each unit's usable answer, as ``parse`` reads it.

    ``parse(value)`` returns the label, or raises :class:`SkipResult`, which is
    counted. A unit with no usable answer gives no row (missing). When a unit
    holds several usable answers, they are counted as a duplicate result and
    the smallest (by its JSON text) counts, so the result order never matters.
    """
    rows = []
    for unit in units:
        labels = []
        for result in unit.results:
            try:
                labels.append(parse(result["value"]))
            except SkipResult as error:
                skips.add(reason(control, error.what, error.detail))
        if not labels:
            continue
        if len(labels) > 1:
            skips.add(reason(control, "duplicate result", "several answers at one item; the first by value counts"),
                      len(labels) - 1)
            labels = sorted(set(labels), key=_canonical)
        rows.append((unit.task, unit.item, unit.annotator, labels[0]))
    return tuple(rows)
