"""``serve``'s projects: which it monitors, when each runs its cycle, and the threads that do the work.

The service's state is one object (:class:`ServiceState`) that the app owns. Three threads do the work, and none
of them dies of one bad event or one failed task:

* the **processor** (:class:`plugin.service.events.EventQueue`) turns each webhook event (ids only) into tasks to
  refresh;
* the **writer** (:class:`plugin.keeper.writer.TaskWriter`) refreshes them: reads the task from Label Studio,
  updates the project's state, writes the block when the fresh meta differs; coalesced, retried, counted;
* the **supervisor** registers each project's webhook (retrying while Label Studio is unreachable), then runs the
  project cycle (:func:`plugin.keeper.cycle.run_cycle`) at start and every ``reconcile_interval`` seconds:
  whatever an event, a write or a restart lost, the next cycle writes. A cycle on a project whose tasks read as
  they were held computes nothing again. Every ``discover_interval`` seconds it reads the project list: with
  ``all_projects`` a new project is monitored from then on, and a deleted project is dropped (its state, its
  queued writes), in one line of the log and of ``/status``. With ``state_dir`` each project's first cycle
  restores its saved state and reads only the tasks changed since; every cycle saves the state if it changed.

A PROJECT_UPDATED event makes the service read the project's label config; when it changed, the project's events
wait for the cycle that re-maps it, asked for at once (a cycle finds a changed config by itself too). Events that
arrive before the first cycle has read the project are kept and applied after it.
"""

from __future__ import annotations

import logging
import math
import threading
import time
from collections import Counter, deque
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from plugin.clock import now_iso
from plugin.keeper.cycle import run_cycle
from plugin.keeper.monitor import ProjectMonitor
from plugin.keeper.record import event_times
from plugin.keeper.writer import TaskWriter
from plugin.labelstudio.client import LabelStudioClient, LabelStudioNotFound, PeopleCache
from plugin.labelstudio.errors import one_line
from plugin.project_settings import ProjectSettings, read_project_settings
from plugin.service.events import EventQueue
from plugin.service.metrics import ServiceMetrics
from plugin.service.settings import ServiceSettings
from plugin.service.webhooks import Webhooks
from plugin.settings import ProjectOptions, SettingsError
from plugin.state.saved import state_path

__all__ = ["ErrorCounts", "ServiceState"]

log = logging.getLogger("ls_agreement.service")

PEOPLE_FOR = 300.0
"""Seconds the annotators' names are kept before Label Studio's users are read again."""
SETTINGS_CHECK = 2.0
"""Seconds between looks at the settings file (its modification time and size)."""
REMOVED_KEPT = 100
"""Projects dropped (deleted in Label Studio) that ``/status`` lists, the latest first."""


def _stamp(path: Path) -> tuple[int, int] | None:
    """A file's modification time and size (None when it cannot be seen).

    The file's modification time and size (None when it cannot be seen): a change of either is a new file.
    """
    try:
        seen = path.stat()
    except OSError:
        return None
    return seen.st_mtime_ns, seen.st_size


@dataclass
class ErrorCounts:
    """Errors by kind, each with its count and latest message, so that ``/status`` stays bounded.

    However many distinct messages arrive (Label Studio's carry a unique error id), the kinds are per project and
    per event action.

    >>> errors = ErrorCounts()
    >>> errors.add("project 3: pass failed", "404 (id 1)"); errors.add("project 3: pass failed", "404 (id 2)")
    >>> errors.as_dict()
    {'project 3: pass failed': {'count': 2, 'latest': '404 (id 2)'}}
    """

    counts: Counter[str] = field(default_factory=Counter)
    latest: dict[str, str] = field(default_factory=dict)

    def add(self, kind: str, message: str) -> None:
        """Count one error of ``kind``; its message is the latest."""
        self.counts[kind] += 1
        self.latest[kind] = message[:500]

    def __iter__(self) -> Iterator[str]:
        """Each kind with its latest message, as one line."""
        return iter(f"{kind}: {self.latest[kind]}" for kind in self.counts)

    def as_dict(self) -> dict[str, dict[str, Any]]:
        """Each kind's count and latest message."""
        return {kind: {"count": n, "latest": self.latest[kind]} for kind, n in self.counts.items()}


