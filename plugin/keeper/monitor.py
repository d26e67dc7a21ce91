"""One project's state behind its lock, with what happened to it.

The monitor is the only holder of its lock: the pass, the refreshes, the
writer and the service ask it questions (:meth:`ProjectMonitor.status`,
:meth:`ProjectMonitor.knows`) and tell it what happened
(:meth:`ProjectMonitor.record_refreshes`, :meth:`ProjectMonitor.record_pass`),
and every step that reads or changes the state runs inside one of its methods.

:class:`ProjectMonitor` has more than 20 methods because it is the only holder of its project's lock: each
question or change of the state is one method that takes the lock, so no caller ever holds the state outside it.

It is past 600 lines, and :class:`ProjectMonitor` past 20 methods: it holds every question and every record of
one project under one lock. Splitting it by job (the cycle's steps, the saved state's files, the event path) is
planned with the live path's rework.
"""

from __future__ import annotations

import threading
import time
from collections import Counter, deque
from collections.abc import Iterable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

from plugin.clock import now_iso
from plugin.keeper.memory import deep_size
from plugin.labelstudio.errors import one_line
from plugin.labelstudio.events import Event
from plugin.mapping import MappedControl
from plugin.mapping.labelconfig import Control
from plugin.settings import MappingOptions, ProjectOptions, ReviewOptions, ScoringOptions
from plugin.state.project import ProjectScores, ProjectSnapshot, ProjectState
from plugin.state.saved import SavedStateError, StateFiles, Unsaved, pickled, read_state, write_state

__all__ = ["EVENT_PARTS", "EventTasks", "PassReport", "ProjectMonitor", "percentiles_ms"]

Outcome = str | Exception
"""A refresh's outcome for one task: "written", "unchanged", "gone", ... or the error that stopped it."""

AnnotatorRows = dict[str, list[dict[str, Any]]]
"""Per control, each annotator's agreement with the others, as rows with names."""

EVENT_PARTS = ("queue", "read", "scoring", "write", "total")
"""An event's way to its task's meta, timed (:meth:`ProjectMonitor.record_event_latency`): waiting in the queues,
Label Studio's read of the task, scoring (the state's update, the block and its diff), the meta write (0 when the
meta was right already), and all of it, from the event's arrival to the write's answer."""


