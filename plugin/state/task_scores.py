"""Every task's scores held as columns, in tens of bytes a task.

These are what a pass, a sync and the report read.

A project of a million tasks scored as one dictionary per task and control
held about 3.4 KiB a task while a pass or a report ran. Here each control's
task scores are a few numpy arrays aligned on the tasks
(:class:`ControlColumns`), the mean over controls and the flag are computed
over all tasks at once (:class:`TaskScores`), and a task's
:class:`~plugin.state.scoring.TaskScore` is built when it is read, one at a time:
a pass diffs every task's block without ever holding them all.

The flag's rule is :func:`plugin.state.flags.fired_rules`, applied to every task's
columns at once; a flagged task's reasons are the same rule's words for it
(:func:`plugin.state.flags.flag_reasons`), built when its score is read, with what its
annotators gave read from the state only then (:class:`plugin.state.given.GivenColumn`).
"""

from __future__ import annotations

import math
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from agreement.uniques import row_codes
from plugin.settings import ScoringOptions
from plugin.state.consensus import TaskConsensus
from plugin.state.flags import CONSTANT_LOW, FiredRules, fired_rules, flag_reasons, lowest, review_keys
from plugin.state.given import Given, GivenColumn
from plugin.state.scoring import TaskScore, rounded

__all__ = ["ControlColumns", "TaskScores", "score_values"]


def _value(value: float) -> float | None:
    """A column's cell as a task's block holds it."""
    return None if math.isnan(value) else float(value)


@dataclass(frozen=True)
class ControlColumns:
    """One control's scores on every task of a :class:`TaskScores`, aligned on its tasks.

    Attributes
    ----------
    has_items : ndarray of bool
        The task has items in this control: ``spa``, ``alpha``, ``n_items``,
        and ``agreement`` (ordered controls) and ``item_class`` (multiple
        choices) are its scores.
    has_spans : ndarray of bool
        The task was submitted in this span-like control: ``f1``,
        ``f1_overlap`` and ``gamma`` (and ``flag_on``) are its scores too.
        A task with neither has no scores in this control.
    spa, alpha : ndarray of float
        As :func:`plugin.state.scoring.rounded` (NaN: null).
    n_items : ndarray of int
    agreement : ndarray of float, optional
        Ordered controls: the weighted agreement.
    item_class : ndarray of object, optional
        Multiple choices: the item class (Rosenberg & Binkowski 2004) or None.
    spans : dict of str to ndarray, optional
        Span-like controls: ``f1``, ``f1_overlap`` and ``gamma``
        (:meth:`plugin.state.spans.SpanTasks.task_scores`).
    flag_on : str, optional
        The key a span control's threshold is compared with
        (:data:`plugin.state.flags.SPAN_FLAG_KEYS`).
    consensus : TaskConsensus, optional
        Categorical controls: each task's consensus label (:mod:`plugin.state.consensus`).
    extra : dict of int to dict
        By a task's place: more scores (the references' shares).
    given : GivenColumn, optional
        Where each task's labels and counts are read when a flagged task's reasons name them (not in its scores).
    """

    has_items: np.ndarray
    has_spans: np.ndarray
    spa: np.ndarray
    alpha: np.ndarray
    n_items: np.ndarray
    agreement: np.ndarray | None = None
    item_class: np.ndarray | None = None
    spans: dict[str, np.ndarray] | None = None
    flag_on: str | None = None
    consensus: TaskConsensus | None = None
    extra: dict[int, dict[str, Any]] = field(default_factory=dict)
    given: GivenColumn | None = None
    _entries: dict[int, dict[str, Any] | None] = field(default_factory=dict, repr=False, compare=False)
    _code_box: list[np.ndarray] = field(default_factory=list, repr=False, compare=False)

    @classmethod
    def empty(cls, size: int) -> ControlColumns:
        """No scores on any of ``size`` tasks: a control that is not scored (its scoring met a bug)."""
        return cls(np.zeros(size, dtype=bool), np.zeros(size, dtype=bool), np.full(size, np.nan),
                   np.full(size, np.nan), np.zeros(size, dtype=np.int64))

    def codes(self) -> np.ndarray:
        """Per task, a code of this control's columns: tasks with equal codes have equal scores here.

        A task with scores of its own (:attr:`extra`) shares its code with others all the same; :meth:`scores`
        builds those apart.
        """
        columns: list[np.ndarray] = [column for column in (self.has_items, self.has_spans, self.spa, self.alpha,
                                                           self.n_items, self.agreement, self.item_class)
                                     if column is not None]
        columns += list((self.spans or {}).values())
        if self.consensus is not None:
            columns.append(self.consensus.codes())
        return row_codes(columns)

    def scores(self, at: int) -> dict[str, Any] | None:
        """The control's scores of the task at place ``at`` (None: it has none in this control).

        Each distinct entry is built once (by :meth:`codes`) and shared, read-only, by the tasks that carry it: a
        task's entry in a pass over a million tasks is a lookup, where its consensus alone took tens of µs.
        """
        if at in self.extra:
            return self._scores(at)
        if not self._code_box:  # computed once, when the first entry is read
            self._code_box.append(self.codes())
        code = int(self._code_box[0][at])
        if code not in self._entries:
            self._entries[code] = self._scores(at)
        return self._entries[code]

    def _scores(self, at: int) -> dict[str, Any] | None:
        """:meth:`scores`, built for the task at ``at``."""
        items, spans = bool(self.has_items[at]), bool(self.has_spans[at])
        if not (items or spans):
            return None
        out: dict[str, Any] = {"spa": _value(self.spa[at]), "alpha": _value(self.alpha[at]),
                               "n_items": int(self.n_items[at])}
        if items and self.agreement is not None:
            out["agreement"] = _value(self.agreement[at])
        if items and self.item_class is not None:
            out["item_class"] = self.item_class[at]
        if spans and self.spans is not None:
            out.update((key, _value(column[at])) for key, column in self.spans.items())
            if self.flag_on is not None:
                out["flag_on"] = self.flag_on
        if items and self.consensus is not None and (consensus := self.consensus.block(at)) is not None:
            out["consensus"] = consensus
        out.update(self.extra.get(at, {}))
        return out

    def posterior(self) -> np.ndarray:
        """Per task, its least certain consensus posterior in this control (NaN: none)."""
        if self.consensus is None:
            return np.full(len(self.spa), np.nan)
        return np.where(self.has_items, self.consensus.posterior(), np.nan)

    def value(self) -> np.ndarray:
        """Per task, the value its threshold is compared with (:func:`plugin.state.flags.control_value`).

        It is the span measure ``flag_on`` names where the task has spans, else the weighted agreement of an ordered
        control, else SPA; NaN where undefined or absent.
        """
        present = self.has_items | self.has_spans
        value = self.spa
        if self.agreement is not None:
            value = np.where(self.has_items, self.agreement, value)
        if self.flag_on is not None and self.spans is not None:
            value = np.where(self.has_spans, self.spans[self.flag_on], value)
        return np.where(present, value, np.nan)


