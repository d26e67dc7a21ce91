"""``ls-agreement sync``: one reconcile pass over a live project, or the scoring of an export.

tasks -> project state (:mod:`plugin.state`) -> each task's block -> diff
against its meta -> refresh and write what differs (:mod:`plugin.reconcile`,
the same code ``serve`` runs on every event and on its schedule).
"""

from __future__ import annotations

import time
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from plugin.clock import now_text
from plugin.labelconfig import Control
from plugin.labelstudio import LabelStudioClient, annotator_names
from plugin.monitor import PassReport, ProjectMonitor
from plugin.reconcile import Progress, full_pass
from plugin.report import Report, project_report
from plugin.review import below_ground_truth, ensure_ground_truth_tab, ensure_review_tab
from plugin.settings import MappingOptions, ReportOptions, ReviewOptions, ScoringOptions
from plugin.state import ProjectScores, ProjectState
from plugin.writer import TaskWriter

SYNC_BATCH = 16
"""Stale tasks a sync reads in one request and then writes one by one (a write takes 0.1-0.2 s: the last is still
written within :data:`plugin.reconcile.FRESH_FOR` of the read, so none is read twice)."""

__all__ = ["SyncReport", "read_project", "report_project", "score_export", "sync_project"]


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
    """

    scores: ProjectScores
    tasks_to_write: int = 0
    tasks_written: int = 0
    tasks_unchanged: int = 0
    tasks_escalated: int = 0
    failures: list[tuple[int, str]] = field(default_factory=list)
    seconds: dict[str, float] = field(default_factory=dict)
    people: dict[str, str] = field(default_factory=dict)

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
                 progress: Progress | None = None) -> ProjectState:
    """Read every task of ``project`` into a project state, writing nothing (the report's read).

    Raises
    ------
    LabelStudioError
        If the project cannot be read.
    """
    monitor = ProjectMonitor(project, mapping=mapping, scoring=scoring)
    full_pass(client, monitor, progress=progress)
    assert monitor.state is not None
    return monitor.state


def report_project(client: LabelStudioClient, project: int, url: str, *, mapping: MappingOptions,
                   scoring: ScoringOptions, options: ReportOptions | None = None,
                   progress: Progress | None = None) -> Report:
    """The admin report of ``project``, read now from the Label Studio at ``url`` (nothing is written).

    Raises
    ------
    LabelStudioError
        If the project cannot be read.
    """
    state = read_project(client, project, mapping=mapping, scoring=scoring, progress=progress)
    return project_report(state.snapshot(), project=project, url=url, generated_at=now_text(),
                          people=annotator_names(client), options=options)


def sync_project(client: LabelStudioClient, project: int, controls: Mapping[str, Control] | None = None, *,
                 mapping: MappingOptions, scoring: ScoringOptions, review: ReviewOptions | None = None,
                 dry_run: bool = False, progress: Progress | None = None,
                 retry_delays: tuple[float, ...] = (1.0, 4.0)) -> SyncReport:
    """One reconcile pass: read every task of ``project``, score it, and write the tasks whose meta is stale.

    Each stale task is read again just before its write, and its block merged
    into that fresh meta, so keys other clients wrote meanwhile survive.

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

    Raises
    ------
    LabelStudioError
        If the project cannot be read. A task whose write fails after retries
        is reported in ``failures`` and the run goes on.
    """
    review = review or ReviewOptions()
    monitor = ProjectMonitor(project, mapping=mapping, scoring=scoring, review=review)
    read: PassReport = full_pass(client, monitor, controls=controls, progress=progress)
    if not dry_run:
        ensure_review_tab(client, project, review)
    started = time.perf_counter()
    written = 0
    if not dry_run and read.stale:
        # small batches: each is read in one request and written task by task, before its read grows old
        writer = TaskWriter(client, {project: monitor}, workers=client.writers, coalesce_seconds=0.0,
                            retry_delays=retry_delays, batch=SYNC_BATCH)
        writer.start()
        try:
            writer.request(project, read.stale)
            while not writer.wait_idle(timeout=0.5):
                if progress is not None:
                    progress("write", min(writer.written_so_far, len(read.stale)), len(read.stale))
            if progress is not None:
                progress("write", len(read.stale), len(read.stale))
        finally:
            writer.stop()
        written = writer.outcomes["written"]
    scores = monitor.scores()
    if not dry_run and scoring.min_gt_accuracy is not None:
        ensure_ground_truth_tab(client, project, review, below_ground_truth(
            {name: control.references for name, control in scores.controls.items()}))
    return SyncReport(scores=scores, tasks_to_write=len(read.stale), tasks_written=written,
                      people=annotator_names(client),
                      tasks_unchanged=len(scores.tasks) - written, failures=monitor.failed(),
                      tasks_escalated=monitor.counted("escalated"),
                      seconds={"fetch": read.seconds["read"], "compute": read.seconds["compute"],
                               "write": time.perf_counter() - started})
