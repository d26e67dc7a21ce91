"""The writer: refreshes requested tasks on a few threads, coalesced, batched, retried, counted.

Requests for one task coalesce, one task is never refreshed twice at once (so
an older write cannot land after a newer one from here), a failure is retried
with backoff and then left to the next pass, and every outcome is counted by
the task's monitor (:meth:`plugin.keeper.monitor.ProjectMonitor.record_refreshes`).
A pass's work (background) waits behind every event's: it starts only while
no event is being served, runs on every worker but one while events come (one
worker, when there is only one; every worker after :data:`LULL` seconds
without an event, as once annotation stops), in batches no longer than Label
Studio writes within :data:`plugin.keeper.passes.FRESH_FOR` at its recent pace
(so that a batch's read is merged into as read), and a batch stops before its
next write when an event comes, its rest queued again; so that an annotator's
scores follow within a second while a pass rewrites drifted tasks. Events'
batches, which share one read, are bounded the same way once a write's time is
known (:func:`batch_size`); an event whose task needs no read is a batch of
its own, so that it never waits behind another's write while a worker is free.
"""

from __future__ import annotations

import heapq
import logging
import math
import threading
import time
from collections import Counter, deque
from collections.abc import Callable, Collection, Iterable, Mapping
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field

from plugin.keeper.monitor import Outcome, ProjectMonitor, percentiles_ms
from plugin.keeper.passes import BATCH, FRESH_FOR, LEFT, READ_AGAIN, refresh_tasks
from plugin.labelstudio.client import LabelStudioClient

__all__ = ["BACKGROUND_BATCH", "LULL", "TaskWriter", "batch_size"]

log = logging.getLogger("ls_agreement.writer")

BACKGROUND_BATCH = 8
"""Most tasks of a pass's work in one batch (fewer when Label Studio writes slowly: :func:`batch_size`)."""
LULL = 5.0
"""Seconds without an event after which a pass's work runs on every worker, not every worker but one."""


def batch_size(write_seconds: float, *, most: int = BACKGROUND_BATCH) -> int:
    """Tasks in one batch when Label Studio takes ``write_seconds`` for a write.

    As many as it writes within :data:`plugin.keeper.passes.FRESH_FOR`, so that each task is written from its
    batch's read rather than read again (a read more for each); one at least, ``most`` at most
    (:data:`BACKGROUND_BATCH` for a pass's work, which stops only between writes).

    >>> batch_size(0.1), batch_size(0.7), batch_size(5.0), batch_size(0.1, most=100)
    (8, 4, 1, 30)
    """
    return max(1, min(most, int(FRESH_FOR / max(write_seconds, 1e-3))))


@dataclass(order=True)
class _Due:
    background: bool  # a pass's work waits behind every event's
    when: float
    project: int = field(compare=False)
    task: int = field(compare=False)
    attempt: int = field(compare=False, default=0)
    alone: bool = field(compare=False, default=False)  # an event's task that needs no read: a batch of its own


