"""Compute, diff, write: the one way scores reach Label Studio, for ``sync``, ``serve`` and the report.

Label Studio is the truth; what this service believes can be lost or wrong (a
webhook that never came, a write that failed or landed late, a restart). So
every write follows the same steps:

1. **Refresh** a task: read it from Label Studio (its annotations and its meta
   as they are now), and replace it in the project's state. An annotation's
   event may stand for the read (:mod:`plugin.keeper.recent`): then the write
   below is checked against Label Studio's answer, which holds the task as the
   write left it, and the task is read and written again when the answer holds
   other annotations than the event said.
2. **Compute** the agreement block the task should carry.
3. **Diff** it against the meta just read, and **write** the merged meta only
   when the block differs (alpha within its tolerance). Keys other clients
   keep in meta survive, since the merge is into that fresh read.

A **pass** reads every task, or only those Label Studio changed since the last
read (page by page, each page retried, at a bounded rate), brings the state up
to date, and refreshes every task whose meta differs from its block: stale scores, failed or lost writes, tasks whose
alpha drifted with the project's expected disagreement. ``sync`` is one pass;
``serve`` runs events (fast) and passes on a schedule (the guarantee).

:class:`plugin.keeper.writer.TaskWriter` runs refreshes on a few threads; the
project's state and its lock belong to :class:`plugin.keeper.monitor.ProjectMonitor`.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping, Sequence
from contextlib import nullcontext
from datetime import datetime, timedelta
from typing import Any

from plugin.clock import now_iso, parse_time
from plugin.keeper.monitor import Outcome, PassReport, ProjectMonitor
from plugin.labelstudio.client import LabelStudioClient, one_line
from plugin.mapping.labelconfig import Control, parse_label_config
from plugin.state.blocks import TaskAsRead, needed_write
from plugin.state.predictions import MODEL_VERSION
from plugin.state.project import ProjectState

__all__ = ["BATCH", "FRESH_FOR", "LEFT", "READ_AGAIN", "WATERMARK_MARGIN", "Progress", "full_pass", "refresh_tasks",
           "updated_at"]

Progress = Callable[[str, int, int], None]
"""``progress(stage, done, total)``: a stage is "fetch" or "write"."""


LEFT = "left for events"
"""The outcome of a task :func:`refresh_tasks` did not write because its caller stopped it for events."""
READ_AGAIN = "written from its event, read again"
"""The outcome of a task written from its events' provisional read that Label Studio's answer did not confirm: its
caller refreshes it again, from a read (:mod:`plugin.keeper.recent`)."""
FRESH_FOR = 3.0
"""Seconds a batch read's meta is merged into as it is; older, the task is read again just before its write."""
BATCH = 100
"""Most tasks read in one request when refreshing."""


