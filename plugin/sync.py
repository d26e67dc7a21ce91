"""One pipeline from tasks to written scores, for a live project or an export file.

tasks -> submissions (annotations that count) -> items per control ->
scores per control and per task -> task meta (merged, only what changed).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Mapping
from concurrent.futures import ThreadPoolExecutor, as_completed
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from plugin import __version__
from plugin.annotations import Skips, collect_submissions, task_id
from plugin.labelconfig import Control, parse_label_config
from plugin.labelstudio import LabelStudioClient, LabelStudioError
from plugin.mapping import map_control
from plugin.scoring import ControlScore, TaskScore, score_control, summarize_tasks
from plugin.settings import MappingOptions, ScoringOptions
from plugin.writeback import META_KEY, agreement_block, merged_meta

__all__ = ["META_KEY", "ProjectScores", "SyncReport", "pending_writes", "score_tasks", "sync_project"]

Progress = Callable[[str, int, int], None]
"""``progress(stage, done, total)``: a stage is "fetch" or "write"."""


@dataclass(frozen=True)
class ProjectScores:
    """Everything computed from one reading of a project.

    Attributes
    ----------
    controls : dict of str to ControlScore
    tasks : dict of int to TaskScore
    meta : dict of int to dict
        Each task's meta as read.
    skips : Skips
    n_annotations : int
        Counted annotations over all tasks.
    annotators : tuple of str
    """

    controls: dict[str, ControlScore]
    tasks: dict[int, TaskScore]
    meta: dict[int, Any]
    skips: Skips
    n_annotations: int
    annotators: tuple[str, ...]


def score_tasks(tasks: Iterable[Mapping[str, Any]], controls: Mapping[str, Control], *,
                mapping: MappingOptions, scoring: ScoringOptions) -> ProjectScores:
    """Score every task and control; pure computation on tasks as Label Studio gives them."""
    tasks = list(tasks)
    skips = Skips()
    submissions = collect_submissions(tasks, skips, include_ground_truth=mapping.include_ground_truth)
    meta: dict[int, Any] = {}
    for task in tasks:
        identifier = task_id(task)
        if identifier is not None and identifier in submissions:
            meta[identifier] = task.get("meta")
    control_scores = {name: score_control(map_control(control, submissions, skips, mapping), scoring)
                      for name, control in sorted(controls.items())}
    counts = {task: len(subs) for task, subs in submissions.items()}
    annotators = tuple(sorted({s.annotator for subs in submissions.values() for s in subs}))
    return ProjectScores(controls=control_scores, tasks=summarize_tasks(counts, control_scores, scoring),
                         meta=meta, skips=skips, n_annotations=sum(counts.values()), annotators=annotators)


@dataclass
class SyncReport:
    """What a sync read, computed and wrote.

    Attributes
    ----------
    scores : ProjectScores
    tasks_to_write : int
        Tasks whose agreement block changed.
    tasks_written : int
    tasks_unchanged : int
    failures : list of (int, str)
        Tasks whose write failed after retries, with the reason.
    seconds : dict of str to float
        Time spent fetching, computing and writing.
    """

    scores: ProjectScores
    tasks_to_write: int = 0
    tasks_written: int = 0
    tasks_unchanged: int = 0
    failures: list[tuple[int, str]] = field(default_factory=list)
    seconds: dict[str, float] = field(default_factory=dict)

    @property
    def flagged(self) -> int:
        """Tasks flagged for low agreement."""
        return sum(score.flagged for score in self.scores.tasks.values())


def pending_writes(scores: ProjectScores, *, updated_at: str) -> dict[int, dict[str, Any]]:
    """The new meta of every task whose agreement block changed."""
    out = {}
    for task, score in scores.tasks.items():
        meta = merged_meta(scores.meta.get(task), agreement_block(score, version=__version__, updated_at=updated_at))
        if meta is not None:
            out[task] = meta
    return out


def sync_project(client: LabelStudioClient, project: int, controls: Mapping[str, Control] | None, *,
                 mapping: MappingOptions, scoring: ScoringOptions, dry_run: bool = False,
                 progress: Progress | None = None) -> SyncReport:
    """Read every task of ``project``, score it, and write changed scores into task meta.

    Parameters
    ----------
    client : LabelStudioClient
    project : int
    controls : mapping of str to Control, optional
        The project's controls; by default parsed from its labeling config.
    mapping, scoring : MappingOptions, ScoringOptions
    dry_run : bool
        Compute and report, write nothing.
    progress : callable, optional
        Told ``(stage, done, total)`` as tasks are read and written.

    Raises
    ------
    LabelStudioError
        If the project cannot be read. A task whose write fails after retries
        is reported in ``failures`` and the run goes on.
    """
    started = time.perf_counter()
    if controls is None:
        controls = parse_label_config(client.label_config(project))
    total = [0]
    tasks = []
    for task in client.tasks(project, on_total=lambda n: total.__setitem__(0, n)):
        tasks.append(task)
        if progress is not None:
            progress("fetch", len(tasks), max(total[0], len(tasks)))
    fetched = time.perf_counter()
    scores = score_tasks(tasks, controls, mapping=mapping, scoring=scoring)
    writes = pending_writes(scores, updated_at=datetime.now(UTC).isoformat(timespec="seconds"))
    computed = time.perf_counter()
    report = SyncReport(scores=scores, tasks_to_write=len(writes), tasks_unchanged=len(scores.tasks) - len(writes))
    if not dry_run and writes:
        with ThreadPoolExecutor(max_workers=max(1, client.writers)) as pool:
            futures = {pool.submit(client.update_meta, task, meta): task for task, meta in sorted(writes.items())}
            for done, future in enumerate(as_completed(futures), start=1):
                try:
                    future.result()
                    report.tasks_written += 1
                except LabelStudioError as error:
                    report.failures.append((futures[future], str(error)))
                if progress is not None:
                    progress("write", done, len(writes))
        report.failures.sort()
    report.seconds = {"fetch": fetched - started, "compute": computed - fetched,
                      "write": time.perf_counter() - computed}
    return report

