"""The project cycle, one implementation for sync, serve and the report's read.

A cycle restores the saved state, reads, scores, diffs, writes, keeps the tabs, publishes the references and
saves. ``sync`` runs it once (:func:`plugin.keeper.sync.sync_project`), the report's read runs it without writing, and
``serve`` runs it on its schedule (:class:`plugin.service.projects.ServiceState`); so sync and serve cannot
disagree on what a task should carry, which tasks are stale or who is below ground truth. What goes wrong with
the saved state comes back in :attr:`Cycle.errors`: the caller counts it; the cycle goes on without the file.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from plugin.clock import now_iso
from plugin.keeper.monitor import PassReport, ProjectMonitor
from plugin.keeper.passes import Progress, full_pass
from plugin.keeper.tabs import below_ground_truth, ensure_ground_truth_tab, ensure_review_tab
from plugin.labelstudio.client import LabelStudioClient
from plugin.labelstudio.errors import one_line
from plugin.mapping.labelconfig import Control, parse_label_config
from plugin.state.references import control_references
from plugin.state.saved import StateFiles
from plugin.state.scoring import annotator_rows, named_rows

__all__ = ["TAB_SETTLE", "Cycle", "incremental", "run_cycle"]

TAB_SETTLE = 300.0
"""Seconds between two updates of the "Below ground truth" tab at the most (the default pass interval: a service
that keeps it updates the tab at each pass where who is below changed)."""


@dataclass
class Cycle:
    """What one cycle of a project did.

    Attributes
    ----------
    read : PassReport
        The pass: what was read, and the stale tasks handed to ``write``.
    references : dict
        Per control with references, its ``references`` block as published (who is below ground truth).
    restore : str or None
        With a state directory on the cycle's first pass: ``"restored"``, ``"refused"`` or ``"missing"``.
    refused : str or None
        Why the saved state was not used, when it was refused.
    restore_seconds : float
        Time taken to restore the saved state.
    errors : list of (str, str)
        What failed with the saved state, and why (in one line); what was read and written stands.
    """

    read: PassReport
    references: dict[str, Any] = field(default_factory=dict)
    restore: str | None = None
    refused: str | None = None
    restore_seconds: float = 0.0
    errors: list[tuple[str, str]] = field(default_factory=list)


def _restore(monitor: ProjectMonitor, files: StateFiles, controls: Mapping[str, Control]) -> dict[str, Any]:
    """Put the project's saved state in place (:meth:`ProjectMonitor.restore_saved`); say what happened."""
    started = time.perf_counter()
    refused = monitor.restore_saved(files, controls)
    return {"restore": "refused" if refused is not None else "restored" if monitor.restored() else "missing",
            "refused": refused, "restore_seconds": time.perf_counter() - started}


def _published(monitor: ProjectMonitor, people: Mapping[str, str]) -> dict[str, Any]:
    """Publish who agrees with whom and each control's references; return the references published.

    Computed again only when the tasks or the annotators' names changed since the last publication.
    """
    source = (monitor.version(), dict(people))
    if monitor.published_from() == source:
        return monitor.publish(None)
    mapped = monitor.mapped()  # only the rows: who disagrees is computed after the lock is released
    inputs, authors = monitor.reference_inputs()
    references = {name: control_references(rows, authors, level=level, categories=categories,
                                           scoring=monitor.scoring, people=people)
                  for name, (rows, level, categories) in inputs.items()}
    return monitor.publish({name: named_rows(annotator_rows(control.annotator_labels()) if control.n_rows else [],
                                             people) for name, control in mapped.items()},
                           references={name: block for name, block in references.items() if block}, source=source)


def incremental(monitor: ProjectMonitor, *, full_pass_every: int | None) -> bool:
    """Whether this cycle reads only the tasks changed since the last read.

    Without a schedule (``sync``, the report), when a saved state was restored; on ``serve``'s schedule, unless
    this pass is one of every ``full_pass_every`` (and a restored state counts as a read, unless every pass is a
    full one).

    >>> class Monitor: passes, restored = 3, lambda self: False
    >>> incremental(Monitor(), full_pass_every=None), incremental(Monitor(), full_pass_every=12)
    (False, True)
    >>> incremental(Monitor(), full_pass_every=3), incremental(Monitor(), full_pass_every=1)
    (False, False)
    """
    if full_pass_every is None:
        return monitor.restored()
    every = max(1, full_pass_every)
    return (monitor.restored() and every > 1) or monitor.passes % every != 0


