"""What happened to one project: outcomes counted, failures, timings, passes, who agrees with whom, /status.

:class:`ProjectRecord` is one part of :class:`plugin.keeper.monitor.ProjectMonitor` (its records, and the
questions ``/status`` and ``/metrics`` ask of them); every method takes the project's lock, which the monitor
holds with the state.
"""

from __future__ import annotations

import threading
from collections import Counter, deque
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from plugin.keeper.memory import deep_size
from plugin.keeper.recent import RecentTasks
from plugin.labelstudio.errors import one_line
from plugin.state.project import ProjectState

__all__ = ["EVENT_PARTS", "AnnotatorRows", "Outcome", "PassReport", "ProjectRecord", "event_times", "percentiles_ms"]

Outcome = str | Exception
"""A refresh's outcome for one task: "written", "unchanged", "gone", ... or the error that stopped it."""

AnnotatorRows = dict[str, list[dict[str, Any]]]
"""Per control, each annotator's agreement with the others, as rows with names."""

EVENT_PARTS = ("queue", "read", "scoring", "write", "total")
"""An event's way to its task's meta, timed (:meth:`ProjectMonitor.record_event_latency`): waiting (in the queues,
for a worker, and behind the writes of the tasks before it in its batch), Label Studio's read of the task, scoring
(the state's update, the block and its diff), the meta write (0 when the meta was right already), and all of it,
from the event's arrival to the write's answer; the first four add up to the last."""


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
        Tasks read in full.
    n_listed : int
        Tasks a read of changed tasks listed by their ``updated_at`` (those read in full are the ones the state
        had not seen: :mod:`plugin.state.stamps`).
    requests : int
        Requests the pass sent to Label Studio (its reads; the writes of its stale tasks are the writer's).
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
    n_listed: int = 0
    requests: int = 0
    stale: list[int] = field(default_factory=list)
    rechecked: int = 0
    n_scored: int | None = None
    n_flagged: int | None = None

    def as_dict(self) -> dict[str, Any]:
        return {"started_at": self.started_at, "kind": self.kind,
                "seconds": {k: round(v, 3) for k, v in self.seconds.items()},
                "n_tasks": self.n_tasks, "n_listed": self.n_listed, "requests": self.requests,
                "stale": len(self.stale), "rechecked": self.rechecked,
                "n_scored": self.n_scored, "n_flagged": self.n_flagged}


def event_times(latency: Mapping[str, Mapping[str, float | int | None]]) -> str:
    """Where events' time went, in one line: each part's median and 95th percentile in ms.

    >>> event_times({"total": {"p50": 210.0, "p95": 480.0, "n": 12}, "queue": {"p50": 5.0, "p95": 20.0, "n": 12}})
    '12 events since the last pass, ms median/95th: total 210/480 (queue 5/20)'
    """
    parts = [f"{part} {_ms(latency[part]['p50'])}/{_ms(latency[part]['p95'])}"
             for part in EVENT_PARTS if part != "total" and part in latency]
    total = latency["total"]
    return (f"{total['n']} events since the last pass, ms median/95th: total {_ms(total['p50'])}/{_ms(total['p95'])}"
            + (f" ({', '.join(parts)})" if parts else ""))


def _ms(value: float | int | None) -> str:
    return "-" if value is None else f"{value:.0f}"


class ProjectRecord:
    """What happened to one project, and ``/status``'s view of it (a part of the project's monitor)."""

    saved_state: Any  # the saved state's part: what happened to its file

    _lock: threading.RLock
    state: ProjectState | None
    passes: int
    _installs: int
    _memory: int | None
    _recent: RecentTasks
    _remap_to: dict[str, Any] | None

    def __init__(self) -> None:
        self._failures: dict[int, str] = {}  # tasks whose last refresh failed for good: the next pass writes them
        self._annotators: AnnotatorRows = {}  # as of the last pass: too costly for every /status
        self._references: dict[str, Any] = {}
        self._counters: Counter[str] = Counter()
        self._last_pass: PassReport | None = None
        self._published_from: object = None
        self._windows: deque[float] = deque(maxlen=1000)
        self._event_latency: dict[str, deque[float]] = {part: deque(maxlen=1000) for part in EVENT_PARTS}
        self._pass_records = 0  # passes recorded (record_pass): part of what the live summary is computed from
        self._events_timed = 0  # events recorded (record_event_latency), and as of the last told window
        self._events_told = 0

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
            self._events_timed += 1
            for part in EVENT_PARTS:
                self._event_latency[part].append(parts.get(part, 0.0))

    def take_event_latency(self) -> dict[str, dict[str, float | int | None]]:
        """Take the events recorded since the last take: the percentiles of each part (of 1,000 at most), for the log.

        Each call moves on: the next gives only the events recorded after it.
        """
        with self._lock:
            new = min(self._events_timed - self._events_told, 1000)
            self._events_told = self._events_timed
            return {part: percentiles_ms(list(self._event_latency[part])[len(self._event_latency[part]) - new:])
                    for part in EVENT_PARTS}

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
            # what the state holds, estimated from samples of its large maps (milliseconds, whatever its size), and
            # the tasks kept for events to stand for their reads
            self._memory = deep_size(self.state) + self._recent.bytes if self.state is not None else None
            return self._references

    def published_from(self) -> object:
        """The ``source`` of what the last :meth:`publish` computed (None before any)."""
        with self._lock:
            return self._published_from

    def reference_inputs(self) -> tuple[dict[str, Any], dict[int, str]]:
        """What the references are scored from (:meth:`plugin.state.project.ProjectState.reference_inputs`)."""
        with self._lock:
            return self.state.reference_inputs() if self.state is not None else ({}, {})

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
                "saved_state": self.saved_state(),
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
                "saved_state": self.saved_state(),
            }
