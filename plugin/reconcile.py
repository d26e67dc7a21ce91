"""Compute, diff, write: the one way scores reach Label Studio, for ``sync``, ``serve`` and the report.

Label Studio is the truth; what this service believes can be lost or wrong (a
webhook that never came, a write that failed or landed late, a restart). So
every write follows the same steps:

1. **Refresh** a task: read it from Label Studio (its annotations and its meta
   as they are now), and replace it in the project's state. An event only
   says which task to refresh; nothing of a payload beyond ids is believed.
2. **Compute** the agreement block the task should carry.
3. **Diff** it against the meta just read, and **write** the merged meta only
   when the block differs (alpha within its tolerance). Keys other clients
   keep in meta survive, since the merge is into that fresh read.

A **pass** reads every task, or only those Label Studio changed since the last
read (page by page, each page retried, at a bounded rate), brings the state up
to date, and refreshes every task whose meta differs from its block: stale scores, failed or lost writes, tasks whose
alpha drifted with the project's expected disagreement. ``sync`` is one pass;
``serve`` runs events (fast) and passes on a schedule (the guarantee).

:class:`TaskWriter` runs refreshes on a few threads: requests for one task
coalesce, one task is never refreshed twice at once (so an older write cannot
land after a newer one from here), a failure is retried with backoff and then
left to the next pass, and every outcome is counted.
"""

from __future__ import annotations

import heapq
import logging
import threading
import time
from collections import Counter, deque
from collections.abc import Callable, Iterable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

from plugin.labelconfig import Control, parse_label_config
from plugin.labelstudio import LabelStudioClient, LabelStudioError
from plugin.settings import MappingOptions, ReviewOptions, ScoringOptions
from plugin.state import ProjectState
from plugin.writeback import TaskAsRead, needed_write

__all__ = ["PassReport", "ProjectMonitor", "TaskWriter", "full_pass", "refresh_tasks", "stale_tasks"]

log = logging.getLogger("ls_agreement.reconcile")

Progress = Callable[[str, int, int], None]
"""``progress(stage, done, total)``: a stage is "fetch" or "write"."""


def now_iso() -> str:
    """The time written into a block's ``updated_at``."""
    return datetime.now(UTC).isoformat(timespec="seconds")


