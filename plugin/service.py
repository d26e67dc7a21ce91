"""``ls-agreement serve``: keeps every task's agreement block right, fast on events and surely on a schedule.

An app factory (:func:`create_app`) with its state in one object it owns
(:class:`ServiceState`). Three threads do the work, and none of them dies of
one bad event or one failed task:

* the **processor** turns each webhook event (ids only, see
  :mod:`plugin.events`) into tasks to refresh;
* the **writer** (:class:`plugin.writer.TaskWriter`) refreshes them: reads
  the task from Label Studio, updates the project's state, writes the block
  when the fresh meta differs; coalesced, retried, counted;
* the **supervisor** registers the webhook (retrying while Label Studio is
  unreachable), then runs a full pass (:func:`plugin.reconcile.full_pass`) at
  start and every ``reconcile_interval`` seconds: whatever an event, a write
  or a restart lost, the next pass writes. A pass on a project whose tasks
  read as they were held computes nothing again (its stale tasks, who agrees
  with whom). Every ``discover_interval`` seconds
  it reads the project list: with ``all_projects`` a new project is monitored
  from then on, and a deleted project is dropped (its state, its queued
  writes), in one line of the log and of ``/status``. With ``state_dir``
  it restores each project's saved state before its first pass, which then
  reads only the tasks changed since, and saves the state after every pass
  that changed it (:mod:`plugin.saved_state`).

A PROJECT_UPDATED event makes the service read the project's label config; when
it changed, the project's events wait for the pass that re-maps it, asked for
at once (a pass finds a changed config by itself too).

The port listens before the webhook exists, and events that arrive before
the first pass has read the project are kept and applied after it.

Every route but ``/health`` needs the secret, in the ``X-Agreement-Secret``
header or as the path prefix ``/s/<secret>/`` (for the webhook Label
Studio's ML connection creates without custom headers); never in a query.
``/health`` says UP or DOWN and nothing else: DOWN (503) when a worker thread
has stopped or Label Studio has been unreachable for longer than
``unhealthy_after``, so a container's health check restarts the service.
Payloads are never logged or stored as received.
"""

from __future__ import annotations

import hmac
import logging
import math
import queue
import threading
import time
from collections import Counter, deque
from collections.abc import Iterator, Mapping
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from fastapi import APIRouter, Depends, FastAPI, HTTPException, Request
from fastapi.concurrency import run_in_threadpool
from fastapi.responses import HTMLResponse, JSONResponse, Response

from plugin import __version__
from plugin.clock import now_iso
from plugin.events import EVENTS, BadEvent, Event, parse_body, parse_event
from plugin.labelconfig import Control, parse_label_config
from plugin.labelstudio import LabelStudioClient, LabelStudioNotFound, annotator_names, one_line
from plugin.monitor import ProjectMonitor
from plugin.project_settings import ProjectOptions, ProjectSettings, read_project_settings
from plugin.reconcile import full_pass
from plugin.report import Report, project_report, report_json
from plugin.report.page import render_html
from plugin.review import below_ground_truth, ensure_ground_truth_tab, ensure_review_tab
from plugin.saved_state import StateFiles, state_path
from plugin.scoring import annotator_rows, named_rows
from plugin.settings import Connection, MappingOptions, ReviewOptions, ScoringOptions, SettingsError
from plugin.state import control_references
from plugin.writer import TaskWriter

__all__ = ["ServiceSettings", "ServiceState", "check_secret_strength", "create_app"]

log = logging.getLogger("ls_agreement.service")

