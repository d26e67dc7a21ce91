"""The state of one project.

It holds what Label Studio holds, as items and running sums, and the scores it implies.

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
task's need it; :mod:`plugin.state.codes`) and the running sums (:class:`agreement.RunningAgreement`),
which keep no per-item copy: the items' counts are derived from the rows,
vectorized over every task, when scoring needs them. Updating one task costs
O(its annotations) for nominal controls, whatever the number of categories;
a full read adds its tasks to the sums in vectorized batches.
A span-like control also keeps each task's spans, submitters and continua's
lengths (:class:`plugin.state.spans.SpanTasks`): a task's pairwise F1 and
gamma cost O(its spans), gamma's expected disorder is sampled when every
task is scored and held in between, as the lowest-decile cut is.

:class:`ProjectState` has more than 20 methods because it is the one object every path reads and changes
(a read, an event's task, the pass's diff, the report's snapshot): each method is one question or one change of
the same task index and controls, and splitting them would pass the index between objects on every task. The
module is past 600 lines for the same reason: its one class is every path's view of a project.
"""

from __future__ import annotations

from array import array
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from typing import Any, TypeVar

import numpy as np
import pandas as pd

from agreement.ranges import ranges
from plugin import __version__
from plugin.bugs import Bug, contained
from plugin.mapping import UNIT_MAPPERS, MappedControl, count_unmapped_results, map_control, map_project
from plugin.mapping.annotations import BUG_SKIP, Skips, Submission, collect_submissions, task_id
from plugin.mapping.coded import CodedRows
from plugin.mapping.labelconfig import Control
from plugin.mapping.span_units import continuum_length
from plugin.settings import MappingOptions, ReviewOptions, ScoringOptions
from plugin.state.blocks import agreement_block
from plugin.state.codes import (
    IdIndex,
    Interned,
)
from plugin.state.control import ControlState
from plugin.state.flags import lowest_decile
from plugin.state.references import (
    aligned_with,
    is_reference,
    task_reference_shares,
    task_references,
)
from plugin.state.snapshot import ProjectScores, ProjectSnapshot
from plugin.state.spans import ScoredSpans
from plugin.state.stamps import Stamps
from plugin.state.stale import stale_tasks
from plugin.state.task_scores import ControlColumns, TaskScores, score_values
from plugin.state.tasks import TaskEntries, TaskEntry

__all__ = ["ControlState", "ProjectScores", "ProjectSnapshot", "ProjectState", "TaskEntry"]

T = TypeVar("T")


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