class TaskWriter:
    """Refreshes requested tasks on a few threads.

    Refreshes requested tasks on a few threads: coalesced, batched, one at a time per task, retried, counted.

    Parameters
    ----------
    client : LabelStudioClient
    monitors : mapping of int to ProjectMonitor
    workers : int
        Refreshes run at once (Label Studio has no bulk endpoint for meta).
    coalesce_seconds : float
        How long a request waits for more on the same task.
    retry_delays : sequence of float
        Waits before each further attempt after a failure; then the task is
        left to the next full pass (it is stale, so the pass writes it).
    batch : int
        Most tasks of one project read in one request.
    dry_run : bool
        Compute and count, write nothing.
    on_event : callable, optional
        Told ``(project, parts)`` of each event's refresh that ended with its task's meta right: the seconds of
        each of :data:`plugin.keeper.monitor.EVENT_PARTS` (the monitor keeps them too, for ``/status``).
    """

    def __init__(self, client: LabelStudioClient, monitors: Mapping[int, ProjectMonitor], *, workers: int = 4,
                 coalesce_seconds: float = 0.05, retry_delays: Iterable[float] = (1.0, 5.0, 20.0),
                 batch: int = BATCH, dry_run: bool = False,
                 on_event: Callable[[int, dict[str, float]], None] | None = None) -> None:
        self._client = client
        self._monitors = monitors
        self._workers = max(1, workers)
        self._coalesce = coalesce_seconds
        self._retry_delays = tuple(retry_delays)
        self._dry_run = dry_run
        self._on_event = on_event
        self._condition = threading.Condition()
        self._queue: list[_Due] = []
        self._queued: dict[tuple[int, int], float | None] = {}  # (project, task) -> when its first event came
        self._running: set[tuple[int, int]] = set()
        self._jobs = 0
        self._background_jobs = 0  # a pass's work leaves one worker free for events (when there are two or more)
        self._background_lanes = max(1, self._workers - 1)
        self._last_event = -math.inf  # when an event last asked for a refresh (time.monotonic)
        self._write_seconds = FRESH_FOR  # Label Studio's recent time for a write (an average that forgets); unknown
        self._writes_timed = 0  # at first, so a pass's first batch is of one task
        self._batch = max(1, batch)
        self._latencies: deque[float] = deque(maxlen=1000)
        self._stopping = False
        self._thread = threading.Thread(target=self._run, name="task-writer", daemon=True)
        self.outcomes: Counter[str] = Counter()
        self._written_so_far = 0

    # --- lifecycle ---

    def start(self) -> None:
        self._thread.start()

    def alive(self) -> bool:
        return self._thread.is_alive()

    def stop(self, timeout: float = 10.0) -> None:
        """Stop after the refreshes in flight; queued ones are dropped (the next start's pass finds them)."""
        with self._condition:
            self._stopping = True
            self._queue.clear()
            self._queued.clear()
            self._condition.notify_all()
        if self._thread.is_alive():
            self._thread.join(timeout=timeout)

    # --- requests ---

    def request(self, project: int, tasks: Iterable[int], *, since: float | None = None,
                background: bool = False, alone: Collection[int] = ()) -> None:
        """Refresh ``tasks`` of ``project`` soon; ``since`` is when the event that asked came (for latency).

        ``background`` work (a pass's stale tasks) waits behind every event's, and is done in small batches,
        so that an annotator's scores follow within a second while a pass rewrites drifted tasks. An event's
        tasks in ``alone`` need no read (:meth:`plugin.keeper.event_path.EventPath.needs_read`): each is a batch
        of its own, written as soon as a worker is free rather than after the writes of a batch that shares a read.
        """
        now = time.monotonic()
        with self._condition:
            if since is not None:
                self._last_event = now
            for task in tasks:
                key = (project, task)
                if key not in self._queued:
                    self._queued[key] = since
                    heapq.heappush(self._queue, _Due(background, now + self._coalesce, project, task,
                                                     alone=task in alone))
                elif since is not None and self._queued[key] is None:
                    self._queued[key] = since
                    # an event for a task a pass queued: it moves to the front
                    heapq.heappush(self._queue, _Due(False, now + self._coalesce, project, task, alone=task in alone))
            self._condition.notify_all()

    @property
    def pending(self) -> int:
        """Tasks queued or being refreshed."""
        with self._condition:
            return len(set(self._queued) | self._running)

    def pending_for(self, project: int) -> int:
        """Tasks of ``project`` queued or being refreshed."""
        with self._condition:
            return len({key for key in set(self._queued) | self._running if key[0] == project})

    def wait_idle(self, timeout: float) -> bool:
        """Block until nothing is queued or running (retries included); False on timeout."""
        deadline = time.monotonic() + timeout
        with self._condition:
            while self._queued or self._running:
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    return False
                self._condition.wait(min(remaining, 0.5))
        return True

    def outcome_counts(self) -> dict[str, int]:
        """Every refresh's outcome so far, counted (``/status`` ``writes``)."""
        with self._condition:
            return dict(self.outcomes)

    def latency(self) -> dict[str, float | int | None]:
        """Median and 95th percentile, in ms, from an event to its task's meta being right (last 1,000)."""
        with self._condition:
            return percentiles_ms(self._latencies)

    # --- the work ---

    def forget(self, project: int) -> None:
        """Drop what is queued for ``project`` (no longer monitored); refreshes in flight end as they will."""
        with self._condition:
            for key in [key for key in self._queued if key[0] == project]:
                del self._queued[key]  # their heap entries are skipped as stale
            self._condition.notify_all()

    def _task_done(self, task: int, outcome: Outcome) -> None:
        with self._condition:  # a task written again after Label Studio's answer counts once, when it is
            self._written_so_far += not isinstance(outcome, Exception) and outcome != READ_AGAIN

    @property
    def written_so_far(self) -> int:
        """Tasks whose write (or finding nothing to write) is done, counted as each is: progress task by task."""
        with self._condition:
            return self._written_so_far

    def _events_in_flight(self) -> bool:
        """Whether an event's refresh runs, or is due now (call with the condition held)."""
        # the heap's first entry is an event's whenever one is queued (events sort before background work)
        return self._jobs > self._background_jobs or bool(
            self._queue and not self._queue[0].background and self._queue[0].when <= time.monotonic())

    def _lanes_for_background(self, now: float) -> int:
        """Workers a pass's work may take: every one after a :data:`LULL`, else every one but one (call with the
        condition held)."""
        return self._workers if now - self._last_event >= LULL else self._background_lanes

    def _alone(self, due: _Due, now: float) -> bool:
        """Whether ``due`` is a batch of its own: an event's task that needs no read, its event no more than
        :data:`plugin.keeper.passes.FRESH_FOR` old (an older one is read with its batch, in one request, rather
        than each on its own before its write; call with the condition held)."""
        since = self._queued.get((due.project, due.task))
        return due.alone and since is not None and now - since <= FRESH_FOR

    def _no_event_waits(self) -> bool:
        """Whether a background batch goes on to its next write: no event is being served or due, and no stop."""
        with self._condition:
            return not self._stopping and not self._events_in_flight()

    def _job(self, project: int, batch: list[tuple[_Due, float | None]]) -> None:
        monitor = self._monitors.get(project)
        outcomes: dict[int, Outcome]
        if monitor is None:  # dropped while the batch waited
            with self._condition:
                for due, _ in batch:
                    self.outcomes["project no longer monitored"] += 1
                    self._running.discard((project, due.task))
                self._jobs -= 1
                self._background_jobs -= batch[0][0].background
                self._condition.notify_all()
            return
        background = batch[0][0].background
        timings: dict[int, dict[str, float]] = {}
        try:
            outcomes = dict(refresh_tasks(self._client, monitor, [due.task for due, _ in batch],
                                          dry_run=self._dry_run,
                                          go_on=self._no_event_waits if background else None,
                                          on_task=self._task_done, timings=timings))
        except Exception as error:  # noqa: BLE001 (the read failed: every task of the batch is retried)
            outcomes = {due.task: error for due, _ in batch}
        left = [due for due, _ in batch if outcomes.get(due.task) == LEFT]  # queued again, behind the events
        outcomes = {task: outcome for task, outcome in outcomes.items() if outcome != LEFT}
        writes = [parts["write"] for task, parts in timings.items() if outcomes.get(task) == "written"]
        retries = [due for due, _ in batch if due.task in outcomes
                   and isinstance(outcomes[due.task], Exception) and due.attempt < len(self._retry_delays)]
        given_up = monitor.record_refreshes(outcomes, retrying=[due.task for due in retries])
        failed_for_good = [(due, given_up[due.task]) for due, _ in batch if due.task in given_up]
        now = time.monotonic()
        events: list[dict[str, float]] = []  # each event's way to its task's meta, by part
        with self._condition:
            for write in writes:
                self._writes_timed += 1
                self._write_seconds += max(0.2, 1 / self._writes_timed) * (write - self._write_seconds)
            for due in left:
                self._running.discard((project, due.task))
                if not self._stopping and (project, due.task) not in self._queued:
                    self._queued[(project, due.task)] = None
                    heapq.heappush(self._queue, _Due(True, now, project, due.task, due.attempt))
            for due, since in batch:
                if due.task not in outcomes:  # left for events: queued again above
                    continue
                outcome = outcomes[due.task]
                self.outcomes["failed" if isinstance(outcome, Exception) else outcome] += 1
                key = (project, due.task)
                if outcome == READ_AGAIN and not self._stopping:  # at once, from a read, as its event's
                    self._running.discard(key)
                    if self._queued.get(key) is None:  # not queued since, or by a pass: this request stands for it
                        self._queued[key] = since
                        heapq.heappush(self._queue, _Due(since is None, now, project, due.task))
                    continue
                if since is not None and outcome in ("written", "unchanged"):
                    self._latencies.append(now - since)
                    parts = timings.get(due.task)
                    if parts is not None:
                        total = parts["done"] - since  # the wait: for a worker, and behind its batch's writes
                        events.append({"queue": max(0.0, total - parts["read"] - parts["scoring"] - parts["write"]),
                                       "read": parts["read"], "scoring": parts["scoring"], "write": parts["write"],
                                       "total": total})
                self._running.discard((project, due.task))
            for due in retries:
                if not self._stopping:
                    self._queued.setdefault((project, due.task), None)
                    heapq.heappush(self._queue, _Due(due.background, now + self._retry_delays[due.attempt], project,
                                                     due.task, due.attempt + 1))
            self._jobs -= 1
            self._background_jobs -= batch[0][0].background
            self._condition.notify_all()
        for due, reason in failed_for_good:
            log.warning("Task %s of project %s was not written after %d attempts: %s", due.task, project,
                        due.attempt + 1, reason)
        for parts in events:
            monitor.record_event_latency(parts)
            if self._on_event is not None:
                self._on_event(project, parts)

    def _run(self) -> None:
        with ThreadPoolExecutor(max_workers=self._workers, thread_name_prefix="refresh") as pool:
            while True:
                with self._condition:
                    while not self._stopping:
                        now = time.monotonic()
                        busy = self._jobs >= self._workers or (
                            bool(self._queue) and self._queue[0].background
                            and (self._background_jobs >= self._lanes_for_background(now)
                                 or self._jobs > self._background_jobs))
                        if self._queue and self._queue[0].when <= now and not busy:
                            break
                        wait = self._queue[0].when - now if self._queue and not busy else None
                        self._condition.wait(wait if wait is None or wait > 0 else 0.01)
                    if self._stopping:
                        return
                    project, background = self._queue[0].project, self._queue[0].background
                    batch: list[tuple[_Due, float | None]] = []
                    later: list[_Due] = []
                    now = time.monotonic()
                    # Spread what is ready over the free workers: a batch's writes run one after another, and a
                    # pass's batches stay small, so that an event never waits long for a worker. No batch is longer
                    # than Label Studio writes within FRESH_FOR: past it each write would read its task again, and
                    # a queue that grew (Label Studio slowed by a full read) would cost a read more an event.
                    ready = sum(1 for due in self._queue if due.when <= now and due.background == background)
                    if background:
                        longest = batch_size(self._write_seconds)
                    elif self._dry_run or not self._writes_timed:  # nothing written, or no write timed yet
                        longest = self._batch
                    else:
                        longest = batch_size(self._write_seconds, most=self._batch)
                    size = min(longest, max(1, -(-ready // max(1, self._workers - self._jobs))))
                    solo = False  # the batch is one event's task that needs no read
                    while (self._queue and self._queue[0].when <= now and self._queue[0].background == background
                           and len(batch) < size and not solo):
                        due = heapq.heappop(self._queue)
                        key = (due.project, due.task)
                        if key not in self._queued:  # a stale entry: the task moved to the front and was done
                            continue
                        alone = self._alone(due, now)
                        if batch and alone:  # its own batch, on the next free worker
                            later.append(due)
                            continue
                        if due.project != project or key in self._running or any(d.task == due.task
                                                                                   for d, _ in batch):
                            # another project's, or being refreshed: later, never two at once
                            later.append(due if due.project != project else
                                         _Due(due.background, now + self._coalesce, *key, due.attempt, due.alone))
                            continue
                        batch.append((due, self._queued.pop(key, None)))
                        self._running.add(key)
                        solo = alone
                    for due in later:
                        heapq.heappush(self._queue, due)
                    if not batch:
                        self._condition.wait(self._coalesce)
                        continue
                    self._jobs += 1
                    self._background_jobs += background
                try:
                    pool.submit(self._job, project, batch)
                except RuntimeError:  # the pool is shutting down
                    return