def percentiles_ms(values: Iterable[float]) -> dict[str, float | int | None]:
    """Median and 95th percentile of durations in seconds, in ms, with their count."""
    ordered = sorted(values)
    if not ordered:
        return {"p50": None, "p95": None, "n": 0}
    return {"p50": round(1000 * ordered[len(ordered) // 2], 1),
            "p95": round(1000 * ordered[min(len(ordered) - 1, int(0.95 * len(ordered)))], 1), "n": len(ordered)}


def one_line(error: BaseException) -> str:
    """An exception as one short line for counters and logs (never a payload, never a token)."""
    text = " ".join(str(error).split())[:200]
    if isinstance(error, LabelStudioError):  # already a sentence for the user
        return text
    return f"{type(error).__name__}: {text}" if text else type(error).__name__


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
    """

    started_at: str
    kind: str = "full"
    seconds: dict[str, float] = field(default_factory=dict)
    n_tasks: int = 0
    stale: list[int] = field(default_factory=list)
    rechecked: int = 0

    def as_dict(self) -> dict[str, Any]:
        return {"started_at": self.started_at, "kind": self.kind,
                "seconds": {k: round(v, 3) for k, v in self.seconds.items()},
                "n_tasks": self.n_tasks, "stale": len(self.stale), "rechecked": self.rechecked}


class ProjectMonitor:
    """One project's state behind a lock, with what happened to it.

    Parameters
    ----------
    project : int
    mapping, scoring : MappingOptions, ScoringOptions

    Attributes
    ----------
    state : ProjectState or None
        None until the first full pass has read the project.
    lock : threading.RLock
        Held around every use of :attr:`state`.
    deferred : set of int
        Tasks refreshed while a pass was reading (or before the first): they
        are refreshed again once the pass's state is in place.
    failures : dict of int to str
        Tasks whose last refresh failed for good, with the reason; the next
        pass writes them.
    annotators : dict of str to list of dict
        Per control, each annotator's agreement with the others as of the
        last pass, with names (``/status`` shows it).
    counters : Counter
        Outcomes of refreshes and events, by name.
    """

    def __init__(self, project: int, *, mapping: MappingOptions, scoring: ScoringOptions,
                 review: ReviewOptions | None = None) -> None:
        self.project = project
        self.mapping = mapping
        self.scoring = scoring
        self.review = review or ReviewOptions()
        self.lock = threading.RLock()
        self.state: ProjectState | None = None
        self.deferred: set[int] = set()
        self._reading = False
        self.failures: dict[int, str] = {}
        self.annotators: dict[str, list[dict[str, Any]]] = {}
        self.counters: Counter[str] = Counter()
        self.last_pass: PassReport | None = None
        self.passes = 0
        self.watermark: datetime | None = None
        self.windows: deque[float] = deque(maxlen=1000)

    def merge_window(self) -> dict[str, float | int | None]:
        """Median and 95th percentile, in ms, from reading a task's meta to Label Studio answering its write.

        Label Studio has no compare-and-swap for meta: a key another client
        writes into the same task within this window is overwritten.
        """
        with self.lock:
            return percentiles_ms(self.windows)

    def count(self, name: str, n: int = 1) -> None:
        with self.lock:
            self.counters[name] += n


FRESH_FOR = 3.0
"""Seconds a batch read's meta is merged into as it is; older, the task is read again just before its write."""
BATCH = 100
"""Most tasks read in one request when refreshing."""
BACKGROUND_BATCH = 8
"""Most tasks of a pass's work in one batch: its writes run one after another while events wait for a worker."""


def refresh_tasks(client: LabelStudioClient, monitor: ProjectMonitor, tasks: Sequence[int], *,
                  dry_run: bool = False) -> dict[int, str | Exception]:
    """Read ``tasks`` from Label Studio (one request), update the state, and write each block that differs.

    The meta of a task is merged into as read, if that read is less than
    :data:`FRESH_FOR` old; otherwise the task is read again just before its
    write (a batch with many writes), so another client's keys are lost only
    within a short window.

    Returns
    -------
    dict of int to str or Exception
        Per task: "written", "unchanged", "gone" (deleted since it was read),
        "not a task of this project" (deleted before it was ever read, or of
        another project: an event named it), "deferred" (the project was never
        read yet; the task is refreshed after the first pass), or the
        exception its write raised.

    Raises
    ------
    LabelStudioError
        If the tasks cannot be read (after the client's retries): no task of
        the batch was refreshed.
    """
    with monitor.lock:
        if monitor.state is None:
            monitor.deferred.update(tasks)
            return dict.fromkeys(tasks, "deferred")
    fresh = {task["id"]: task for task in client.tasks_by_id(monitor.project, tasks)
             if isinstance(task, Mapping) and task.get("id") in tasks}
    read_at = time.monotonic()
    out: dict[int, str | Exception] = {}
    with monitor.lock:
        state = monitor.state
        assert state is not None
        if monitor._reading:  # a pass is reading pages that may be older than this: refresh again after it
            monitor.deferred.update(tasks)
        for task in tasks:
            if task not in fresh or state.set_task(fresh[task]) is None:
                out[task] = "gone" if state.remove_task(task) else "not a task of this project"
        blocks = state.blocks([t for t in tasks if t not in out], updated_at=now_iso())
    for task, block in blocks.items():
        try:
            out[task] = _write(client, monitor, task, block, fresh[task], read_at, dry_run=dry_run)
        except Exception as error:  # noqa: BLE001 (this task's failure, reported to the caller)
            out[task] = error
    for task in tasks:
        out.setdefault(task, "unchanged")
    return out


def _write(client: LabelStudioClient, monitor: ProjectMonitor, task: int, block: Mapping[str, Any],
           read: Mapping[str, Any], read_at: float, *, dry_run: bool) -> str:
    if time.monotonic() - read_at > FRESH_FOR:
        again = client.task(task)
        read_at = time.monotonic()
        with monitor.lock:
            state = monitor.state
            assert state is not None
            if again is None:
                state.remove_task(task)
                return "gone"
            state.set_task(again)
            block = state.blocks([task], updated_at=now_iso())[task]
        read = again
    write = needed_write(TaskAsRead.of(read), block, review=monitor.review)
    if write is None:
        return "unchanged"
    if not dry_run:
        current = read.get("meta")
        client.update_meta(task, write.meta if write.meta is not None else dict(current)
                           if isinstance(current, Mapping) else {}, data=write.data(read.get("data")),
                           overlap=write.overlap)
        if write.overlap is not None:
            with monitor.lock:
                monitor.counters["escalated"] += 1
        with monitor.lock:  # from the read of the meta to the write's answer: where another client's write is lost
            monitor.windows.append(time.monotonic() - read_at)
    return "written"


def stale_tasks(state: ProjectState, *, review: ReviewOptions | None = None) -> list[int]:
    """Tasks whose meta (and with ``review``, the mirrored score and the overlap), as last read, differ from what
    they should carry."""
    review = review or ReviewOptions(tab=False)
    return sorted(task for task, block in state.blocks(updated_at=now_iso()).items()
                  if needed_write(state.tasks[task].read, block, review=review) is not None)


WATERMARK_MARGIN = timedelta(seconds=60)
"""How far before the last read's newest ``updated_at`` a read of changed tasks starts (writes that commit late)."""


def updated_at(task: Mapping[str, Any]) -> datetime | None:
    """A task's ``updated_at`` as Label Studio's clock gave it, or None."""
    value = task.get("updated_at")
    if not isinstance(value, str) or not value:
        return None
    try:
        moment = datetime.fromisoformat(value)
    except ValueError:
        return None
    return moment if moment.tzinfo is not None else moment.replace(tzinfo=UTC)


def _newest(current: datetime | None, task: Mapping[str, Any]) -> datetime | None:
    moment = updated_at(task)
    if moment is None:
        return current
    return moment if current is None or moment > current else current


def full_pass(client: LabelStudioClient, monitor: ProjectMonitor, *, controls: Mapping[str, Control] | None = None,
              max_rate: float | None = None, progress: Progress | None = None,
              incremental: bool = False) -> PassReport:
    """Read the project, bring the state up to date, and find the tasks whose meta is stale.

    A full read rebuilds the state from every task; the new state replaces the
    old one at the end. With ``incremental``, only the tasks Label Studio
    changed since the last read (by its ``updated_at``, less
    :data:`WATERMARK_MARGIN`) are read into the current state, unless the
    label config changed or the number of tasks differs from the state's (a
    deletion whose event was lost), which take a full read. Either way, tasks
    refreshed by events while the pages were read, and tasks the old state
    knew that a full read missed (pages shift when tasks are added or deleted
    meanwhile), are refreshed one by one afterwards; then every task's block
    is computed (alphas drift with the project's expected disagreement) and
    compared with its meta. The caller writes the stale tasks
    (:class:`TaskWriter`), or reports them (a dry run).

    Raises
    ------
    LabelStudioError
        If the label config or a page cannot be read after retries; the old
        state stays in place.
    """
    report = PassReport(started_at=now_iso())
    started = time.perf_counter()
    if controls is None:
        controls = parse_label_config(client.label_config(monitor.project))
    with monitor.lock:
        current, watermark = monitor.state, monitor.watermark
    changed_only = (incremental and current is not None and watermark is not None
                    and current.control_specs == dict(sorted(controls.items()))
                    and client.task_count(monitor.project) == len(current.tasks))
    target = current if changed_only else ProjectState(monitor.project, controls, mapping=monitor.mapping,
                                                       scoring=monitor.scoring)
    assert target is not None
    report.kind = "changed" if changed_only else "full"
    total = [0]
    newest = watermark if changed_only else None
    with monitor.lock:
        monitor._reading = True
    try:
        since = watermark - WATERMARK_MARGIN if changed_only and watermark is not None else None
        for task in client.tasks(monitor.project, on_total=lambda n: total.__setitem__(0, n), max_rate=max_rate,
                                 updated_after=since):
            if changed_only:
                with monitor.lock:
                    target.set_task(task)
            else:
                target.set_task(task)
            newest = _newest(newest, task)
            report.n_tasks += 1
            if progress is not None:
                progress("fetch", report.n_tasks, max(total[0], report.n_tasks))
    finally:
        with monitor.lock:
            monitor._reading = False
    read = time.perf_counter()
    with monitor.lock:
        missing = set(current.tasks) - set(target.tasks) if current is not None and not changed_only else set()
        recheck = sorted(missing | monitor.deferred)
        monitor.deferred = set()
        monitor.state = target
        monitor.watermark = newest
    for start in range(0, len(recheck), BATCH):  # usually a handful: one read
        chunk = recheck[start:start + BATCH]
        try:
            refresh_tasks(client, monitor, chunk, dry_run=True)
        except Exception as error:  # noqa: BLE001 (left for the next pass, counted)
            monitor.count(f"recheck after a pass failed: {one_line(error)}")
            with monitor.lock:
                monitor.deferred.update(chunk)
    report.rechecked = len(recheck)
    with monitor.lock:
        report.stale = stale_tasks(target, review=monitor.review)
    report.seconds = {"read": read - started, "compute": time.perf_counter() - read}
    monitor.last_pass = report
    return report


@dataclass(order=True)
class _Due:
    background: bool  # a pass's work waits behind every event's
    when: float
    project: int = field(compare=False)
    task: int = field(compare=False)
    attempt: int = field(compare=False, default=0)


class TaskWriter:
    """Refreshes requested tasks on a few threads: coalesced, batched, one at a time per task, retried, counted.

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
    """

    def __init__(self, client: LabelStudioClient, monitors: Mapping[int, ProjectMonitor], *, workers: int = 4,
                 coalesce_seconds: float = 0.05, retry_delays: Iterable[float] = (1.0, 5.0, 20.0),
                 batch: int = BATCH, dry_run: bool = False) -> None:
        self._client = client
        self._monitors = monitors
        self._workers = max(1, workers)
        self._coalesce = coalesce_seconds
        self._retry_delays = tuple(retry_delays)
        self._dry_run = dry_run
        self._condition = threading.Condition()
        self._queue: list[_Due] = []
        self._queued: dict[tuple[int, int], float | None] = {}  # (project, task) -> when its first event came
        self._running: set[tuple[int, int]] = set()
        self._jobs = 0
        self._background_jobs = 0  # a pass's work runs on one worker at most: the others stay free for events
        self._batch = max(1, batch)
        self._latencies: deque[float] = deque(maxlen=1000)
        self._stopping = False
        self._thread = threading.Thread(target=self._run, name="task-writer", daemon=True)
        self.outcomes: Counter[str] = Counter()

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
                background: bool = False) -> None:
        """Refresh ``tasks`` of ``project`` soon; ``since`` is when the event that asked came (for latency).

        ``background`` work (a pass's stale tasks) waits behind every event's, and is done in small batches,
        so that an annotator's scores follow within a second while a pass rewrites drifted tasks.
        """
        now = time.monotonic()
        with self._condition:
            for task in tasks:
                key = (project, task)
                if key not in self._queued:
                    self._queued[key] = since
                    heapq.heappush(self._queue, _Due(background, now + self._coalesce, project, task))
                elif since is not None and self._queued[key] is None:
                    self._queued[key] = since
                    # an event for a task a pass queued: it moves to the front
                    heapq.heappush(self._queue, _Due(False, now + self._coalesce, project, task))
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

    def latency(self) -> dict[str, float | int | None]:
        """Median and 95th percentile, in ms, from an event to its task's meta being right (last 1,000)."""
        with self._condition:
            return percentiles_ms(self._latencies)

    # --- the work ---

    def _job(self, project: int, batch: list[tuple[_Due, float | None]]) -> None:
        monitor = self._monitors[project]
        try:
            outcomes = refresh_tasks(self._client, monitor, [due.task for due, _ in batch], dry_run=self._dry_run)
        except Exception as error:  # noqa: BLE001 (the read failed: every task of the batch is retried)
            outcomes = {due.task: error for due, _ in batch}
        retries, failed_for_good = [], []
        with monitor.lock:
            for due, _ in batch:
                outcome = outcomes[due.task]
                if isinstance(outcome, Exception):
                    retry = due.attempt < len(self._retry_delays)
                    monitor.counters["refresh failed" + (" (will retry)" if retry else "")] += 1
                    if retry:
                        retries.append(due)
                    else:
                        monitor.failures[due.task] = one_line(outcome)
                        failed_for_good.append((due, one_line(outcome)))
                else:
                    monitor.failures.pop(due.task, None)
                    monitor.counters[outcome] += 1
        now = time.monotonic()
        with self._condition:
            for due, since in batch:
                outcome = outcomes[due.task]
                self.outcomes["failed" if isinstance(outcome, Exception) else outcome] += 1
                if since is not None and outcome in ("written", "unchanged"):
                    self._latencies.append(now - since)
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

    def _run(self) -> None:
        with ThreadPoolExecutor(max_workers=self._workers, thread_name_prefix="refresh") as pool:
            while True:
                with self._condition:
                    while not self._stopping:
                        now = time.monotonic()
                        busy = self._jobs >= self._workers or (
                            bool(self._queue) and self._queue[0].background and self._background_jobs >= 1)
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
                    # pass's batches stay small, so that an event never waits long for a worker.
                    ready = sum(1 for due in self._queue if due.when <= now and due.background == background)
                    size = min(BACKGROUND_BATCH if background else self._batch,
                               max(1, -(-ready // max(1, self._workers - self._jobs))))
                    while (self._queue and self._queue[0].when <= now and self._queue[0].background == background
                           and len(batch) < size):
                        due = heapq.heappop(self._queue)
                        key = (due.project, due.task)
                        if key not in self._queued:  # a stale entry: the task moved to the front and was done
                            continue
                        if due.project != project or key in self._running or any(d.task == due.task
                                                                                   for d, _ in batch):
                            # another project's, or being refreshed: later, never two at once
                            later.append(due if due.project != project else
                                         _Due(due.background, now + self._coalesce, *key, due.attempt))
                            continue
                        batch.append((due, self._queued.pop(key, None)))
                        self._running.add(key)
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
