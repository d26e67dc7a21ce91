"""The service's events: a bounded queue, and the thread that turns each event into refreshes.

An event names ids only (:mod:`plugin.labelstudio.events`); the processor finds the projects it concerns, asks the
writer to refresh the tasks it names, and counts what it cannot use. One event's failure is counted and a pass of
every project is asked for instead, which finds whatever the event announced.
"""

from __future__ import annotations

import logging
import queue
import threading
import time
from collections import Counter
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

from plugin.clock import now_iso
from plugin.keeper.monitor import ProjectMonitor
from plugin.labelstudio.errors import one_line
from plugin.labelstudio.events import Event
from plugin.mapping.labelconfig import parse_label_config

if TYPE_CHECKING:
    from plugin.keeper.writer import TaskWriter
    from plugin.labelstudio.client import LabelStudioClient

__all__ = ["BULK_DELETE", "MAX_QUEUED", "EventQueue"]

log = logging.getLogger("ls_agreement.service")

BULK_DELETE = 200
"""A deletion naming more tasks than this runs a full pass instead of reading each task."""
MAX_QUEUED = 100_000
"""Events waiting to be turned into refreshes, at most (memory stays bounded under a flood)."""


class EventQueue:
    """Events waiting for the processor thread, and what became of them.

    Events waiting for the processor thread, and what became of them (counted per project and per reason).

    Parameters
    ----------
    client : LabelStudioClient
        For a PROJECT_UPDATED event's label config.
    writer : TaskWriter
        Refreshes the tasks an event names.
    monitors : callable
        The monitored projects now, by id.
    request_pass : callable
        Asks for a full pass of one project as soon as possible.
    on_error : callable
        Told ``(kind, reason)`` of an event that could not be applied.
    """

    def __init__(self, client: LabelStudioClient, writer: TaskWriter, *,
                 monitors: Callable[[], Mapping[int, ProjectMonitor]], request_pass: Callable[[int], None],
                 on_error: Callable[[str, str], None]) -> None:
        self.client = client
        self.writer = writer
        self._monitors = monitors
        self._request_pass = request_pass
        self._on_error = on_error
        self.lock = threading.Lock()
        self.events: Counter[int] = Counter()
        self.last_event_at: dict[int, str] = {}
        self.ignored: Counter[str] = Counter()
        self._queue: queue.Queue[tuple[Event, float] | threading.Event | None] = queue.Queue(MAX_QUEUED)
        self._thread = threading.Thread(target=self._process, name="event-processor", daemon=True)

    def start(self) -> None:
        """Start the processor thread."""
        self._thread.start()

    def stop(self) -> None:
        """Stop the processor thread; events still queued are dropped.

        Stop the processor thread; events still queued are dropped (the next pass finds what they announced).
        """
        self._queue.put(None)
        if self._thread.is_alive():
            self._thread.join(timeout=10)

    def alive(self) -> bool:
        """Whether the processor thread runs."""
        return self._thread.is_alive()

    def submit(self, event: Event) -> None:
        """Queue a validated event (the webhook route answers right after).

        When :data:`MAX_QUEUED` events wait already, the event is dropped,
        counted, and a pass of every project is asked for instead, which
        finds whatever it announced.
        """
        try:
            self._queue.put_nowait((event, time.monotonic()))
        except queue.Full:
            self.ignore("event queue full (a pass was run instead)")
            for project in sorted(self._monitors()):
                self._request_pass(project)

    def wait_processed(self, timeout: float) -> None:
        """Block until every queued event has been turned into refresh requests."""
        done = threading.Event()
        self._queue.put(done)
        done.wait(timeout)

    def forget(self, project: int) -> None:
        """Drop a project's counts (it is no longer monitored)."""
        with self.lock:
            self.events.pop(project, None)
            self.last_event_at.pop(project, None)

    def ignore(self, reason: str, count: int = 1) -> None:
        """Count events that were of no use, by reason."""
        with self.lock:
            self.ignored[reason] += count

    def counts(self, project: int) -> dict[str, Any]:
        """A project's events and when its last one came."""
        with self.lock:
            return {"events": self.events[project], "last_event_at": self.last_event_at.get(project)}

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
                self._on_error(f"event {event.action} could not be applied", one_line(error))
                for project in sorted(self._monitors()):
                    self._request_pass(project)

    def _monitors_for(self, event: Event) -> list[ProjectMonitor]:
        monitors = dict(self._monitors())
        if event.project is not None:
            monitor = monitors.get(event.project)
            if monitor is None:
                self.ignore("event for a project this service does not monitor")
                return []
            return [monitor]
        found = [monitor for monitor in monitors.values() if monitor.knows(event)]
        if not found:
            self.ignore("event without a project, naming no known task or annotation")
        return found

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
            if named.unseen_annotations:
                self.ignore("deletion of an annotation this service never saw", named.unseen_annotations)
            if named.unknown_deletions:
                self.ignore("deletion of a task this service does not know", named.unknown_deletions)
            if len(deleted) > BULK_DELETE:
                self._request_pass(monitor.project)
            else:
                tasks.update(deleted)
            monitor.hold(event, tasks)
            self.writer.request(monitor.project, tasks, since=received,
                                alone=[task for task in tasks if not monitor.needs_read(task)])
            requested |= tasks
        return requested

    def _config_event(self, monitor: ProjectMonitor) -> None:
        """A project changed: re-map it if its label config did.

        A project changed: if its label config did, its events wait for a pass that re-maps it, asked for now.
        """
        controls = parse_label_config(self.client.label_config(monitor.project))
        if monitor.config_changed(controls):
            log.info("Project %s: its label config changed; re-mapping it before its next event is scored.",
                     monitor.project)
            self._request_pass(monitor.project)