def percentiles_ms(values: Iterable[float]) -> dict[str, float | int | None]:
    """Median and 95th percentile of durations in seconds, in ms, with their count.

    >>> percentiles_ms([0.002, 0.001, 0.003])
    {'p50': 2.0, 'p95': 3.0, 'n': 3}
    >>> percentiles_ms([])
    {'p50': None, 'p95': None, 'n': 0}
    """
    ordered = sorted(values)
    if not ordered:
        return {"p50": None, "p95": None, "n": 0}
    return {"p50": round(1000 * ordered[len(ordered) // 2], 1),
            "p95": round(1000 * ordered[min(len(ordered) - 1, int(0.95 * len(ordered)))], 1), "n": len(ordered)}


@dataclass
class PassReport:
    """What one full pass read and found.

    Attributes
    ----------
    started_at : str
    kind : {"full", "changed"}
        Whether every task was read, or only those changed since the last read.
    seconds : dict of str to float
        Time spent reading and computing.
    n_tasks : int
        Tasks read.
    stale : list of int
        Tasks whose meta differed from their block (requested for writing).
    rechecked : int
        Tasks refreshed one by one after the read: touched by events during it,
        or known before and absent from it.
    n_scored, n_flagged : int or None
        Tasks with a score, and flagged tasks, as the pass's scoring of every task found them
        (:attr:`plugin.state.project.ProjectState.flag_counts`).
    """

    started_at: str
    kind: str = "full"
    seconds: dict[str, float] = field(default_factory=dict)
    n_tasks: int = 0
    stale: list[int] = field(default_factory=list)
    rechecked: int = 0
    n_scored: int | None = None
    n_flagged: int | None = None

    def as_dict(self) -> dict[str, Any]:
        return {"started_at": self.started_at, "kind": self.kind,
                "seconds": {k: round(v, 3) for k, v in self.seconds.items()},
                "n_tasks": self.n_tasks, "stale": len(self.stale), "rechecked": self.rechecked,
                "n_scored": self.n_scored, "n_flagged": self.n_flagged}


@dataclass(frozen=True)
class EventTasks:
    """The tasks of one project an event names, as the project's state resolves them.

    Attributes
    ----------
    tasks : set of int
        Tasks to refresh: those the event names, and those of its annotations.
    deleted : list of int
        Deleted tasks the state knows.
    unseen_annotations : int
        Deleted annotations the state never saw.
    unknown_deletions : int
        Deleted tasks the state does not know.
    """

    tasks: set[int]
    deleted: list[int]
    unseen_annotations: int
    unknown_deletions: int


class ProjectMonitor:
    """One project's state behind a lock, with what happened to it.

    Parameters
    ----------
    project : int
    mapping, scoring : MappingOptions, ScoringOptions
    review : ReviewOptions, optional

    Attributes
    ----------
    state : ProjectState or None
        None until the first full pass has read the project. Read it without
        the monitor only where no other thread runs (a sync, a report).
    passes : int
        The service's passes done (their stale tasks requested).
    tabs_set : dict of str to object
        What this process last set each of the project's Data Manager tabs to, by tab: a cycle leaves a tab
        it would set as it is alone (no request).
    """

    def __init__(self, project: int, *, mapping: MappingOptions, scoring: ScoringOptions,
                 review: ReviewOptions | None = None) -> None:
        self.project = project
        self.mapping = mapping
        self.scoring = scoring
        self.review = review or ReviewOptions()
        self._lock = threading.RLock()
        self.state: ProjectState | None = None
        self._deferred: set[int] = set()  # refreshed while a pass was reading (or before the first): again after it
        self._reading = False
        self._remap_to: dict[str, Any] | None = None  # a changed config: events wait for a pass mapped with it
        self._failures: dict[int, str] = {}  # tasks whose last refresh failed for good: the next pass writes them
        self._annotators: AnnotatorRows = {}  # as of the last pass: too costly for every /status
        self._references: dict[str, Any] = {}
        self._counters: Counter[str] = Counter()
        self._last_pass: PassReport | None = None
        self.passes = 0
        self.tabs_set: dict[str, object] = {}
        self._memory: int | None = None
        self._watermark: datetime | None = None
        self._margin_read: datetime | None = None  # the watermark whose margin a read has looked into
        self._installs = 0
        self._published_from: object = None
        self._windows: deque[float] = deque(maxlen=1000)
        self._event_latency: dict[str, deque[float]] = {part: deque(maxlen=1000) for part in EVENT_PARTS}
        self._pass_records = 0  # passes recorded (record_pass): part of what the live summary is computed from
        self._saved: dict[str, Any] = {}  # the state's file (plugin.state.saved): what was restored, saved, refused
        self._saved_version: tuple[int, int] | None = None

    # --- what happened ---

    def count(self, name: str, n: int = 1) -> None:
        """Count ``n`` outcomes named ``name``."""
        with self._lock:
            self._counters[name] += n

    def counted(self, name: str) -> int:
        """How many outcomes named ``name`` were counted."""
        with self._lock:
            return self._counters[name]

    def failed(self) -> list[tuple[int, str]]:
        """Tasks whose last refresh failed for good, with the reason, by task."""
        with self._lock:
            return sorted(self._failures.items())

    def record_window(self, seconds: float) -> None:
        """Record the time from reading a task's meta to Label Studio answering its write."""
        with self._lock:
            self._windows.append(seconds)

    def record_event_latency(self, parts: Mapping[str, float]) -> None:
        """Record one event's way to its task's meta, in seconds per part (:data:`EVENT_PARTS`)."""
        with self._lock:
            for part in EVENT_PARTS:
                if part in parts:
                    self._event_latency[part].append(parts[part])

    def record_refreshes(self, outcomes: Mapping[int, Outcome], *, retrying: Iterable[int] = ()) -> dict[int, str]:
        """Count the outcomes of refreshes; a failed task not in ``retrying`` failed for good.

        Returns
        -------
        dict of int to str
            The tasks that failed for good, with the reason.
        """
        retry = set(retrying)
        given_up = {}
        with self._lock:
            for task, outcome in outcomes.items():
                if isinstance(outcome, Exception):
                    self._counters["refresh failed" + (" (will retry)" if task in retry else "")] += 1
                    if task not in retry:
                        given_up[task] = self._failures[task] = one_line(outcome)
                else:
                    self._failures.pop(task, None)
                    self._counters[outcome] += 1
        return given_up

    def record_pass(self, report: PassReport) -> None:
        """Keep what the last pass read and found (``/status`` shows it)."""
        with self._lock:
            self._last_pass = report
            self._pass_records += 1

    def last_pass(self) -> PassReport | None:
        """What the last pass read and found (None before the first)."""
        with self._lock:
            return self._last_pass

    def publish(self, annotators: AnnotatorRows | None, references: dict[str, Any] | None = None, *,
                source: object = None) -> dict[str, Any]:
        """Publish a service pass's results: who agrees with whom, and the references.

        A service's pass is done: its stale tasks are requested, ``annotators`` is who agrees with whom, and
        ``references`` each control's annotators against its references
        (:func:`plugin.state.references.control_references`),
        computed from ``source`` (:meth:`version`, and what else they were computed from); return the references
        now published.

        ``annotators=None`` keeps both as last published: the pass found their
        source as it was (:meth:`published_from`), so they would come out the same.
        """
        with self._lock:
            if annotators is not None:
                self._annotators = annotators
                self._references = references or {}
                self._published_from = source
            self.passes += 1
            # what the state holds, estimated from samples of its large maps (milliseconds, whatever its size)
            self._memory = deep_size(self.state) if self.state is not None else None
            return self._references

    def published_from(self) -> object:
        """The ``source`` of what the last :meth:`publish` computed (None before any)."""
        with self._lock:
            return self._published_from

    def version(self) -> tuple[int, int]:
        """Which state is in place and how often it has changed.

        Which state is in place (counted by :meth:`install`) and how often it has changed
        (:attr:`plugin.state.project.ProjectState.changes`): equal versions hold the same tasks."""
        with self._lock:
            return self._installs, self.state.changes if self.state is not None else -1

    def reference_inputs(self) -> tuple[dict[str, Any], dict[int, str]]:
        """What the references are scored from (:meth:`plugin.state.project.ProjectState.reference_inputs`)."""
        with self._lock:
            return self.state.reference_inputs() if self.state is not None else ({}, {})

    # --- the state ---

    def defer_unread(self, tasks: Iterable[int]) -> bool:
        """Keep tasks for after the next pass while the project is unread or being re-mapped.

        Whether the project has not been read yet, or is being re-mapped under a changed label config; if so,
        ``tasks`` are refreshed after that pass (never scored with the old config's mapping)."""
        with self._lock:
            if self.state is None or self._remap_to is not None:
                self._deferred.update(tasks)
                return True
            return False

    def defer(self, tasks: Iterable[int]) -> None:
        """Refresh ``tasks`` after the next pass's read."""
        with self._lock:
            self._deferred.update(tasks)

    def refresh(self, tasks: Iterable[int], fresh: Mapping[int, Mapping[str, Any]]) -> tuple[
            dict[int, str], dict[int, dict[str, Any]]]:
        """Put ``fresh`` (tasks as just read) into the state; return what left it, and the others' blocks.

        The refresh steps, written once: each of ``tasks`` is replaced with its
        fresh read, or forgotten when it was not read (deleted) or is refused
        (another project's); then the blocks of those kept are computed. While
        a pass reads pages that may be older than this read, the tasks are
        refreshed again after it.

        Returns
        -------
        gone : dict of int to str
            "gone" (known, and deleted since) or "not a task of this project".
        blocks : dict of int to dict
            The agreement block each other task should carry.
        """
        wanted = list(tasks)
        gone: dict[int, str] = {}
        with self._lock:
            state = self.state
            assert state is not None, "A task is refreshed only once the project has been read."
            if self._reading:
                self._deferred.update(wanted)
            for task in wanted:
                if task not in fresh or state.set_task(fresh[task]) is None:
                    gone[task] = "gone" if state.remove_task(task) else "not a task of this project"
            blocks = state.blocks([t for t in wanted if t not in gone], updated_at=now_iso())
        return gone, blocks

    def options(self) -> ProjectOptions:
        """The options the project is scored and reviewed with now."""
        with self._lock:
            return ProjectOptions(mapping=self.mapping, scoring=self.scoring, review=self.review)

    def reconfigure(self, options: ProjectOptions) -> None:
        """Score and review with new options from now on.

        Score and review with ``options`` from now on; the next pass reads every task under them (its state is
        rebuilt), and until then the state holds the options it was built with."""
        with self._lock:
            self.mapping, self.scoring, self.review = options.mapping, options.scoring, options.review

    def config_changed(self, controls: Mapping[str, Any]) -> bool:
        """Whether the label config differs from the one the state was mapped with.

        Whether ``controls`` (the label config as just read) differ from those the state was mapped with; if so,
        events wait until a pass installs a state mapped with them (:meth:`install`)."""
        wanted = dict(sorted(controls.items()))
        with self._lock:
            if self.state is None or self.state.control_specs == wanted:
                self._remap_to = None  # changed back before a pass re-mapped it: the state holds it already
                return False
            self._remap_to = wanted
            return True

    def read_position(self) -> tuple[ProjectState | None, datetime | None]:
        """The state and the newest ``updated_at`` it was read up to (None before the first pass)."""
        with self._lock:
            return self.state, self._watermark

    def changed_since(self, margin: timedelta) -> datetime | None:
        """Where the next read of changed tasks starts (None: no watermark, every task is read).

        ``margin`` below the watermark the first time after it moved, for writes that commit after a read though
        stamped before it; once a read has looked there, the watermark itself: an idle project's pass reads no
        task (it read every one of them again on each pass, until something changed).
        """
        with self._lock:
            if self._watermark is None:
                return None
            return self._watermark if self._margin_read == self._watermark else self._watermark - margin

    def n_tasks(self) -> int:
        """The number of tasks the state holds (0 before the first pass)."""
        with self._lock:
            return 0 if self.state is None else len(self.state.tasks)

    @contextmanager
    def reading(self) -> Iterator[None]:
        """While a pass reads pages: refreshes meanwhile are done again after it."""
        with self._lock:
            self._reading = True
        try:
            yield
        finally:
            with self._lock:
                self._reading = False

    def set_task(self, task: Mapping[str, Any]) -> None:
        """Replace one task of the current state with ``task`` as read (a read of changed tasks)."""
        with self._lock:
            assert self.state is not None
            self.state.set_task(task)

    def install(self, state: ProjectState, *, watermark: datetime | None,
                margin_read: datetime | None = None) -> list[int]:
        """Put the state a pass read in place; return the tasks to refresh one by one now.

        Those are the tasks refreshed while it read, and, when ``state`` is a
        new one, the tasks the old state knew that it lacks. ``margin_read`` is the watermark below which the read
        looked into the margin (:meth:`changed_since`).
        """
        with self._lock:
            old = self.state
            missing = set(old.tasks) - set(state.tasks) if old is not None and old is not state else set()
            recheck = sorted(missing | self._deferred)
            self._deferred = set()
            self._installs += state is not old
            self.state = state
            self._watermark = watermark
            self._margin_read = margin_read
            if self._remap_to is not None and state.control_specs == self._remap_to:
                self._remap_to = None
            return recheck

    def restore(self, state: ProjectState, *, watermark: datetime | None, saved_at: str, n_bytes: int) -> None:
        """Put a state read back from its file in place, before the first pass.

        Put a state read back from its file (:mod:`plugin.state.saved`) in place, before the first pass: that
        pass then reads only the tasks changed since ``watermark`` (:meth:`restored`)."""
        with self._lock:
            assert self.state is None, "A saved state is restored only before the first pass."
            self._deferred.update(self.install(state, watermark=watermark))  # events' tasks: after that pass too
            self._saved_version = self.version()
            self._saved["restored"] = {"saved_at": saved_at, "n_tasks": len(state.tasks), "bytes": n_bytes}

    def restored(self) -> bool:
        """Whether the state in place was restored from its file and no pass has run since."""
        with self._lock:
            return "restored" in self._saved and self.passes == 0

    def record_saved_state(self, event: str, detail: dict[str, Any]) -> None:
        """Keep what happened to the state's file.

        Keep what happened to the state's file (``/status`` shows the latest of each: "restored", "missing",
        "refused", "not used", "saved", "failed")."""
        with self._lock:
            self._saved[event] = detail

    def saved_state(self) -> dict[str, Any]:
        """What happened to the state's file (:meth:`record_saved_state`), by event."""
        with self._lock:
            return dict(self._saved)

    def unsaved(self) -> tuple[Unsaved, tuple[int, int]] | None:
        """The state pickled for saving, if it changed since it was last saved.

        The state pickled with what it was read up to (:func:`plugin.state.saved.pickled`), and its
        :meth:`version`, if it changed since it was last saved or restored (None otherwise, or before the first
        pass); :meth:`mark_saved` once written."""
        with self._lock:
            if self.state is None or self.version() == self._saved_version:
                return None
            return pickled(self.state, watermark=self._watermark), self.version()

    def mark_saved(self, version: tuple[int, int]) -> None:
        """The state at ``version`` (:meth:`unsaved`) is on disk."""
        with self._lock:
            self._saved_version = version

    def restore_saved(self, files: StateFiles, controls: Mapping[str, Any]) -> str | None:
        """Restore the project's saved state when its file is sound and current.

        Put the project's saved state in place (:meth:`restore`) if its file is there and sound and the state
        was mapped with ``controls`` (the label config as just read) and the project's options; return why the
        file was refused, or None (restored, or no file). :meth:`saved_state` keeps what happened."""
        try:
            restored = read_state(files.directory, self.project, secret=files.secret, source=files.source)
            options = self.options()
            if restored is not None and not restored.state.mapped_with(controls, mapping=options.mapping,
                                                                        scoring=options.scoring):
                raise SavedStateError("The saved state was mapped with another label config or other options.")
        except Exception as error:  # noqa: BLE001 (any file that cannot be used: the project is read)
            reason = str(error) if isinstance(error, SavedStateError) else f"unreadable ({one_line(error)})"
            self.record_saved_state("refused", {"at": now_iso(), "reason": reason})
            return reason
        if restored is None:
            self.record_saved_state("missing", {"at": now_iso()})
            return None
        self.restore(restored.state, watermark=restored.watermark, saved_at=restored.saved_at,
                     n_bytes=restored.n_bytes)
        return None

    def save_changes(self, files: StateFiles) -> bool:
        """Save the state to its file if it changed; return whether it was written.

        Save the state to its file if it changed since it was last saved or restored; return whether it was
        written. :meth:`saved_state` keeps what happened.

        Raises
        ------
        Exception
            Whatever stopped the save (a full disk, a directory that cannot be written, memory), recorded as
            "failed" first; the state and its previous file stay as they were.
        """
        started = time.perf_counter()
        try:
            unsaved = self.unsaved()  # pickled under the project's lock, written after it
            if unsaved is None:
                return False
            pickled_state, version = unsaved
            size = write_state(pickled_state, files.directory, secret=files.secret, saved_at=now_iso(),
                               source=files.source)
        except Exception as error:
            self.record_saved_state("failed", {"at": now_iso(), "reason": one_line(error)})
            raise
        self.mark_saved(version)
        self.record_saved_state("saved", {"at": now_iso(), "n_tasks": pickled_state.n_tasks, "bytes": size,
                                          "seconds": round(time.perf_counter() - started, 3)})
        return True

    def controls(self) -> Mapping[str, Control]:
        """The label config's controls the state is mapped with (none before the first pass)."""
        with self._lock:
            return self.state.control_specs if self.state is not None else {}

    def stale_tasks(self) -> list[int]:
        """Tasks whose meta (mirrored score, overlap), as last read, differ from what they should carry."""
        with self._lock:
            return [] if self.state is None else self.state.stale_tasks(review=self.review)

    def flag_counts(self) -> tuple[int, int] | None:
        """Tasks with a score and flagged tasks, as the last :meth:`stale_tasks` found them (None before)."""
        with self._lock:
            return None if self.state is None else getattr(self.state, "flag_counts", None)

    # --- questions ---

    def knows(self, event: Event) -> bool:
        """Whether the state knows a task or an annotation the event names (an event that names no project)."""
        named = set(event.tasks) | set(event.deleted_tasks)
        with self._lock:
            state = self.state
            return state is not None and (any(t in state.tasks for t in named) or any(
                state.task_of_annotation(a) is not None for a in event.annotations))

    def event_tasks(self, event: Event) -> EventTasks:
        """The tasks of this project ``event`` names, as the state resolves its annotations and deletions."""
        tasks = set(event.tasks)
        unseen = 0
        with self._lock:
            state = self.state
            for annotation in event.annotations:
                task = state.task_of_annotation(annotation) if state is not None else None
                if task is None:
                    unseen += 1
                else:
                    tasks.add(task)
            deleted = [t for t in event.deleted_tasks if state is None or t in state.tasks]
        return EventTasks(tasks, deleted, unseen, len(event.deleted_tasks) - len(deleted))

    def mapped(self) -> dict[str, MappedControl]:
        """Every control's rows over all tasks (empty before the first pass), to score after the lock."""
        with self._lock:
            return self.state.mapped() if self.state is not None else {}

    def snapshot(self) -> ProjectSnapshot | None:
        """What the project's full scores are computed from (None before the first pass)."""
        with self._lock:
            return self.state.snapshot() if self.state is not None else None

    def scores(self) -> ProjectScores:
        """The full project scores of the state (after a pass)."""
        with self._lock:
            assert self.state is not None
            return self.state.scores()

    def status(self) -> dict[str, Any]:
        """The project as ``/status`` shows it: its live summary, what was skipped, and what happened."""
        with self._lock:
            state = self.state
            return {
                "ready": state is not None,
                "remapping": self._remap_to is not None,
                "passes": self.passes,
                "memory_bytes": self._memory,
                "controls": state.live_summary() if state is not None else {},
                "n_tasks": len(state.tasks) if state is not None else None,
                "n_annotations": state.n_annotations() if state is not None else None,
                "skipped": dict(state.skips().reasons.most_common()) if state is not None else {},
                "config": state.config_summary() if state is not None else {},
                "not_scored": dict(state.not_scored) if state is not None else {},  # after the live summary
                "outcomes": dict(self._counters),
                "failed_tasks": len(self._failures),
                "failures": [{"task": t, "error": e} for t, e in sorted(self._failures.items())[:20]],
                "last_pass": self._last_pass.as_dict() if self._last_pass is not None else None,
                "annotators": self._annotators,
                "references": self._references,
                "merge_window_ms": percentiles_ms(self._windows),
                "event_latency_ms": {part: percentiles_ms(self._event_latency[part]) for part in EVENT_PARTS},
                "saved_state": dict(self._saved),
            }

    def gauges(self, known: Any = None) -> tuple[Any, dict[str, Any]]:
        """What ``/metrics`` reads of the project, as :meth:`status` gives it; and what to pass next time.

        The controls' live summary and the skipped results (:meth:`status` ``controls`` and ``skipped``) cost
        O(annotations). ``known`` is what an earlier call gave back with them: they are reused while no task
        changed or was refused and no pass ran since, so that a scrape of a project nobody touched computes
        nothing. The rest is O(controls).
        """
        with self._lock:
            state = self.state
            if state is None:
                return None, {"ready": False}
            version = (self._installs, state.changes, sum(state.refused.values()), self.passes, self._pass_records)
            if known is not None and known[0] == version:
                costly = known[1]
            else:
                costly = {"controls": state.live_summary(), "skipped": dict(state.skips().reasons.most_common())}
            return (version, costly), {
                "ready": True, **costly,
                "not_scored": dict(state.not_scored),  # after the live summary
                "thresholds": {name: state.scoring.thresholds.get(name, state.scoring.threshold)
                               for name in state.controls},
                "n_tasks": len(state.tasks),
                "saved_state": dict(self._saved),
            }