SECRET_HEADER = "X-Agreement-Secret"
MARKER_HEADER = "X-Agreement-Service"
"""Set on every webhook this service registers (its value: the service's URL), so that a later start at another
URL, or a clean stop, finds this service's webhooks among everyone else's."""
BULK_DELETE = 200
"""A deletion naming more tasks than this runs a full pass instead of reading each task."""
PEOPLE_FOR = 300.0
"""Seconds the annotators' names are kept before Label Studio's users are read again."""
MAX_QUEUED = 100_000
"""Events waiting to be turned into refreshes, at most (memory stays bounded under a flood)."""
SETTINGS_CHECK = 2.0
"""Seconds between looks at the settings file (its modification time and size)."""
REMOVED_KEPT = 100
"""Projects dropped (deleted in Label Studio) that ``/status`` lists, the latest first."""


def _stamp(path: Path) -> tuple[int, int] | None:
    """The file's modification time and size (None when it cannot be seen): a change of either is a new file."""
    try:
        seen = path.stat()
    except OSError:
        return None
    return seen.st_mtime_ns, seen.st_size


def check_secret_strength(secret: str) -> None:
    """Refuse a weak webhook secret.

    Raises
    ------
    SettingsError
        For fewer than 16 characters, white space, or fewer than 8 distinct characters.
    """
    if len(secret) < 16:
        raise SettingsError("Set AGREEMENT_WEBHOOK_SECRET to a shared secret of at least 16 characters.")
    if any(char.isspace() for char in secret) or not secret.isprintable():
        raise SettingsError("AGREEMENT_WEBHOOK_SECRET must not hold white space or control characters.")
    if len(set(secret)) < 8:
        raise SettingsError("AGREEMENT_WEBHOOK_SECRET is too simple: use at least 8 different characters "
                            "(e.g. python -c 'import secrets; print(secrets.token_urlsafe(32))').")


@dataclass(frozen=True)
class ServiceSettings:
    """Everything the service needs, read once at the entry point.

    Attributes
    ----------
    projects : tuple of int
        Projects to monitor.
    all_projects : bool
        Monitor every project the token can see, and those created later
        (``serve --project all``); ``projects`` may then be empty.
    public_url : str
        The URL Label Studio reaches this service at (for its webhook).
    secret : str
        Shared secret of the webhook (``AGREEMENT_WEBHOOK_SECRET``).
    connection : Connection
    mapping, scoring, review : MappingOptions, ScoringOptions, ReviewOptions
    coalesce_seconds : float
        How long a refresh waits for more events on its task.
    reconcile_interval : float
        Seconds between passes.
    full_pass_every : int
        Every this many passes reads every task; the others read only the
        tasks Label Studio changed since the last read.
    read_rate : float, optional
        Tasks per second a full pass reads at most.
    unhealthy_after : float
        ``/health`` answers 503 once Label Studio has been unreachable this long.
    max_body : int
        Largest webhook body accepted, in bytes.
    retry_delays : tuple of float
        Waits before each further attempt of a failed refresh.
    keep_webhooks : bool
        Leave the service's webhooks in Label Studio on a clean stop (by default they are removed).
    discover_interval : float
        Seconds between reads of the project list (new projects with
        ``all_projects``; deleted ones always); at most ``reconcile_interval``.
    settings_file : Path, optional
        Per-project settings (:mod:`plugin.project_settings`) over
        ``mapping``, ``scoring`` and ``review``; read again when it changes.
    shard : tuple of (int, int), optional
        ``(K, N)``: this service is shard K of N and monitors only the
        projects it owns (:meth:`owns`), so that several services share a
        team's projects without touching each other's.
    state_dir : Path, optional
        Where each project's state is saved after a pass that changed it,
        and restored from at start (:mod:`plugin.saved_state`): a restarted
        service then reads only the tasks changed since.
    """

    projects: tuple[int, ...]
    public_url: str
    secret: str = field(repr=False)
    connection: Connection
    mapping: MappingOptions = field(default_factory=MappingOptions)
    scoring: ScoringOptions = field(default_factory=ScoringOptions)
    review: ReviewOptions = field(default_factory=ReviewOptions)
    coalesce_seconds: float = 0.02
    reconcile_interval: float = 300.0
    full_pass_every: int = 12
    read_rate: float | None = 200.0
    unhealthy_after: float = 300.0
    max_body: int = 16 * 2**20
    retry_delays: tuple[float, ...] = (1.0, 5.0, 20.0)
    keep_webhooks: bool = False
    all_projects: bool = False
    discover_interval: float = 60.0
    settings_file: Path | None = None
    shard: tuple[int, int] | None = None
    state_dir: Path | None = None

    def __post_init__(self) -> None:
        if not self.projects and not self.all_projects:
            raise SettingsError("Name the projects to monitor: --project ID (repeatable) or --project all.")
        if self.shard is not None:
            index, count = self.shard
            if not 1 <= index <= count:
                raise SettingsError(f"A shard is K/N with 1 <= K <= N; got {index}/{count}.")
            if self.projects and not any(self.owns(p) for p in self.projects):
                raise SettingsError(f"None of the projects named ({', '.join(map(str, self.projects))}) belongs to "
                                    f"shard {index}/{count}, which owns the ids {index}, {index + count}, "
                                    f"{index + 2 * count}, ...")
        if not self.discover_interval > 0:
            raise SettingsError("The interval between reads of the project list must be positive seconds.")
        if not (self.reconcile_interval > 0 and self.unhealthy_after > 0 and self.full_pass_every >= 1
                and (self.read_rate is None or self.read_rate > 0)):
            raise SettingsError("The reconcile interval (--reconcile-interval) and --unhealthy-after must be positive "
                                "seconds, --full-pass-every at least 1, and --read-rate at least 0 (0: no limit).")

    @property
    def state_files(self) -> StateFiles | None:
        """Where the projects' states are saved, signed with the webhook secret (None without ``state_dir``)."""
        if self.state_dir is None:
            return None
        return StateFiles(self.state_dir, secret=self.secret, source=self.connection.url)

    def owns(self, project: int) -> bool:
        """Whether this service monitors ``project``: always without a shard; shard K of N owns the ids K, K + N,
        K + 2N, ... (a fixed rule, so that replicas agree without talking to each other).

        >>> settings = ServiceSettings(projects=(), all_projects=True, public_url="", secret="", connection=None,
        ...                            shard=(2, 3))
        >>> [p for p in range(1, 10) if settings.owns(p)]
        [2, 5, 8]
        """
        if self.shard is None:
            return True
        index, count = self.shard
        return (project - 1) % count == index - 1