def _items_are_fixed(control: Control) -> bool:
    """Whether a control's items on a task are the same whoever answered it.

    That is a task-level control with the config's labels, so a reference's rows can be mapped apart from the
    annotators'.
    """
    if control.tag not in UNIT_MAPPERS or control.tag == "ranker" or control.per_region or control.pattern:
        return False
    return not (control.multiple and (control.tag == "taxonomy" or not control.labels))


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
    not_scored : dict of str to str
        Per control that a bug kept from being scored at the last full scoring (or in a summary since), the
        reason (:meth:`plugin.bugs.Bug.reason`); every other control is scored as usual.
    changes : int
        Counts the tasks set that differ from what the state held of them
        (a task read again as it was is not one) and the tasks removed: what
        the state holds differs from what it held at an earlier count only if
        the count moved.
    flag_counts : tuple of (int, int) or None
        Tasks with a score and flagged tasks, as the last :meth:`stale_tasks` scored every task (``/metrics``).
    stamps : Stamps
        Each task's ``updated_at`` as it was taken (:mod:`plugin.state.stamps`), saved with the state.

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
        self.not_scored: dict[str, str] = {}
        self.changes = 0
        self._stale: tuple[int, ReviewOptions, array[int]] | None = None  # the last pass's answer, at a count
        self.flag_counts: tuple[int, int] | None = None
        self.reference_authors: dict[int, str] = {}
        self.latest_models: dict[int, str] = {}
        self.stamps = Stamps()  # the updated_at of each task as taken: a pass reads in full only the others

    def mapped_with(self, controls: Mapping[str, Control], *, mapping: MappingOptions,
                    scoring: ScoringOptions) -> bool:
        """Whether this state was mapped with ``controls`` and these options.

        ``controls`` is a label config as read now. A state mapped otherwise is read again in full, never added to.
        """
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
            self.stamps.forget([identifier])  # kept again only once the whole task is taken
            taken = self._set_task(identifier, task)
            self.stamps.saw(task)
            return taken
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
            kept = contained(lambda: control.set_task(identifier, mapped[name], lengths=(
                _continuum_lengths(identifier, mapped[name], data if isinstance(data, Mapping) else {}, results)
                if control.spans is not None else None)), where=f"adding a task to {control.control.describe()}")
            if isinstance(kept, Bug):  # the task is left out of this control alone, and its results counted so
                contained(lambda: control.remove_task(identifier), where=f"taking a task out of "
                                                                           f"{control.control.describe()}")
                skips.add(f"{BUG_SKIP}: {control.control.describe()}", len(mapped[name].records) or 1)
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
        """Map the task's references with its annotations and keep the rows (:mod:`plugin.state.references`).

        ``mapped`` is the annotations as this read mapped them. What the references' results leave out is counted
        as theirs.
        """
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
        # with the annotators, each reference apart (:func:`plugin.state.references.aligned_with`), so that each
        # reference's regions are aligned with theirs and with no other reference's. What the references leave
        # out: their results of controls not in the config, the skips of their own mapping, and what the joint
        # mappings skipped beyond what the annotators' alone did.
        refs, theirs = list(references.submissions), Skips()
        count_unmapped_results(self.control_specs, {task: refs}, theirs)
        fixed = {name: c for name, c in self.control_specs.items() if _items_are_fixed(c)}
        joint_specs = {name: c for name, c in self.control_specs.items() if name not in fixed}
        alone_refs = self._map(task, refs, theirs, specs=fixed) if fixed else {}
        joint: dict[str, list[tuple[Any, ...]]] = {}
        for ref in refs if joint_specs else ():
            both = Skips()
            for name, one in self._map(task, [*counted, ref], both, specs=joint_specs).items():
                joint.setdefault(name, []).extend(aligned_with(ref.annotator, one.records))
            theirs.reasons.update(both.reasons - own.reasons)
        skips.reasons.update({f"in a reference: {reason}": n for reason, n in theirs.reasons.items()})
        for name, control in self.controls.items():
            rows = (tuple(joint[name]) if name in joint
                    else (*mapped[name].records, *alone_refs[name].records))
            if any(is_reference(row[2]) for row in rows):
                control.references[task] = rows
            else:
                control.references.pop(task, None)

    def _map(self, task: int, counted: list[Submission], skips: Skips,
             specs: Mapping[str, Control] | None = None) -> dict[str, MappedControl]:
        """The task's items per control of ``specs`` (by default every control).

        ``specs`` may be a subset mapped for the references: without counting the others' results, and items only.
        A control whose mapping fails on this task is skipped with the reason.
        """
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
            alone = Skips()
            kept = contained(lambda: map_control(control, {task: counted}, alone, self.mapping,
                                                 controls=self.control_specs),
                             where=f"mapping the results of {control.describe()}")
            if isinstance(kept, Bug):
                skips.add(f"{BUG_SKIP}: {control.describe()}")
                kept = map_control(control, {}, Skips(), self.mapping, controls=self.control_specs)
            else:
                skips.reasons.update(alone.reasons)
            out[name] = kept
        return out

    def remove_task(self, task: int) -> bool:
        """Forget a task (deleted in Label Studio); return whether it was known."""
        self.stamps.forget([task])
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
        """Add the tasks set within to the sums in batches (:meth:`ControlState.start_batch`).

        This is a full read's path. The sums are up to date once it ends, and only then.
        """
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
        """What reading and mapping left out, by reason, over every task, and the tasks refused.

        Counted as a batch read would count it.
        """
        total = Skips()
        for skips in self.tasks.skips_by_task().values():
            total.reasons.update(skips)
        total.reasons.update(self.refused)
        return total

    def task_scores(self, tasks: Iterable[int] | None = None, *, resample: bool = True,
                    built: dict[str, ScoredSpans] | None = None,
                    coded: dict[str, CodedRows] | None = None) -> TaskScores:
        """The scores of ``tasks`` (default: every known task), one vectorized pass per control.

        They are held as columns (:class:`plugin.state.task_scores.TaskScores`: a task's score is built when it
        is read).

        Scoring every task samples each span control's expected disorder again
        if a task changed; with ``resample=False`` the disorder held from the
        last time is kept (sampled only if there is none yet). ``built``
        receives, per span-like control that scored every task in one block,
        what that built, and ``coded`` every control's rows as codes
        (:meth:`ControlState.task_scores`).
        """
        # every task in the order of their ids, whatever order they were read in: a full scoring's rows (and a
        # bootstrap over them) are the same for the same tasks
        wanted = (sorted(self.tasks) if tasks is None
                  else list(dict.fromkeys(t for t in tasks if t in self.tasks)))
        columns: dict[str, ControlColumns] = {}
        if tasks is None:  # every task scored: which controls a bug keeps from being scored is told anew
            self.not_scored.clear()
        # span controls last: what scoring every task builds for them (units, matches) is held for the project's
        # measures, so no other control's scoring should run beside it (a million demo tasks: 300 MB less at the top)
        for name, control in sorted(self.controls.items(), key=lambda entry: entry[1].spans is not None):
            scored = contained(lambda: self._control_columns(control, wanted, every_task=tasks is None,
                                                             resample=resample, built=built, coded=coded),
                               where=f"scoring {control.control.describe()}")
            if isinstance(scored, Bug):  # this control alone is not scored; every other one and every task are
                self.not_scored[name] = scored.reason()
                scored = ControlColumns.empty(len(wanted))
                for held in (built, coded):
                    if held is not None:
                        held.pop(name, None)
            columns[name] = scored
        columns = {name: columns[name] for name in self.controls}  # in the config's order
        n_annotations = self._counted(self.tasks.codes(wanted))[0]
        if self.scoring.lowest_decile and tasks is None:  # every task scored: the cut moves here, and only here
            self.decile_cut = lowest_decile(score_values(columns, len(n_annotations)), n_annotations)
        cut = self.decile_cut if self.scoring.lowest_decile else None
        return TaskScores(wanted, n_annotations, columns, self.scoring, decile_cut=cut)

    def _control_columns(self, control: ControlState, wanted: list[int], *, every_task: bool, resample: bool,
                         built: dict[str, ScoredSpans] | None,
                         coded: dict[str, CodedRows] | None) -> ControlColumns:
        """One control's scores on ``wanted`` with its references' shares (:meth:`task_scores`)."""
        scores = control.task_scores(wanted, every_task=every_task, mapping=self.mapping, scoring=self.scoring,
                                     resample=resample, built=built, coded=coded)
        if control.references:
            rows = [row for task in wanted for row in control.references.get(task, ())]
            shares = task_reference_shares(rows, self.reference_authors, self.latest_models)
            present = scores.has_items | scores.has_spans
            scores.extra.update((place, shares[task]) for place, task in enumerate(wanted)
                                if task in shares and present[place])
        return scores

    def blocks(self, tasks: Iterable[int] | None = None, *, updated_at: str) -> dict[int, dict[str, Any]]:
        """The agreement block each of ``tasks`` (default: every known task) should carry in its meta."""
        return dict(self._blocks(tasks, updated_at=updated_at))

    def _blocks(self, tasks: Iterable[int] | None = None, *, updated_at: str) -> Iterator[tuple[int, dict[str, Any]]]:
        """:meth:`blocks` one task at a time (a pass over every task never holds them all)."""
        for task, score in self.task_scores(tasks).items():
            yield task, agreement_block(score, version=__version__, updated_at=updated_at)

    def stale_tasks(self, *, review: ReviewOptions | None = None) -> list[int]:
        """Tasks whose meta, as last read, differs from what they should carry.

        With ``review``, the mirrored score and the overlap are compared too
        (:func:`plugin.state.stale.stale_tasks`).

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
        scores = self.task_scores()
        stale = stale_tasks(scores, self.tasks, review=review, controls=self.control_specs)
        self.flag_counts = (int(np.count_nonzero(~np.isnan(scores.score_values()))), scores.n_flagged())
        self._stale = (at, review, array("q", stale))  # 8 bytes a task: a first pass may find every task stale
        return stale

    def config_summary(self) -> dict[str, dict[str, Any]]:
        """Every control of the label config as it is scored: its tag, level, and any ``problems`` and ``notes``.

        A control with problems is not scored (no level).
        """
        remarks = self.config_remarks()
        return {name: {"tag": control.tag,
                       "level": self.controls[name].level if name in self.controls else None,
                       **remarks.get(name, {"problems": [], "notes": []})}
                for name, control in self.control_specs.items()}

    def config_remarks(self) -> dict[str, dict[str, list[str]]]:
        """Per control whose config has any: its ``problems`` (the control is skipped) and ``notes``."""
        return {name: {"problems": list(c.problems), "notes": list(c.notes)}
                for name, c in self.control_specs.items() if c.problems or c.notes}

    def mapped(self, *, span_rows: bool = True, built: Mapping[str, ScoredSpans] | None = None,
               coded: Mapping[str, CodedRows] | None = None) -> dict[str, MappedControl]:
        """Every control's rows over all tasks.

        They are immutable: safe to score after the lock is released. Without ``span_rows``, span-like controls
        give their units instead of their span rows (:meth:`ControlState.mapped`; those ``built`` holds for the
        control, when current). ``coded`` holds the controls' rows as codes when the caller decoded them with
        every task's scores.
        """
        built, coded = built or {}, coded or {}
        return self._each_scored("reading the rows of", lambda name, control: control.mapped(
            span_rows=span_rows, built=built.get(name), coded=coded.get(name)))

    def _each_scored(self, doing: str, call: Callable[[str, ControlState], T], *,
                     among: Iterable[str] | None = None) -> dict[str, T]:
        """``call(name, control)`` of each control (of ``among``) not in :attr:`not_scored`, by name.

        A control whose call meets a bug is left out and joins :attr:`not_scored`, with ``doing`` in its reason.
        """
        out = {}
        for name in self.controls if among is None else among:
            if name in self.not_scored:
                continue
            control = self.controls[name]
            result = contained(lambda: call(name, control), where=f"{doing} {control.control.describe()}")
            if isinstance(result, Bug):
                self.not_scored[name] = result.reason()
            else:
                out[name] = result
        return out

    def reference_inputs(self) -> tuple[dict[str, tuple[tuple[Any, ...], str, tuple[Any, ...] | None]],
                                        dict[int, str]]:
        """What :func:`control_references` scores, taken in O(rows) under the lock.

        Per control with references: its rows mapped with them, its level and categories; and the authors of
        reviewer-marked ground truths.
        """
        inputs = {name: (tuple(row for task in sorted(control.references) for row in control.references[task]),
                         control.level, control.categories)
                  for name, control in self.controls.items() if control.references}
        return inputs, dict(self.reference_authors)

    def annotators(self) -> tuple[str, ...]:
        """Every annotator with a counted annotation."""
        _, who, _ = self._counted(self.tasks.codes())
        return tuple(sorted({self._people.values[code] for code in np.unique(who).tolist()}))

    def n_annotations(self) -> int:
        """Counted annotations over all tasks (kept as tasks change: ``/status`` reads it after every event)."""
        return self.tasks.n_annotations()

    @staticmethod
    def _counted(blobs: Sequence[bytes]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """The counted annotations of entries' :attr:`TaskEntry.codes`, decoded for all entries at once.

        Gives each entry's number of counted annotations; and of every counted annotation, its annotator's code
        and when it was submitted.
        """
        flat = np.frombuffer(b"".join(blobs), dtype=np.int64)
        lengths = np.fromiter(map(len, blobs), dtype=np.intp, count=len(blobs)) // 8
        starts = np.cumsum(lengths) - lengths
        n = flat[starts].astype(np.intp)
        return n, flat[ranges(starts + 1, n)], flat[ranges(starts + 1 + n, n)]

    def live_summary(self) -> dict[str, dict[str, Any]]:
        """Per control, SPA with its interval and alpha from the running sums.

        A control that a bug kept from being scored (:attr:`not_scored`) is left out, as one whose summary meets
        a bug is.
        """
        return self._each_scored("summing up", lambda _, control: control.live_summary(self.scoring, self.mapping))

    def annotation_times(self) -> pd.DataFrame:
        """``task``, ``annotator`` and ``time`` of every counted annotation: the report's timeline.

        ``time`` is UTC, NaT where it does not read as ISO 8601. Decoded from the entries' codes with numpy, not a
        tuple an annotation.
        """
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
        coded: dict[str, CodedRows] = {}  # every control's rows, decoded once for the tasks' and project's scores
        tasks = self.task_scores(resample=False, built=built, coded=coded)
        expected = {name: control.spans.expected for name, control in self.controls.items()
                    if control.spans is not None and control.spans.expected is not None}
        spans = [name for name, control in self.controls.items() if control.spans is not None]
        # every task was scored just above
        disorders = self._each_scored("summing up", lambda _, control: control.spans.observed(),  # type: ignore
                                      among=spans)
        observed = {name: value for name, (value, _) in disorders.items()}
        unaligned = {name: left for name, (_, left) in disorders.items()}
        mapped = self.mapped(span_rows=False, built=built, coded=coded)
        inputs, authors = self.reference_inputs()
        times = self.annotation_times()  # every counted annotation: their number and annotators are read from it
        return ProjectSnapshot(mapped=mapped, not_scored=dict(self.not_scored),
                               tasks=tasks, skips=self.skips(), n_annotations=len(times),
                               annotators=tuple(sorted(times["annotator"].unique().tolist())),
                               config=self.config_remarks(), times=times,
                               scoring=self.scoring, mapping=self.mapping, expected=expected, observed=observed,
                               unaligned=unaligned,
                               span_f1={name: spans.f1 for name, spans in built.items()},
                               references={name: rows for name, (rows, _, _) in inputs.items()},
                               reference_authors=authors,
                               consensus={name: control.consensus for name, control in self.controls.items()
                                          if control.consensus is not None})

    def scores(self) -> ProjectScores:
        """The full project scores (kappa family, augmented kappa, per label) and every task's scores."""
        return self.snapshot().scores()