def run_cycle(client: LabelStudioClient, monitor: ProjectMonitor, controls: Mapping[str, Control] | None = None, *,
              files: StateFiles | None = None,
              full_read: bool = False, full_pass_every: int | None = None,
              write: Callable[[Sequence[int]], None] | None = None, tabs: bool = False, review_tab: bool = False,
              people: Mapping[str, str] | None = None, save: bool = True, max_rate: float | None = None,
              progress: Progress | None = None) -> Cycle:
    """One cycle of ``monitor``'s project against Label Studio.

    Parameters
    ----------
    controls : mapping of str to Control, optional
        The project's controls; by default parsed from its label config as read now.
    files : StateFiles, optional
        The state directory: on the monitor's first cycle its saved state is restored (unless ``full_read``),
        so that only the tasks changed since are read; after the writes, the state is saved if it changed.
    full_read : bool
        Read every task even with a saved state (which is then not used, and saved again).
    full_pass_every : int, optional
        ``serve``'s schedule: every this many cycles read every task (:func:`incremental`); by default only
        the first cycle does, and only when no saved state was restored.
    write : callable, optional
        Given the stale tasks; None writes nothing (a dry run, the report's read).
    tabs : bool
        Keep the "Below ground truth" tab (with ``min_gt_accuracy``): set on the monitor's first cycle, and again
        when who is below ground truth changed, at most every :data:`TAB_SETTLE` seconds.
    review_tab : bool
        Create or update the "Low agreement" tab, once the project is read.
    people : mapping of str to str, optional
        Annotator id -> name: who agrees with whom and the references are published
        (:meth:`ProjectMonitor.publish`); None publishes nothing (the report's read).
    save : bool
        Save the state after the writes (with ``files``).
    max_rate, progress
        As :func:`plugin.keeper.passes.full_pass`.

    Raises
    ------
    LabelStudioError
        If the project cannot be read; the state in place stays.
    """
    restored: dict[str, Any] = {}
    if files is not None and full_read:
        monitor.record_saved_state("not used", {"at": now_iso(), "reason": "a full read was asked (--full-read)"})
    elif files is not None and not monitor.saved_state():  # the monitor's first cycle: none tried yet
        if controls is None:
            controls = parse_label_config(client.label_config(monitor.project))
        restored = _restore(monitor, files, controls)
    read = full_pass(client, monitor, controls=controls, max_rate=max_rate, progress=progress,
                     incremental=incremental(monitor, full_pass_every=full_pass_every))
    cycle = Cycle(read=read, **restored)
    if review_tab:
        ensure_review_tab(client, monitor.project, monitor.review)
    if write is not None and read.stale:
        write(read.stale)
    if people is not None:
        cycle.references = _published(monitor, people)
    if files is not None and save:  # before the tab: a tab Label Studio refuses costs no saved state
        try:
            monitor.save_changes(files)
        except Exception as error:  # noqa: BLE001 (a full disk, memory: recorded; the next cycle tries again)
            cycle.errors.append(("state not saved", one_line(error)))
    if tabs and monitor.scoring.min_gt_accuracy is not None:
        # Set when who is below ground truth (or the tab's options) changed since this process last set it: an idle
        # pass of serve makes no request for it (two before: the project's tabs, and the tab's update).
        # At most every TAB_SETTLE seconds: with few ground-truth items, an annotator's accuracy crosses the bound
        # back and forth while annotation goes on, and each update of a tab is a write Label Studio's SQLite
        # database can refuse beside the annotators' own ("database is locked", seen on the demo).
        below = below_ground_truth(cycle.references)
        wanted = (monitor.review, below)
        held = monitor.tabs_set.get("ground truth")
        now = time.monotonic()
        if not isinstance(held, tuple) or (held[0] != wanted and now - held[1] >= TAB_SETTLE):
            ensure_ground_truth_tab(client, monitor.project, monitor.review, below)
            monitor.tabs_set["ground truth"] = (wanted, now)
    return cycle