def score_values(controls: Mapping[str, ControlColumns], size: int) -> np.ndarray:
    """Each of ``size`` tasks' score: its lowest control value, NaN if none.

    The lowest value is :func:`plugin.state.flags.lowest`.
    """
    if not controls:
        return np.full(size, np.nan)
    return lowest(np.column_stack([c.value() for c in controls.values()]))


class TaskScores(Mapping[int, TaskScore]):
    """Every scored task's :class:`~plugin.state.scoring.TaskScore`, held as columns and built when read.

    Reads as a mapping from task id to its score, in the order the tasks
    were given. The mean SPA and alpha over a task's controls and its flag
    are computed for every task at once; a flagged task's reasons are
    :func:`plugin.state.flags.flag_reasons`', built with its score.

    Parameters
    ----------
    tasks : sequence of int
    n_annotations : sequence of int
        Counted annotations of each task.
    controls : dict of str to ControlColumns
        Aligned on ``tasks``, in the order of the task's ``controls``.
    options : ScoringOptions
    decile_cut : float, optional
        The project's lowest-decile cut (``options.lowest_decile``).
    """

    def __init__(self, tasks: Sequence[int], n_annotations: Sequence[int] | np.ndarray,
                 controls: dict[str, ControlColumns], options: ScoringOptions, *,
                 decile_cut: float | None = None) -> None:
        self.tasks = np.asarray(tasks, dtype=np.int64)
        self.n_annotations = np.asarray(n_annotations, dtype=np.int64)
        self.controls = controls
        self._options = options
        self._decile_cut = decile_cut
        self._order = np.argsort(self.tasks, kind="stable")
        self.spa = self._mean("spa")
        self.alpha = self._mean("alpha")
        self._fired = self._rules()
        self.flagged = self._fired.flagged()

    def _mean(self, key: str) -> np.ndarray:
        """The mean over each task's controls of one measure, rounded (NaN where no control defines it)."""
        if not self.controls:
            return np.full(len(self.tasks), np.nan)
        table = np.column_stack([getattr(c, key) for c in self.controls.values()])
        defined = ~np.isnan(table)
        n = defined.sum(axis=1)
        with np.errstate(invalid="ignore", divide="ignore"):
            means = np.where(defined, table, 0.0).sum(axis=1) / n
        return rounded(np.where(n > 0, means, np.nan))

    def score_values(self) -> np.ndarray:
        """Each task's score (:func:`plugin.state.flags.task_score_of`): its lowest control value, NaN if none."""
        return score_values(self.controls, len(self.tasks))

    def _values(self) -> np.ndarray:
        """(tasks, controls): each control's value on each task (:meth:`ControlColumns.value`)."""
        columns = [c.value() for c in self.controls.values()]
        return np.column_stack(columns) if columns else np.zeros((len(self.tasks), 0))

    def _rules(self) -> FiredRules:
        """Which rule of :func:`plugin.state.flags.fired_rules` fires on which task, for every task at once."""
        values = self._values()
        low = np.zeros(values.shape, dtype=bool)
        for at, c in enumerate(self.controls.values()):
            if c.item_class is not None:
                low[:, at] = c.has_items & (c.item_class == CONSTANT_LOW)
        limits = [self._options.thresholds.get(name, self._options.threshold) for name in self.controls]
        return fired_rules(values, low, limits, self.n_annotations, decile_cut=self._decile_cut,
                           posterior=self._posteriors(), options=self._options)

    def _posteriors(self) -> np.ndarray:
        """(tasks, controls): each control's least certain consensus posterior on each task (NaN: none)."""
        columns = [c.posterior() for c in self.controls.values()]
        return np.column_stack(columns) if columns else np.zeros((len(self.tasks), 0))

    def posterior_values(self) -> np.ndarray:
        """Each task's least certain consensus posterior over its controls (NaN: none)."""
        return lowest(self._posteriors())

    def review_keys(self) -> np.ndarray:
        """Each task's place in the review queue (:func:`plugin.state.flags.review_keys`), lowest first."""
        return review_keys(self.score_values(), self.posterior_values(), self.n_annotations)

    def flagged_by(self) -> tuple[np.ndarray, np.ndarray]:
        """Per task, the control that flagged it and that control's value (None and NaN: not flagged).

        The control is :meth:`plugin.state.flags.FiredRules.flagging`'s: of those a rule fired on, the lowest.
        """
        values = self._values()
        at = self._fired.flagging(values)
        names = np.array([*self.controls, None], dtype=object)[at]  # -1: the None after the names
        value = np.where(at >= 0, values[np.arange(len(at)), np.maximum(at, 0)] if values.shape[1] else np.nan,
                         np.nan)
        return names, value

    def _by_control(self, at: int) -> dict[str, dict[str, Any]]:
        return {name: scores for name, control in self.controls.items()
                if (scores := control.scores(at)) is not None}

    def _place(self, task: object) -> int | None:
        if not isinstance(task, (int, np.integer)) or isinstance(task, bool) or not len(self.tasks):
            return None
        at = int(np.searchsorted(self.tasks, task, sorter=self._order))
        if at < len(self.tasks) and self.tasks[self._order[at]] == task:
            return int(self._order[at])
        return None

    def span_column(self, control: str, key: str) -> np.ndarray:
        """Per task, a span control's measure ``key``; NaN where the task has no spans there.

        ``key`` is ``"f1"``, ``"f1_overlap"`` or ``"gamma"``.
        """
        columns = self.controls.get(control)
        if columns is None or columns.spans is None or key not in columns.spans:
            return np.full(len(self.tasks), np.nan)
        return np.where(columns.has_spans, columns.spans[key], np.nan)

    def reasons_at(self, place: int) -> tuple[str, ...]:
        """Why the task at ``place`` is flagged, in words (none: it is not)."""
        return self._reasons(place, self._by_control(place))

    def _reasons(self, place: int, by_control: dict[str, dict[str, Any]]) -> tuple[str, ...]:
        if not self.flagged[place]:
            return ()
        return flag_reasons(int(self.n_annotations[place]), by_control, self._options, decile_cut=self._decile_cut,
                            given=self._given(place))

    def _given(self, place: int) -> dict[str, Given | None]:
        """What the annotators gave the task at ``place`` in each control a rule fired on (read only for those)."""
        fired = self._fired.below[place] | self._fired.constant_low[place] | self._fired.uncertain[place]
        return {name: control.given.at(place) for (name, control), on in zip(self.controls.items(), fired.tolist(),
                                                                               strict=True)
                if on and control.given is not None}

    def reason_texts(self) -> np.ndarray:
        """Every task's reasons joined with ``"; "`` (``""`` where it is not flagged): the report's column.

        Tasks whose columns hold equal values have equal reasons, so the words
        are built once per distinct row of the flagged tasks' columns
        (:func:`agreement.uniques.row_codes`), not once per task; a task with
        more scores of its own (:attr:`ControlColumns.extra`) gets its own.
        """
        out = np.full(len(self.tasks), "", dtype=object)
        places = np.flatnonzero(self.flagged)
        if not len(places):
            return out
        codes, own = self._row_codes(places)
        shared = ~own
        some = np.full(int(codes.max()) + 1, -1, dtype=np.intp)
        some[codes[shared]] = places[shared]  # a task of each distinct row (their reasons are equal)
        words = np.array([("; ".join(self.reasons_at(place)) if place >= 0 else "") for place in some.tolist()],
                         dtype=object)
        out[places[shared]] = words[codes[shared]]
        for place in places[own].tolist():
            out[place] = "; ".join(self.reasons_at(place))
        return out

    def score_codes(self) -> tuple[np.ndarray, np.ndarray]:
        """A code per task, equal for tasks whose scores are equal; and which tasks have scores of their own.

        A task's scores are its :class:`~plugin.state.scoring.TaskScore` but for its task id: values, flag, reasons.
        Tasks with scores of their own (:attr:`ControlColumns.extra`) have codes that say nothing.

        Tasks of a project repeat a few score rows (2 or 3 annotations allow
        only a few SPA values), so what is built from a task's score can be
        built once per code. Found by hashing the columns
        (:func:`agreement.uniques.row_codes`), O(tasks x columns).
        """
        return self._row_codes(np.arange(len(self.tasks)))

    def _row_codes(self, places: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """:meth:`score_codes` of the tasks at ``places``."""
        # the flag and the reasons follow from these columns (and the options and cut, the same for every task)
        columns: list[np.ndarray] = [self.n_annotations[places]]
        own = np.zeros(len(places), dtype=bool)
        for control in self.controls.values():
            columns += [column[places] for column in (control.has_items, control.has_spans, control.spa,
                                                      control.alpha, control.n_items, control.agreement,
                                                      control.item_class) if column is not None]
            columns += [column[places] for column in (control.spans or {}).values()]
            if control.consensus is not None:
                columns.append(control.consensus.codes()[places])
            if control.given is not None:  # a flagged task's reasons name what its annotators gave
                columns.append(np.where(self.flagged[places], control.given.codes(places), -1))
            if control.extra:
                own |= np.isin(places, np.fromiter(control.extra, dtype=np.intp, count=len(control.extra)))
        return row_codes(columns), own

    def at(self, place: int) -> TaskScore:
        """The score of the task at ``place``, built from the columns (a flagged task's reasons too)."""
        n_annotations, by_control = int(self.n_annotations[place]), self._by_control(place)
        flagged = bool(self.flagged[place])
        reasons = self._reasons(place, by_control)
        return TaskScore(task=int(self.tasks[place]), n_annotations=n_annotations, spa=_value(self.spa[place]),
                         alpha=_value(self.alpha[place]), flagged=flagged, reasons=reasons, controls=by_control)

    def __getitem__(self, task: int) -> TaskScore:
        place = self._place(task)
        if place is None:
            raise KeyError(task)
        return self.at(place)

    def __contains__(self, task: object) -> bool:
        return self._place(task) is not None

    def __iter__(self) -> Iterator[int]:
        return iter(self.tasks.tolist())

    def __len__(self) -> int:
        return len(self.tasks)

    def values(self) -> Iterator[TaskScore]:  # type: ignore[override]
        """Each task's score in order, built one at a time."""
        return (self.at(place) for place in range(len(self.tasks)))

    def items(self) -> Iterator[tuple[int, TaskScore]]:  # type: ignore[override]
        """Each task and its score in order, built one at a time."""
        return ((int(self.tasks[place]), self.at(place)) for place in range(len(self.tasks)))

    def n_flagged(self) -> int:
        """How many tasks are flagged."""
        return int(self.flagged.sum())