@dataclass
class ErrorCounts:
    """Errors by kind, each with its count and latest message: ``/status`` stays bounded however many distinct
    messages arrive (Label Studio's carry a unique error id), as the kinds are per project and per event action.

    >>> errors = ErrorCounts()
    >>> errors.add("project 3: pass failed", "404 (id 1)"); errors.add("project 3: pass failed", "404 (id 2)")
    >>> errors.as_dict()
    {'project 3: pass failed': {'count': 2, 'latest': '404 (id 2)'}}
    """

    counts: Counter[str] = field(default_factory=Counter)
    latest: dict[str, str] = field(default_factory=dict)

    def add(self, kind: str, message: str) -> None:
        self.counts[kind] += 1
        self.latest[kind] = message[:500]

    def __iter__(self) -> Iterator[str]:
        """Each kind with its latest message, as one line."""
        return iter(f"{kind}: {self.latest[kind]}" for kind in self.counts)

    def as_dict(self) -> dict[str, dict[str, Any]]:
        return {kind: {"count": n, "latest": self.latest[kind]} for kind, n in self.counts.items()}


class ServiceState:
    """The service's state: one monitor per project, the event queue, and the three threads."""

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
        self.writer = TaskWriter(client, self.monitors, workers=client.writers,
                                 coalesce_seconds=settings.coalesce_seconds, retry_delays=settings.retry_delays)
        self.lock = threading.Lock()
        self.events: Counter[int] = Counter()
        self.last_event_at: dict[int, str] = {}
        self.ignored: Counter[str] = Counter()
        self.bad_payloads: Counter[str] = Counter()
        self.rejected = 0
        self.errors = ErrorCounts()
        self.removed: deque[dict[str, Any]] = deque(maxlen=REMOVED_KEPT)
        self._people_cache: tuple[dict[str, str], float] = ({}, -math.inf)
        self._queue: queue.Queue[tuple[Event, float] | threading.Event | None] = queue.Queue(MAX_QUEUED)
        self._stop = threading.Event()
        self._wake = threading.Condition()
        self._pass_due: dict[int, float] = dict.fromkeys(named, 0.0)
        self._asked: set[int] = set()  # passes asked for while one ran: run again at once
        # with every project to monitor, the list is read first; otherwise after an interval (for deleted ones)
        self._next_discovery = 0.0 if settings.all_projects else time.monotonic() + min(
            settings.discover_interval, settings.reconcile_interval)
        self._registered: set[int] = set()
        self._processor = threading.Thread(target=self._process, name="event-processor", daemon=True)
        self._supervisor = threading.Thread(target=self._supervise, name="supervisor", daemon=True)

    # --- lifecycle ---

    def start(self, *, register: bool = True) -> None:
        """Start the threads; the supervisor registers the webhooks (unless told not to) and reads each project."""
        if not register:
            self._registered.update(self.monitors)
        self.writer.start()
        self._processor.start()
        self._supervisor.start()

    def stop(self) -> None:
        """Stop every thread; queued refreshes are dropped (the next start's pass finds what they would write)."""
        self._stop.set()
        with self._wake:
            self._wake.notify_all()
        self._queue.put(None)
        for thread in (self._processor, self._supervisor):
            if thread.is_alive():
                thread.join(timeout=10)
        self.writer.stop()
        if not self.settings.keep_webhooks:
            self._remove_webhooks()

    def _remove_webhooks(self) -> None:
        """A clean stop removes the webhooks this service registered, so Label Studio stops calling a dead address
        (each call waits inside an annotator's request); a failure is logged, never raised."""
        url = f"{self.settings.public_url.rstrip('/')}/webhook"
        for project in sorted(self._registered):
            try:
                removed = self.client.remove_webhooks(project, url=url, marker=MARKER_HEADER)
                log.info("Project %s: removed %d webhook(s) of this service on stopping.", project, removed)
            except Exception as error:  # noqa: BLE001 (stopping anyway: the next start at any URL removes it)
                log.warning("Project %s: its webhook was left in place (%s).", project, one_line(error))

    def healthy(self) -> bool:
        """Whether every thread runs and Label Studio has answered within ``unhealthy_after``."""
        threads = self._processor.is_alive() and self._supervisor.is_alive() and self.writer.alive()
        return threads and self.client.reachability.unreachable_for() < self.settings.unhealthy_after

    def request_pass(self, project: int) -> None:
        """Run a full pass of ``project`` as soon as possible (again after the one running, if one is)."""
        with self._wake:
            if project in self._pass_due:
                self._pass_due[project] = 0.0
                self._asked.add(project)
            self._wake.notify_all()

    def request_passes(self) -> None:
        """Run a full pass of every monitored project as soon as possible."""
        for project in self.projects():
            self.request_pass(project)

    def projects(self) -> list[int]:
        """The projects monitored now."""
        with self.lock:
            return sorted(self.monitors)

    # --- projects that come and go ---

    def _new_monitor(self, project: int) -> ProjectMonitor:
        options = self._project_settings.for_project(project)
        return ProjectMonitor(project, mapping=options.mapping, scoring=options.scoring, review=options.review)

    def add_project(self, project: int) -> bool:
        """Monitor ``project`` from now on (its webhook and first pass follow at once); False if it is already, or
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
        """Stop monitoring ``project``: its state and queued writes are dropped, and it is listed in ``/status``.

        Its webhook went with it (Label Studio deletes a project's webhooks with the project).
        """
        with self.lock:
            if self.monitors.pop(project, None) is None:
                return
            self.removed.appendleft({"project": project, "at": now_iso(), "reason": reason})
            self.events.pop(project, None)
            self.last_event_at.pop(project, None)
        with self._wake:
            self._pass_due.pop(project, None)
            self._asked.discard(project)
        self._registered.discard(project)
        self.writer.forget(project)
        if self.settings.state_dir is not None:
            try:
                state_path(self.settings.state_dir, project).unlink(missing_ok=True)
            except OSError as error:
                self._state_file_error(project, "saved state not removed", error)
        log.info("Project %s: no longer monitored (%s).", project, reason)

    def discover(self) -> tuple[list[int], list[int]]:
        """Read the project list: monitor the new projects (with ``all_projects``), drop the deleted ones.

        A project missing from the list is dropped only once Label Studio answers 404 for it.

        Returns
        -------
        added, dropped : list of int
        """
        seen = set(self.client.project_ids())
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
            with self.lock:
                self.errors.add("settings file not applied", str(error))
            log.warning("The settings file was not applied, the settings in use are kept: %s", error)
            return False
        self._project_settings = settings
        with self.lock:
            monitors = sorted(self.monitors.items())
        for project, monitor in monitors:
            options = settings.for_project(project)
            if monitor.options() == options:
                continue
            if monitor.review != options.review:
                self._registered.discard(project)  # its tabs are set again with the next pass
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
            with self.lock:
                self.errors.add("project list could not be read", one_line(error))

    def wait_ready(self, timeout: float) -> bool:
        """Block until every project has been read once and its stale tasks requested (for tests and benchmarks)."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            with self.lock:
                monitors = list(self.monitors.values())
            if all(m.passes > 0 for m in monitors):
                return True
            time.sleep(0.05)
        return False

    def wait_processed(self, timeout: float) -> None:
        """Block until every queued event has been turned into refresh requests."""
        done = threading.Event()
        self._queue.put(done)
        done.wait(timeout)

    # --- the supervisor: webhooks and full passes ---

    def _register(self, project: int) -> None:
        url = f"{self.settings.public_url.rstrip('/')}/webhook"
        self.client.ensure_webhook(project, url=url, actions=EVENTS, marker=MARKER_HEADER,
                                   headers={SECRET_HEADER: self.settings.secret, MARKER_HEADER: url})
        with self.lock:
            review = self.monitors[project].review
        ensure_review_tab(self.client, project, review)
        self._registered.add(project)

    def _run_pass(self, project: int) -> None:
        with self.lock:
            monitor = self.monitors[project]
        controls = None
        files = self.settings.state_files
        if files is not None and not monitor.saved_state():  # its first pass: none tried yet
            controls = parse_label_config(self.client.label_config(project))
            self._restore(monitor, files, controls)
        every = max(1, self.settings.full_pass_every)
        incremental = (monitor.restored() and every > 1) or monitor.passes % every != 0
        report = full_pass(self.client, monitor, controls=controls, max_rate=self.settings.read_rate,
                           incremental=incremental)
        self.writer.request(project, report.stale, background=True)
        people = self._people()
        source = (monitor.version(), people)
        if monitor.published_from() == source:  # the tasks and names as last published: who agrees with whom stands
            references = monitor.publish(None)
        else:
            mapped = monitor.mapped()  # only the rows: who disagrees is computed after the lock is released
            inputs, authors = monitor.reference_inputs()
            references = {name: control_references(rows, authors, level=level, categories=categories,
                                                   scoring=monitor.scoring, people=people)
                          for name, (rows, level, categories) in inputs.items()}
            references = monitor.publish(
                {name: named_rows(annotator_rows(control.rows), people) for name, control in mapped.items()},
                references={name: block for name, block in references.items() if block}, source=source)
        if monitor.scoring.min_gt_accuracy is not None:
            ensure_ground_truth_tab(self.client, project, monitor.review, below_ground_truth(references))
        log.info("Project %s: %s pass read %d tasks in %.1f s; %d to write.", project, report.kind, report.n_tasks,
                 report.seconds.get("read", 0.0), len(report.stale))
        if files is not None:
            self._save(monitor, files)

    def _restore(self, monitor: ProjectMonitor, files: StateFiles, controls: Mapping[str, Control]) -> None:
        """Put the project's saved state in place (:meth:`ProjectMonitor.restore_saved`) and say what happened."""
        started = time.perf_counter()
        refused = monitor.restore_saved(files, controls)
        if refused is not None:
            log.warning("Project %s: every task is read, as its saved state is not used: %s", monitor.project,
                        refused)
        elif monitor.restored():
            restored = monitor.saved_state()["restored"]
            log.info("Project %s: restored %d tasks saved at %s in %.1f s; reading the tasks changed since.",
                     monitor.project, restored["n_tasks"], restored["saved_at"], time.perf_counter() - started)

    def _save(self, monitor: ProjectMonitor, files: StateFiles) -> None:
        """Save the project's state if it changed since it was last saved (or restored); a save that fails is the
        project's error, and the next pass that changes the state tries again."""
        try:
            monitor.save_changes(files)
        except Exception as error:  # noqa: BLE001 (a full disk, memory: the service goes on without the file)
            self._state_file_error(monitor.project, "state not saved", error)

    def _state_file_error(self, project: int, what: str, error: Exception) -> None:
        """Count a failure with a project's saved state in ``/status`` ``errors`` and log it."""
        reason = one_line(error)
        with self.lock:
            self.errors.add(f"project {project}: {what}", reason)
        log.warning("Project %s: %s (%s).", project, what, reason)

    def _people(self) -> dict[str, str]:
        """Annotator id -> name and email, read at most every :data:`PEOPLE_FOR` seconds; the last answer (or none:
        ids still identify the annotators) when Label Studio will not tell."""
        with self.lock:
            people, read_at = self._people_cache
        if time.monotonic() - read_at < PEOPLE_FOR:
            return people
        people = annotator_names(self.client, otherwise=people)
        with self.lock:
            self._people_cache = (people, time.monotonic())
        return people

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
                    if project not in self._registered:
                        self._register(project)
                    self._run_pass(project)
                    backoff.pop(project, None)
                    next_due = time.monotonic() + self.settings.reconcile_interval
                except Exception as error:  # noqa: BLE001 (Label Studio down, a bad config: retried, counted)
                    if self._deleted(project, error):
                        continue
                    delay = min(backoff.get(project, 0.5) * 2, 30.0, self.settings.reconcile_interval)
                    backoff[project] = delay
                    reason = one_line(error)
                    with self.lock:
                        self.errors.add(f"project {project}: pass failed", reason)
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

    # --- events ---

    def submit(self, event: Event) -> None:
        """Queue a validated event (the webhook route answers right after).

        When :data:`MAX_QUEUED` events wait already, the event is dropped,
        counted, and a pass of every project is asked for instead, which
        finds whatever it announced.
        """
        try:
            self._queue.put_nowait((event, time.monotonic()))
        except queue.Full:
            self._ignore("event queue full (a pass was run instead)")
            self.request_passes()

    def _process(self) -> None:
        while True:
            entry = self._queue.get()
            if entry is None:
                return
            if isinstance(entry, threading.Event):
                entry.set()
                continue
            event, received = entry
            try:
                self.apply(event, received=received)
            except Exception as error:  # noqa: BLE001 (one event's failure is counted; the pass repairs)
                with self.lock:
                    self.errors.add(f"event {event.action} could not be applied", one_line(error))
                self.request_passes()

    def _monitors_for(self, event: Event) -> list[ProjectMonitor]:
        with self.lock:
            monitors = dict(self.monitors)
        if event.project is not None:
            monitor = monitors.get(event.project)
            if monitor is None:
                self._ignore("event for a project this service does not monitor")
                return []
            return [monitor]
        found = [monitor for monitor in monitors.values() if monitor.knows(event)]
        if not found:
            self._ignore("event without a project, naming no known task or annotation")
        return found

    def _ignore(self, reason: str, count: int = 1) -> None:
        with self.lock:
            self.ignored[reason] += count

    def apply(self, event: Event, *, received: float | None = None) -> set[int]:
        """Turn one event into refresh requests; return the tasks requested."""
        requested: set[int] = set()
        for monitor in self._monitors_for(event):
            with self.lock:
                self.events[monitor.project] += 1
                self.last_event_at[monitor.project] = now_iso(timespec="milliseconds")
            if event.action == "PROJECT_UPDATED":
                self._config_event(monitor)
                continue
            named = monitor.event_tasks(event)
            tasks, deleted = named.tasks, named.deleted
            for _ in range(named.unseen_annotations):
                self._ignore("deletion of an annotation this service never saw")
            if named.unknown_deletions:
                self._ignore("deletion of a task this service does not know", named.unknown_deletions)
            if len(deleted) > BULK_DELETE:
                self.request_pass(monitor.project)
            else:
                tasks.update(deleted)
            self.writer.request(monitor.project, tasks, since=received)
            requested |= tasks
        return requested

    def _config_event(self, monitor: ProjectMonitor) -> None:
        """A project changed: if its label config did, its events wait for a pass that re-maps it, asked for now."""
        controls = parse_label_config(self.client.label_config(monitor.project))
        if monitor.config_changed(controls):
            log.info("Project %s: its label config changed; re-mapping it before its next event is scored.",
                     monitor.project)
            self.request_pass(monitor.project)

    # --- what it shows ---

    def project_status(self, monitor: ProjectMonitor) -> dict[str, Any]:
        out = monitor.status()
        with self._wake:
            due = self._pass_due.get(monitor.project, 0.0)
        out["next_pass_in"] = round(max(0.0, due - time.monotonic()), 1)
        with self.lock:
            out["events"] = self.events[monitor.project]
            out["last_event_at"] = self.last_event_at.get(monitor.project)
        out["pending_writes"] = self.writer.pending_for(monitor.project)
        return out

    def report(self, project: int | None) -> Report:
        """The admin report of a monitored project, from the state as it stands (no read of Label Studio
        beyond the users' names).

        Raises
        ------
        LookupError
            If the project is not monitored (or, with several, none was named).
        RuntimeError
            If the project has not been read yet.
        """
        with self.lock:
            monitors = dict(self.monitors)
        if project is None and len(monitors) == 1:
            project = next(iter(monitors))
        monitor = monitors.get(project) if project is not None else None
        if monitor is None:
            raise LookupError(f"Name one of the monitored projects: ?project={'|'.join(map(str, sorted(monitors)))}.")
        people = self._people()
        snapshot = monitor.snapshot()  # only the snapshot: the scoring and drawing happen after the lock is released
        if snapshot is None:
            raise RuntimeError(f"Project {project} has not been read yet; try again in a moment.")
        return project_report(snapshot, project=monitor.project, url=self.settings.connection.url,
                              generated_at=now_iso(timespec="milliseconds"), people=people)

    def status(self) -> dict[str, Any]:
        reachability = self.client.reachability
        unreachable = reachability.unreachable_for()
        with self.lock:
            service = {"events_ignored": dict(self.ignored), "bad_payloads": dict(self.bad_payloads),
                       "rejected_requests": self.rejected, "errors": self.errors.as_dict()}
            monitors = sorted(self.monitors.items())
            removed = list(self.removed)
        return {
            "projects": {str(p): self.project_status(m) for p, m in monitors},
            "all_projects": self.settings.all_projects,
            "shard": "{}/{}".format(*self.settings.shard) if self.settings.shard else None,
            "projects_removed": removed,
            "healthy": self.healthy(),
            "label_studio": {"reachable": unreachable == 0.0, "unreachable_for": round(unreachable, 1),
                             "last_error": reachability.last_error},
            "writes": dict(self.writer.outcomes), "write_latency_ms": self.writer.latency(),
            **service, "version": __version__,
        }


async def _read_body(request: Request, limit: int) -> bytes:
    """The request body, refused (413) as soon as it passes ``limit`` bytes, while streaming."""
    declared = request.headers.get("content-length")
    if declared is not None and declared.isdigit() and int(declared) > limit:
        raise HTTPException(status_code=413, detail="The payload is larger than the service accepts.")
    chunks, size = [], 0
    async for chunk in request.stream():
        size += len(chunk)
        if size > limit:
            raise HTTPException(status_code=413, detail="The payload is larger than the service accepts.")
        chunks.append(chunk)
    return b"".join(chunks)


def create_app(settings: ServiceSettings, client: LabelStudioClient, *, register: bool = True) -> FastAPI:
    """The web service; its state is ``app.state.agreement`` (a :class:`ServiceState`)."""
    check_secret_strength(settings.secret)
    state = ServiceState(settings, client)
    expected = settings.secret.encode()

    @asynccontextmanager
    async def lifespan(app: FastAPI):  # type: ignore[no-untyped-def]
        state.start(register=register)
        yield
        state.stop()

    app = FastAPI(title="label-studio-agreement", version=__version__, lifespan=lifespan,
                  docs_url=None, redoc_url=None, openapi_url=None)
    app.state.agreement = state

    def authorized(request: Request) -> None:
        given = request.path_params.get("secret")
        if given is None:
            given = request.headers.get(SECRET_HEADER)
        if given is None or not hmac.compare_digest(given.encode(), expected):
            with state.lock:
                state.rejected += 1
            raise HTTPException(status_code=401, detail="Wrong or missing secret.")

    guarded = APIRouter(dependencies=[Depends(authorized)])

    @guarded.post("/webhook")
    async def webhook(request: Request) -> JSONResponse:
        body = await _read_body(request, settings.max_body)
        try:
            event = await run_in_threadpool(lambda: parse_event(parse_body(body)))
        except BadEvent as error:
            with state.lock:
                state.bad_payloads[str(error)] += 1
            raise HTTPException(status_code=400, detail=str(error)) from None
        if event is None:
            return JSONResponse({"status": "ignored"})
        state.submit(event)
        return JSONResponse({"status": "accepted"})

    @guarded.get("/status")
    def status() -> dict[str, Any]:
        return state.status()

    @guarded.get("/report")
    def report(project: int | None = None, format: str = "html", table: str = "tasks") -> Response:
        try:
            built = state.report(project)
        except LookupError as error:
            raise HTTPException(status_code=404, detail=str(error)) from None
        except RuntimeError as error:
            raise HTTPException(status_code=503, detail=str(error)) from None
        if format == "html":
            return HTMLResponse(render_html(built))
        if format == "json":
            return JSONResponse(report_json(built))
        if format == "csv" and table in built.tables():
            return Response(built.tables()[table].to_csv(index=False), media_type="text/csv")
        raise HTTPException(status_code=400, detail="Ask for format=html, format=json, or format=csv with table="
                                                    f"one of {', '.join(built.tables())}.")

    @guarded.post("/setup")
    def setup() -> dict[str, str]:
        return {"model_version": f"agreement-{__version__}"}

    @guarded.post("/predict")
    def predict() -> dict[str, list[Any]]:
        return {"results": []}

    def health() -> JSONResponse:
        if state.healthy():
            return JSONResponse({"status": "UP"})
        return JSONResponse({"status": "DOWN"}, status_code=503)

    app.add_api_route("/health", health, methods=["GET"])
    app.add_api_route("/s/{secret}/health", health, methods=["GET"])
    app.include_router(guarded)
    app.include_router(guarded, prefix="/s/{secret}")
    return app