def refresh_tasks(client: LabelStudioClient, monitor: ProjectMonitor, tasks: Sequence[int], *,
                  dry_run: bool = False, go_on: Callable[[], bool] | None = None,
                  on_task: Callable[[int, Outcome], None] | None = None,
                  timings: dict[int, dict[str, float]] | None = None) -> dict[int, Outcome]:
    """Read ``tasks`` from Label Studio (one request), update the state, and write each block that differs.

    A task whose events say all of it (:meth:`plugin.keeper.monitor.ProjectMonitor.provisional`) is not read,
    unless in a dry run or its first event is over :data:`FRESH_FOR` old (then read with the batch): its write is
    checked against Label Studio's answer (:data:`READ_AGAIN` when that holds other annotations or predictions), and
    when its events' read asks for no write, or for a prediction's or an escalation's, it is read first.
    The meta of a task is merged into as read, if that read is less than
    :data:`FRESH_FOR` old; otherwise the task is read again just before its
    write (a batch with many writes), so another client's keys are lost only
    within a short window. ``go_on`` is asked before each write after the
    first: when it answers False, the tasks not yet written are left with the
    outcome :data:`LEFT` (the service's background work stops there for the
    events waiting, and asks again for the rest later), so that Label Studio
    answers an annotator's event without a pass's rewrites beside it.
    ``on_task(task, outcome)`` is called as each task's write is done (progress
    that moves task by task). ``timings``, when given, receives per task refreshed the seconds of its parts
    (time.monotonic): ``read``, Label Studio's read of it (the batch's, and its read again before a late write);
    ``scoring``, the state's update and its block (the batch's) and the diff with its meta; ``write``, its meta
    write (0 without one); and ``done``, when its outcome was known. A task taken from its events has no read.

    Returns
    -------
    dict of int to str or Exception
        Per task: "written", "unchanged", "gone" (deleted since it was read),
        "not a task of this project" (deleted before it was ever read, or of
        another project: an event named it), "deferred" (the project was never
        read yet; the task is refreshed after the first pass), :data:`LEFT`, :data:`READ_AGAIN`, or the
        exception its write raised.

    Raises
    ------
    LabelStudioError
        If the tasks cannot be read (after the client's retries): no task of
        the batch was refreshed.
    """
    if monitor.defer_unread(tasks):
        return dict.fromkeys(tasks, "deferred")
    from_events = monitor.provisional(tasks)
    if dry_run:  # nothing is written, so nothing would check the events' read
        from_events = {}
    # an event over FRESH_FOR old is read with the batch, in one request, rather than each on its own before its write
    from_events = {task: said for task, said in from_events.items() if time.monotonic() - said[1] <= FRESH_FOR}
    unread = [task for task in tasks if task not in from_events]
    started = time.monotonic()
    fresh: dict[int, Mapping[str, Any]] = {
        task["id"]: task for task in (client.tasks_by_id(monitor.project, unread) if unread else [])
        if isinstance(task, Mapping) and task.get("id") in unread}
    read_at = time.monotonic()
    fresh.update({task: read for task, (read, _) in from_events.items()})
    gone, blocks = monitor.refresh(tasks, fresh, provisional=from_events)
    scored_at = time.monotonic()
    timed = timings if timings is not None else {}
    read_seconds = {task: 0.0 if task in from_events else read_at - started for task in tasks}
    for task in gone:
        timed[task] = {"read": read_seconds[task], "scoring": scored_at - read_at, "write": 0.0, "done": scored_at}
    out: dict[int, Outcome] = dict(gone)
    for done, (task, block) in enumerate(blocks.items()):
        if go_on is not None and done and not go_on():
            out.update(dict.fromkeys(list(blocks)[done:], LEFT))
            break
        parts = timed[task] = {"read": read_seconds[task], "scoring": scored_at - read_at, "write": 0.0}
        try:
            out[task] = _write(client, monitor, task, block, fresh[task],
                               from_events[task][1] if task in from_events else read_at, dry_run=dry_run,
                               parts=parts, provisional=task in from_events)
        except Exception as error:  # noqa: BLE001 (this task's failure, reported to the caller)
            out[task] = error
        parts["done"] = time.monotonic()
        if on_task is not None:
            on_task(task, out[task])
    for task in tasks:
        out.setdefault(task, "unchanged")
    return out


def _read_again(client: LabelStudioClient, monitor: ProjectMonitor, task: int,
                parts: dict[str, float]) -> tuple[str | None, Mapping[str, Any], Mapping[str, Any], float]:
    """Read ``task`` again and refresh it: its outcome if it is gone, else its block, the read and when it was read."""
    started = time.monotonic()
    again = client.task(task)
    read_at = time.monotonic()
    gone, blocks = monitor.refresh([task], {task: again} if again is not None else {})
    parts["read"] += read_at - started
    parts["scoring"] += time.monotonic() - read_at
    if task in gone:
        return gone[task], {}, {}, read_at
    assert again is not None
    return None, blocks[task], again, read_at


