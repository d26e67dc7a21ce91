"""``ls-agreement sync``: one project cycle over a live project, or the scoring of an export.

tasks -> project state (:mod:`plugin.state.project`) -> each task's block -> diff
against its meta -> refresh and write what differs: the project cycle
(:func:`plugin.keeper.cycle.run_cycle`), the same that ``serve`` runs on its schedule.
"""

from __future__ import annotations

import time
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from plugin.clock import now_text
from plugin.keeper.cycle import run_cycle
from plugin.keeper.monitor import ProjectMonitor
from plugin.keeper.passes import Progress
from plugin.keeper.writer import TaskWriter
from plugin.labelstudio.client import LabelStudioClient, annotator_names
from plugin.mapping.labelconfig import Control
from plugin.report import Report, project_report
from plugin.settings import MappingOptions, ReportOptions, ReviewOptions, ScoringOptions
from plugin.state.project import ProjectScores, ProjectState
from plugin.state.saved import StateFiles

SYNC_BATCH = 16
"""Stale tasks a sync reads in one request and then writes one by one (a write takes 0.1-0.2 s: the last is still
written within :data:`plugin.keeper.passes.FRESH_FOR` of the read, so none is read twice)."""

__all__ = ["SyncReport", "monitor_report", "read_project", "report_project", "score_export", "sync_project"]


@dataclass
class SyncReport:
    """What a sync read, computed and wrote.

    Attributes
    ----------
    scores : ProjectScores
    tasks_to_write : int
        Tasks whose agreement block differed from their meta.
    tasks_written : int
    tasks_unchanged : int
    tasks_escalated : int
        Flagged tasks whose overlap was raised for one more annotator.
    failures : list of (int, str)
        Tasks whose write failed after retries, with the reason.
    people : dict of str to str
        Annotator id -> name and email, from Label Studio's users.
    seconds : dict of str to float
        Time spent reading, computing and writing.
    read : dict
        ``kind`` ("full": every task; "changed": the tasks changed since a saved state) and ``n_tasks`` read.
    saved_state : dict
        With a state directory, what happened to the project's saved state, by event ("restored", "missing",
        "refused", "not used", "saved", "failed"; :meth:`plugin.keeper.monitor.ProjectMonitor.saved_state`); empty
        without one.
    """

    scores: ProjectScores
    tasks_to_write: int = 0
    tasks_written: int = 0
    tasks_unchanged: int = 0
    tasks_escalated: int = 0
    failures: list[tuple[int, str]] = field(default_factory=list)
    seconds: dict[str, float] = field(default_factory=dict)
    people: dict[str, str] = field(default_factory=dict)
    read: dict[str, Any] = field(default_factory=dict)
    saved_state: dict[str, Any] = field(default_factory=dict)

    @property
    def flagged(self) -> int:
        """Tasks flagged for low agreement."""
        return self.scores.tasks.n_flagged()


def score_export(tasks: Iterable[Mapping[str, Any]], controls: Mapping[str, Control], *, mapping: MappingOptions,
                 scoring: ScoringOptions) -> tuple[ProjectScores, int]:
    """Score tasks read offline; return the scores and how many tasks' meta differs from their block."""
    state = ProjectState.from_tasks(tasks, controls, mapping=mapping, scoring=scoring)
    return state.scores(), len(state.stale_tasks())


def read_project(client: LabelStudioClient, project: int, *, mapping: MappingOptions, scoring: ScoringOptions,
                 progress: Progress | None = None, state: StateFiles | None = None) -> ProjectMonitor:
    """Read a project into a project state, writing nothing to Label Studio.

    Read ``project`` into a project state, writing nothing to Label Studio (the report's read); return the
    monitor that holds it, its pass (:meth:`ProjectMonitor.last_pass`) and what happened to its saved state.

    With ``state``, the read starts from the project's saved state (see :func:`sync_project`), and the state is
    saved again after it.

    Raises
    ------
    LabelStudioError
        If the project cannot be read.
    """
    monitor = ProjectMonitor(project, mapping=mapping, scoring=scoring)
    run_cycle(client, monitor, files=state, progress=progress)  # a failed save is said in the summary
    assert monitor.state is not None
    return monitor


def report_project(client: LabelStudioClient, project: int, url: str, *, mapping: MappingOptions,
                   scoring: ScoringOptions, options: ReportOptions | None = None,
                   progress: Progress | None = None) -> Report:
    """The admin report of ``project``, read now from the Label Studio at ``url`` (nothing is written).

    Raises
    ------
    LabelStudioError
        If the project cannot be read.
    """
    monitor = read_project(client, project, mapping=mapping, scoring=scoring, progress=progress)
    return monitor_report(client, monitor, url, options=options)