class ServiceState:
    """The service's projects, their schedule, events, writer and webhooks.

    The service's projects (one monitor each), their schedule, the event queue, the writer and the webhooks.
    """

    def __init__(self, settings: ServiceSettings, client: LabelStudioClient) -> None:
        self.settings = settings
        self.client = client
        self._base = ProjectOptions(mapping=settings.mapping, scoring=settings.scoring, review=settings.review)
        self._project_settings = ProjectSettings(defaults=self._base)
        self._settings_stamp: tuple[int, int] | None = None
        if settings.settings_file is not None:
            self._settings_stamp = _stamp(settings.settings_file)
            self._project_settings = read_project_settings(settings.settings_file, base=self._base)
        self._next_settings_check = time.monotonic() + SETTINGS_CHECK
        named = [p for p in settings.projects if settings.owns(p)]
        for project in sorted(set(settings.projects) - set(named)):
            log.info("Project %s: left to the shard that owns it (this service is shard %s/%s).", project,
                     *settings.shard)  # type: ignore[misc]
        self.monitors = {p: self._new_monitor(p) for p in named}
        self.lock = threading.Lock()
        self._seen = frozenset(settings.projects)  # the projects the last list showed (named: those named)
        self.metrics = ServiceMetrics(self)
        self.writer = TaskWriter(client, self.monitors, workers=client.writers,
                                 coalesce_seconds=settings.coalesce_seconds, retry_delays=settings.retry_delays,
                                 on_event=self.metrics.observe_event)
        self.bad_payloads: Counter[str] = Counter()
        self.rejected = 0
        self.errors = ErrorCounts()
        self.removed: deque[dict[str, Any]] = deque(maxlen=REMOVED_KEPT)
        self.people = PeopleCache(client, keep_for=PEOPLE_FOR)
        self.webhooks = Webhooks(client, settings)
        self._tabs_kept: set[int] = set()  # projects whose "Low agreement" tab is set with their options now
        self.events = EventQueue(client, self.writer, monitors=lambda: self._monitors(),
                                 request_pass=self.request_pass, on_error=self._error)
        self._stop = threading.Event()
        self._wake = threading.Condition()
        self._pass_due: dict[int, float] = dict.fromkeys(named, 0.0)
        self._asked: set[int] = set()  # passes asked for while one ran: run again at once
        # with every project to monitor, the list is read first; otherwise after an interval (for deleted ones)
        self._next_discovery = 0.0 if settings.all_projects else time.monotonic() + min(
            settings.discover_interval, settings.reconcile_interval)
        self._supervisor = threading.Thread(target=self._supervise, name="supervisor", daemon=True)

    # --- lifecycle ---

    def start(self, *, register: bool = True) -> None:
        """Start the threads: the writer, the events and the supervisor.

        Start the threads; the supervisor registers the webhooks (unless told not to) and reads each project.
        """
        if not register:
            self.webhooks.registered.update(self.monitors)
            self._tabs_kept.update(self.monitors)
        self.writer.start()
        self.events.start()
        self._supervisor.start()

    def stop(self) -> None:
        """Stop every thread; queued refreshes are dropped (the next start's pass finds what they would write)."""
        self._stop.set()
        with self._wake:
            self._wake.notify_all()
        self.events.stop()
        if self._supervisor.is_alive():
            self._supervisor.join(timeout=10)
        self.writer.stop()
        if not self.settings.keep_webhooks:
            self.webhooks.remove_all()

    def healthy(self) -> bool:
        """Whether every thread runs and Label Studio has answered within ``unhealthy_after``."""
        threads = self.events.alive() and self._supervisor.is_alive() and self.writer.alive()
        return threads and self.client.reachability.unreachable_for() < self.settings.unhealthy_after

    def request_pass(self, project: int) -> None:
        """Run a full pass of ``project`` as soon as possible (again after the one running, if one is)."""
        with self._wake:
            if project in self._pass_due:
                self._pass_due[project] = 0.0
                self._asked.add(project)
            self._wake.notify_all()

    def projects(self) -> list[int]:
        """The projects monitored now."""
        with self.lock:
            return sorted(self.monitors)

    def monitoring(self, project: int) -> bool:
        """Whether ``project`` is monitored now."""
        with self.lock:
            return project in self.monitors

    def seen(self) -> list[int]:
        """The projects the last read of the project list showed (with named projects, those named among them).

        Before the first read: the projects named (none with ``all_projects``).
        """
        with self.lock:
            return sorted(self._seen)

    def _monitors(self) -> dict[int, ProjectMonitor]:
        with self.lock:
            return dict(self.monitors)

    def next_pass_in(self, project: int) -> float:
        """Seconds until the project's next pass (0 when it is due)."""
        with self._wake:
            due = self._pass_due.get(project, 0.0)
        return max(0.0, due - time.monotonic())

    def wait_ready(self, timeout: float) -> bool:
        """Block until every project has been read once (for tests and benchmarks).

        Block until every project has been read once and its stale tasks requested (for tests and benchmarks).
        """
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if all(m.passes > 0 for m in self._monitors().values()):
                return True
            time.sleep(0.05)
        return False

    def _error(self, kind: str, reason: str) -> None:
        """Count an error in ``/status`` ``errors``."""
        with self.lock:
            self.errors.add(kind, reason)

    # --- projects that come and go ---

    def _new_monitor(self, project: int) -> ProjectMonitor:
        options = self._project_settings.for_project(project)
        return ProjectMonitor(project, mapping=options.mapping, scoring=options.scoring, review=options.review)

    def add_project(self, project: int) -> bool:
        """Monitor a project from now on; False if it is already, or another shard owns it.

        Monitor ``project`` from now on (its webhook and first pass follow at once); False if it is already, or
        if another shard owns it."""
        if not self.settings.owns(project):
            return False
        with self.lock:
            if project in self.monitors:
                return False
            self.monitors[project] = self._new_monitor(project)
        with self._wake:
            self._pass_due[project] = 0.0
            self._wake.notify_all()
        log.info("Project %s: monitored from now on (a new project).", project)
        return True

    def drop_project(self, project: int, reason: str) -> None:
        """Stop monitoring a project: its state and queued writes are dropped.

        Stop monitoring ``project``: its state and queued writes are dropped, and it is listed in ``/status``.

        Its webhook went with it (Label Studio deletes a project's webhooks with the project).
        """
        with self.lock:
            if self.monitors.pop(project, None) is None:
                return
            self.removed.appendleft({"project": project, "at": now_iso(), "reason": reason})
        self.events.forget(project)
        with self._wake:
            self._pass_due.pop(project, None)
            self._asked.discard(project)
        self.webhooks.forget(project)
        self._tabs_kept.discard(project)
        self.writer.forget(project)
        self.metrics.forget(project)
        if self.settings.state_dir is not None:
            try:
                state_path(self.settings.state_dir, project).unlink(missing_ok=True)
            except OSError as error:
                self._state_file_error(project, "saved state not removed", one_line(error))
        log.info("Project %s: no longer monitored (%s).", project, reason)

    def discover(self) -> tuple[list[int], list[int]]:
        """Read the project list: monitor the new projects (with ``all_projects``), drop the deleted ones.

        A project missing from the list is dropped only once Label Studio answers 404 for it.

        Returns
        -------
        added, dropped : list of int
        """
        seen = set(self.client.project_ids())
        with self.lock:
            self._seen = frozenset(seen if self.settings.all_projects else seen & set(self.settings.projects))
        added = [p for p in sorted(seen) if self.settings.all_projects and self.add_project(p)]
        dropped = []
        for project in sorted(set(self.projects()) - seen):
            if not self.client.project_exists(project):
                self.drop_project(project, "deleted in Label Studio")
                dropped.append(project)
        return added, dropped

    def reread_settings(self) -> bool:
        """Read the settings file again if it changed; re-score the projects whose options changed.

        A file that does not read is refused in one line (log and ``/status``), and the settings in use are kept.
        Returns whether new settings were applied.
        """
        path = self.settings.settings_file
        if path is None or _stamp(path) == self._settings_stamp:
            return False
        self._settings_stamp = _stamp(path)
        try:
            settings = read_project_settings(path, base=self._base)
        except SettingsError as error:
            self._error("settings file not applied", str(error))
            log.warning("The settings file was not applied, the settings in use are kept: %s", error)
            return False
        self._project_settings = settings
        for project, monitor in sorted(self._monitors().items()):
            options = settings.for_project(project)
            if monitor.options() == options:
                continue
            if monitor.review != options.review:
                self._tabs_kept.discard(project)  # its tabs are set again with the next pass
            monitor.reconfigure(options)
            log.info("Project %s: its settings changed; re-scoring it.", project)
            self.request_pass(project)
        log.info("Settings read again from %s.", path)
        return True

    def _discover_when_due(self) -> None:
        if time.monotonic() < self._next_discovery:
            return
        self._next_discovery = time.monotonic() + min(self.settings.discover_interval,
                                                      self.settings.reconcile_interval)
        try:
            self.discover()
        except Exception as error:  # noqa: BLE001 (Label Studio down: the list is read again next time)
            self._error("project list could not be read", one_line(error))

    # --- the supervisor: webhooks and each project's cycle ---

    def _run_pass(self, project: int) -> None:
        """One cycle of a project, its stale tasks left to the writer.

        One cycle of ``project`` (:func:`plugin.keeper.cycle.run_cycle`), its stale tasks left to the writer.
        """
        with self.lock:
            monitor = self.monitors[project]
        self.webhooks.ensure(project)
        started = time.monotonic()
        cycle = run_cycle(self.client, monitor, files=self.settings.state_files,
                          full_pass_every=self.settings.full_pass_every,
                          write=lambda stale: self.writer.request(project, stale, background=True),
                          tabs=True, review_tab=project not in self._tabs_kept, people=self.people.get(),
                          max_rate=self.settings.read_rate)
        self.metrics.pass_ended(project, cycle.read.kind, time.monotonic() - started)
        self._tabs_kept.add(project)
        if cycle.refused is not None:
            log.warning("Project %s: every task is read, as its saved state is not used: %s", project, cycle.refused)
        elif cycle.restore == "restored":
            restored = monitor.saved_state()["restored"]
            log.info("Project %s: restored %d tasks saved at %s in %.1f s; reading the tasks changed since.",
                     project, restored["n_tasks"], restored["saved_at"], cycle.restore_seconds)
        read = cycle.read
        listed = f"listed {read.n_listed} changed and " if read.kind == "changed" else ""
        log.info("Project %s: %s pass %sread %d tasks in full in %.1f s (%d requests); %d to write.", project,
                 read.kind, listed, read.n_tasks, read.seconds.get("read", 0.0), read.requests, len(read.stale))
        events = monitor.take_event_latency()
        if events["total"]["n"]:
            log.info("Project %s: %s", project, event_times(events))
        for what, reason in cycle.errors:
            self._state_file_error(project, what, reason)

    def _state_file_error(self, project: int, what: str, reason: str) -> None:
        """Count a failure with a project's saved state in ``/status`` ``errors`` and log it."""
        self._error(f"project {project}: {what}", reason)
        log.warning("Project %s: %s (%s).", project, what, reason)

    def _supervise(self) -> None:
        backoff: dict[int, float] = {}
        while not self._stop.is_set():
            self._discover_when_due()
            if time.monotonic() >= self._next_settings_check:
                self._next_settings_check = time.monotonic() + SETTINGS_CHECK
                self.reread_settings()
            with self._wake:
                due_now = [p for p, due in sorted(self._pass_due.items()) if due <= time.monotonic()]
            for project in due_now:
                if self._stop.is_set():
                    return
                with self._wake:
                    self._asked.discard(project)
                try:
                    self._run_pass(project)
                    backoff.pop(project, None)
                    next_due = time.monotonic() + self.settings.reconcile_interval
                except Exception as error:  # noqa: BLE001 (Label Studio down, a bad config: retried, counted)
                    if self._deleted(project, error):
                        continue
                    delay = min(backoff.get(project, 0.5) * 2, 30.0, self.settings.reconcile_interval)
                    backoff[project] = delay
                    reason = one_line(error)
                    self._error(f"project {project}: pass failed", reason)
                    log.warning("Project %s could not be read (%s); trying again in %.0f s.", project, reason, delay)
                    next_due = time.monotonic() + delay
                with self._wake:
                    if project in self._pass_due:
                        self._pass_due[project] = 0.0 if project in self._asked else next_due
            with self._wake:
                wait = min([*self._pass_due.values(), self._next_discovery,
                            self._next_settings_check if self.settings.settings_file is not None else math.inf]
                           ) - time.monotonic()
                if wait > 0 and not self._stop.is_set():
                    self._wake.wait(wait)

    def _deleted(self, project: int, error: Exception) -> bool:
        """Whether a pass failed because ``project`` was deleted (then it is dropped)."""
        if not isinstance(error, LabelStudioNotFound):
            return False
        try:
            exists = self.client.project_exists(project)
        except Exception as check:  # noqa: BLE001 (unknown: treated as any failed pass)
            log.debug("Project %s: could not tell whether it still exists (%s).", project, one_line(check))
            return False
        if not exists:
            self.drop_project(project, "deleted in Label Studio")
        return not exists