def _write(client: LabelStudioClient, monitor: ProjectMonitor, task: int, block: Mapping[str, Any],
           read: Mapping[str, Any], read_at: float, *, dry_run: bool, parts: dict[str, float],
           provisional: bool = False) -> str:
    """Write one task's block if its meta differs; ``parts`` gains the seconds of each step (:func:`refresh_tasks`).

    ``provisional``: ``read`` is what the task's events said of it (``read_at``, when the first came).
    """
    too_old = time.monotonic() - read_at > FRESH_FOR
    diffed = time.monotonic()
    write = None if too_old else needed_write(TaskAsRead.of(read), block, review=monitor.review,
                                              controls=monitor.controls())
    if too_old or provisional and (write is None or write.prediction is not None or write.overlap is not None):
        # read it again: its meta is too old to merge into (another client's keys), or no write's answer would check
        # its events' read, or a prediction or an escalation would go out from it
        parts["scoring"] += time.monotonic() - diffed
        gone, block, read, read_at = _read_again(client, monitor, task, parts)
        if gone is not None:
            return gone
        provisional = False
        diffed = time.monotonic()
        write = needed_write(TaskAsRead.of(read), block, review=monitor.review, controls=monitor.controls())
    sent = time.monotonic()
    parts["scoring"] += sent - diffed
    if write is None:
        return "unchanged"
    confirmed = True
    if not dry_run:
        current = read.get("meta")
        if write.prediction is not None:  # first: the meta's write then answers with the task as both left it
            wanted = write.prediction
            client.write_prediction(task, model_version=MODEL_VERSION, prediction=wanted.id, results=wanted.results,
                                    score=wanted.score, delete=wanted.delete)
            monitor.count("consensus prediction written")
        if write.meta is not None or write.mirror or write.overlap is not None:
            answer = client.update_meta(task, write.meta if write.meta is not None else dict(current)
                                        if isinstance(current, Mapping) else {}, data=write.data(read.get("data")),
                                        overlap=write.overlap)
            if isinstance(answer, Mapping):  # the task as written, taken as read: a pass does not read it again
                confirmed = monitor.wrote(answer, read, provisional=provisional)
        if write.overlap is not None:
            monitor.count("escalated")
        # from the read of the meta to the write's answer: where another client's write is lost
        monitor.record_window(time.monotonic() - read_at)
    parts["write"] += time.monotonic() - sent
    return READ_AGAIN if provisional and not confirmed else "written"


def _read_changed(client: LabelStudioClient, monitor: ProjectMonitor, since: datetime | None, report: PassReport, *,
                  newest: datetime | None, total: list[int | None], max_rate: float | None,
                  progress: Progress | None) -> datetime | None:
    """List the tasks changed ``since`` by their stamps, and read in full those the state has not seen.

    A task an event already brought, or whose only change is this service's write of its meta, is listed and
    not read (:mod:`plugin.state.stamps`). Returns the newest ``updated_at`` listed; ``report`` counts the tasks
    listed and read.
    """
    listed = []
    for stamp in client.tasks(monitor.project, on_total=lambda n: total.__setitem__(0, n), max_rate=max_rate,
                              updated_after=since, stamps_only=True):
        listed.append(stamp)
        newest = _newest(newest, stamp)
    report.n_listed = len(listed)
    unseen = monitor.unseen(listed)
    for start in range(0, len(unseen), BATCH):
        for task in client.tasks_by_id(monitor.project, unseen[start:start + BATCH]):
            if isinstance(task, Mapping):
                monitor.set_task(task)
                monitor.remember(task)
                report.n_tasks += 1
        if progress is not None:
            progress("fetch changed", min(start + BATCH, len(unseen)), len(unseen))
    if progress is not None and not unseen:
        progress("fetch changed", 0, 0)
    return newest


WATERMARK_MARGIN = timedelta(seconds=60)
"""How far before the last read's newest ``updated_at`` a read of changed tasks starts (writes that commit late)."""


def updated_at(task: Mapping[str, Any]) -> datetime | None:
    """A task's ``updated_at`` as Label Studio's clock gave it, or None."""
    return parse_time(task.get("updated_at"))


def _newest(current: datetime | None, task: Mapping[str, Any]) -> datetime | None:
    moment = updated_at(task)
    if moment is None:
        return current
    return moment if current is None or moment > current else current