def monitor_report(client: LabelStudioClient, monitor: ProjectMonitor, url: str, *,
                   options: ReportOptions | None = None) -> Report:
    """The admin report of the project a monitor holds.

    The admin report of the project ``monitor`` holds (:func:`read_project`), its annotators named from the
    Label Studio at ``url``."""
    snapshot = monitor.snapshot()
    assert snapshot is not None
    return project_report(snapshot, project=monitor.project, url=url, generated_at=now_text(),
                          people=annotator_names(client), options=options, title=client.project_title(monitor.project))


def sync_project(client: LabelStudioClient, project: int, controls: Mapping[str, Control] | None = None, *,
                 mapping: MappingOptions, scoring: ScoringOptions, review: ReviewOptions | None = None,
                 dry_run: bool = False, progress: Progress | None = None,
                 retry_delays: tuple[float, ...] = (1.0, 4.0), state: StateFiles | None = None,
                 full_read: bool = False) -> SyncReport:
    """One reconcile pass: read ``project``'s tasks, score them, and write the tasks whose meta is stale.

    Each stale task is read again just before its write, and its block merged
    into that fresh meta, so keys other clients wrote meanwhile survive.

    With ``state``, the project's state saved by the last sync (or by a
    service sharing the directory) is restored first, when it is sound and
    was mapped with the project's label config and options now
    (:meth:`plugin.keeper.monitor.ProjectMonitor.restore_saved`), and only the tasks
    changed since it was read are read, with every check a pass of changed
    tasks makes (:func:`plugin.keeper.passes.full_pass`); the state is saved
    again after the writes (not on a dry run). A file that cannot be used, or
    a save that fails, is said in :attr:`SyncReport.saved_state` (the
    summary's lines), and the sync goes on as without one.

    Parameters
    ----------
    client : LabelStudioClient
    project : int
    controls : mapping of str to Control, optional
        The project's controls; by default parsed from its labeling config.
    mapping, scoring : MappingOptions, ScoringOptions
    review : ReviewOptions, optional
        The "Low agreement" tab (kept up to date unless a dry run) and the
        score mirrored into task data.
    dry_run : bool
        Compute and report, write nothing.
    progress : callable, optional
        Told ``(stage, done, total)`` as tasks are read and written.
    retry_delays : tuple of float
        Waits before each further attempt at a task whose write failed (on top
        of the client's own retries of each request).
    state : StateFiles, optional
        Where the project's state is saved between syncs.
    full_read : bool
        With ``state``: read every task anyway (the saved state is not
        restored, and is saved again), as now and then a sync should, for
        what a read of changed tasks cannot see (a change that did not move a
        task's ``updated_at``, a database restored from an older backup).

    Raises
    ------
    LabelStudioError
        If the project cannot be read. A task whose write fails after retries
        is reported in ``failures`` and the run goes on.
    """
    review = review or ReviewOptions()
    monitor = ProjectMonitor(project, mapping=mapping, scoring=scoring, review=review)
    people = annotator_names(client)
    outcomes: dict[str, float] = {}

    def write(stale: Sequence[int]) -> None:
        # small batches: each is read in one request and written task by task, before its read grows old
        started = time.perf_counter()
        writer = TaskWriter(client, {project: monitor}, workers=client.writers, coalesce_seconds=0.0,
                            retry_delays=retry_delays, batch=SYNC_BATCH)
        writer.start()
        try:
            writer.request(project, stale)
            while not writer.wait_idle(timeout=0.5):
                if progress is not None:
                    progress("write", min(writer.written_so_far, len(stale)), len(stale))
            if progress is not None:
                progress("write", len(stale), len(stale))
        finally:
            writer.stop()
        outcomes["written"] = writer.outcomes["written"]
        outcomes["seconds"] = time.perf_counter() - started

    cycle = run_cycle(client, monitor, controls, files=state, full_read=full_read, write=None if dry_run else write,
                      tabs=not dry_run, review_tab=not dry_run, people=people, save=not dry_run,
                      progress=progress)  # a failed save is said in the summary (saved_state)
    read, written = cycle.read, int(outcomes.get("written", 0))
    scores = monitor.scores()
    return SyncReport(scores=scores, tasks_to_write=len(read.stale), tasks_written=written, people=people,
                      tasks_unchanged=len(scores.tasks) - written, failures=monitor.failed(),
                      tasks_escalated=monitor.counted("escalated"),
                      seconds={"fetch": read.seconds["read"], "compute": read.seconds["compute"],
                               "write": outcomes.get("seconds", 0.0)},
                      read={"kind": read.kind, "n_tasks": read.n_tasks}, saved_state=monitor.saved_state())