def full_pass(client: LabelStudioClient, monitor: ProjectMonitor, *, controls: Mapping[str, Control] | None = None,
              max_rate: float | None = None, progress: Progress | None = None,
              incremental: bool = False, recount: bool = True) -> PassReport:
    """Read the project, bring the state up to date, and find the tasks whose meta is stale.

    A full read rebuilds the state from every task; the new state replaces the
    old one at the end. With ``incremental``, only the tasks Label Studio
    changed since the last read (by its ``updated_at``, less
    :data:`WATERMARK_MARGIN` the first time after it moved: :meth:`ProjectMonitor.changed_since`) are read into
    the current state, unless the
    label config or the project's options changed, which take a full read;
    and when, once they are read (tasks created since among them), the number
    of tasks (the project's, as the read's first page gives it: no request of
    its own) still differs from the state's, the tasks changed since that
    read are read once more (``recount``: tasks created while the first was
    read), and if it still differs, tasks were deleted without the state
    hearing of it (a lost event, or while no service ran), and every task is
    read then. Either way, tasks
    refreshed by events while the pages were read, and tasks the old state
    knew that a full read missed (pages shift when tasks are added or deleted
    meanwhile), are refreshed one by one afterwards; then every task's block
    is computed (alphas drift with the project's expected disagreement) and
    compared with its meta. The caller writes the stale tasks
    (:class:`plugin.keeper.writer.TaskWriter`), or reports them (a dry run).

    Raises
    ------
    LabelStudioError
        If the label config or a page cannot be read after retries; the old
        state stays in place.
    """
    report = PassReport(started_at=now_iso())
    started = time.perf_counter()
    asked = client.requests_sent()
    if controls is None:
        controls = parse_label_config(client.label_config(monitor.project))
    current, watermark = monitor.read_position()
    changed_only = (incremental and current is not None and watermark is not None
                    and current.mapped_with(controls, mapping=monitor.mapping, scoring=monitor.scoring))
    target = current if changed_only else ProjectState(monitor.project, controls, mapping=monitor.mapping,
                                                       scoring=monitor.scoring)
    assert target is not None
    report.kind = "changed" if changed_only else "full"
    total: list[int | None] = [None]  # the first page's count of the project's tasks (each kind of read spans them)
    newest = watermark if changed_only else None
    with monitor.reading(into_new_state=not changed_only), (nullcontext() if changed_only else target.batch()):
        since = monitor.changed_since(WATERMARK_MARGIN) if changed_only else None
        if changed_only:
            newest = _read_changed(client, monitor, since, report, newest=newest, total=total, max_rate=max_rate,
                                   progress=progress)
        else:
            for task in client.tasks(monitor.project, on_total=lambda n: total.__setitem__(0, n), max_rate=max_rate):
                target.set_task(task)  # with its stamp (plugin.state.stamps): installed below, whichever way
                monitor.remember(task)
                newest = _newest(newest, task)
                report.n_tasks += 1
                if progress is not None:
                    progress("fetch", report.n_tasks, max(total[0] or 0, report.n_tasks))
    read = time.perf_counter()
    # The project's task count as the read's first page gave it (a request of its own only when it did not): an
    # idle pass is one request for the config and one page.
    if changed_only and (total[0] if total[0] is not None else client.task_count(monitor.project)) \
            != monitor.n_tasks():
        # Tasks created since were read as changed, so the count differs by tasks deleted unheard of, or created
        # while the changed tasks were read: once more from the newest read, and then every task.
        monitor.defer(monitor.install(target, watermark=newest))  # refreshed after the next read, as by a pass
        again = full_pass(client, monitor, controls=controls, max_rate=max_rate, progress=progress,
                          incremental=recount, recount=False)
        again.started_at, again.n_tasks = report.started_at, again.n_tasks + report.n_tasks
        again.n_listed += report.n_listed
        again.requests = client.requests_sent() - asked
        again.seconds["read"] += read - started
        return again
    # a read of changed tasks looked below the watermark (now, or already): the next starts there if it stays
    looked = watermark if changed_only and since is not None else None
    recheck = monitor.install(target, watermark=newest, margin_read=looked)
    for start in range(0, len(recheck), BATCH):  # usually a handful: one read
        chunk = recheck[start:start + BATCH]
        try:
            refresh_tasks(client, monitor, chunk, dry_run=True)
        except Exception as error:  # noqa: BLE001 (left for the next pass, counted)
            monitor.count(f"recheck after a pass failed: {one_line(error)}")
            monitor.defer(chunk)
    report.rechecked = len(recheck)
    report.stale = monitor.stale_tasks()
    counts = monitor.flag_counts()  # what that scoring of every task found: /metrics shows it
    if counts is not None:
        report.n_scored, report.n_flagged = counts
    report.seconds = {"read": read - started, "compute": time.perf_counter() - read}
    report.requests = client.requests_sent() - asked
    monitor.record_pass(report)
    return report
