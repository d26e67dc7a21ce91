"""One project's state behind its lock, with what happened to it.

The monitor is the only holder of its lock: the pass, the refreshes, the
writer and the service ask it questions (:meth:`ProjectMonitor.status`,
:meth:`ProjectMonitor.knows`) and tell it what happened
(:meth:`ProjectMonitor.record_refreshes`, :meth:`ProjectMonitor.record_pass`),
and every step that reads or changes the state runs inside one of its methods.

:class:`ProjectMonitor` is made of parts by job, each in its module and each
taking the same lock: the cycle's steps here (the state a pass reads and
installs, and the questions asked of it); the event path
(:class:`plugin.keeper.event_path.EventPath`: an event's tasks, their refresh,
the version of each task held); the saved state's files
(:class:`plugin.keeper.saving.SavedStateKeeper`, the only part doing file
I/O); and the records (:class:`plugin.keeper.record.ProjectRecord`: outcomes,
timings, passes, ``/status``).
"""

from __future__ import annotations

import threading
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from datetime import datetime, timedelta
from typing import Any

from plugin.keeper.event_path import EventPath, EventTasks
from plugin.keeper.recent import RecentTasks
from plugin.keeper.record import EVENT_PARTS, AnnotatorRows, Outcome, PassReport, ProjectRecord, percentiles_ms
from plugin.keeper.saving import SavedStateKeeper
from plugin.labelstudio.events import SavedAnnotation
from plugin.mapping import MappedControl
from plugin.mapping.labelconfig import Control
from plugin.settings import MappingOptions, ProjectOptions, ReviewOptions, ScoringOptions
from plugin.state.project import ProjectScores, ProjectSnapshot, ProjectState

__all__ = ["EVENT_PARTS", "AnnotatorRows", "EventTasks", "Outcome", "PassReport", "ProjectMonitor", "percentiles_ms"]


class ProjectMonitor(EventPath, SavedStateKeeper, ProjectRecord):
    """One project's state behind a lock, with what happened to it.

    Parameters
    ----------
    project : int
    mapping, scoring : MappingOptions, ScoringOptions
    review : ReviewOptions, optional

    Attributes
    ----------
    state : ProjectState or None
        None until the first full pass has read the project. Read it without
        the monitor only where no other thread runs (a sync, a report).
    passes : int
        The service's passes done (their stale tasks requested).
    tabs_set : dict of str to object
        What this process last set each of the project's Data Manager tabs to, by tab: a cycle leaves a tab
        it would set as it is alone (no request).
    """

    def __init__(self, project: int, *, mapping: MappingOptions, scoring: ScoringOptions,
                 review: ReviewOptions | None = None) -> None:
        self.project = project
        self.mapping = mapping
        self.scoring = scoring
        self.review = review or ReviewOptions()
        self._lock = threading.RLock()
        self.state: ProjectState | None = None
        self._deferred: set[int] = set()  # refreshed while a pass was reading (or before the first): again after it
        self._reading = False
        self._remap_to: dict[str, Any] | None = None  # a changed config: events wait for a pass mapped with it
        self._recent = RecentTasks()
        self._said: dict[int, tuple[float, list[SavedAnnotation]] | None] = {}
        self.passes = 0
        self.tabs_set: dict[str, object] = {}
        self._memory: int | None = None
        self._watermark: datetime | None = None
        self._margin_read: datetime | None = None  # the watermark whose margin a read has looked into
        self._installs = 0
        super().__init__()  # each part's own: EventPath, SavedStateKeeper, ProjectRecord

    def version(self) -> tuple[int, int]:
        """Which state is in place and how often it has changed.

        Which state is in place (counted by :meth:`install`) and how often it has changed
        (:attr:`plugin.state.project.ProjectState.changes`): equal versions hold the same tasks."""
        with self._lock:
            return self._installs, self.state.changes if self.state is not None else -1

    def options(self) -> ProjectOptions:
        """The options the project is scored and reviewed with now."""
        with self._lock:
            return ProjectOptions(mapping=self.mapping, scoring=self.scoring, review=self.review)

    def reconfigure(self, options: ProjectOptions) -> None:
        """Score and review with new options from now on.

        Score and review with ``options`` from now on; the next pass reads every task under them (its state is
        rebuilt), and until then the state holds the options it was built with."""
        with self._lock:
            self.mapping, self.scoring, self.review = options.mapping, options.scoring, options.review

    def config_changed(self, controls: Mapping[str, Any]) -> bool:
        """Whether the label config differs from the one the state was mapped with.

        Whether ``controls`` (the label config as just read) differ from those the state was mapped with; if so,
        events wait until a pass installs a state mapped with them (:meth:`install`)."""
        wanted = dict(sorted(controls.items()))
        with self._lock:
            if self.state is None or self.state.control_specs == wanted:
                self._remap_to = None  # changed back before a pass re-mapped it: the state holds it already
                return False
            self._remap_to = wanted
            return True

    def read_position(self) -> tuple[ProjectState | None, datetime | None]:
        """The state and the newest ``updated_at`` it was read up to (None before the first pass)."""
        with self._lock:
            return self.state, self._watermark

    def changed_since(self, margin: timedelta) -> datetime | None:
        """Where the next read of changed tasks starts (None: no watermark, every task is read).

        ``margin`` below the watermark the first time after it moved, for writes that commit after a read though
        stamped before it; once a read has looked there, the watermark itself: an idle project's pass reads no
        task (it read every one of them again on each pass, until something changed).
        """
        with self._lock:
            if self._watermark is None:
                return None
            return self._watermark if self._margin_read == self._watermark else self._watermark - margin

    def n_tasks(self) -> int:
        """The number of tasks the state holds (0 before the first pass)."""
        with self._lock:
            return 0 if self.state is None else len(self.state.tasks)

    @contextmanager
    def reading(self, *, into_new_state: bool = True) -> Iterator[None]:
        """While a pass reads pages into a new state: refreshes meanwhile are done again after it.

        A read of changed tasks into the state in place (``into_new_state`` False) keeps an event's newer read of
        a task over its own older one (:meth:`set_task`), so events' tasks need no second read after it.
        """
        if not into_new_state:
            yield
            return
        with self._lock:
            self._reading = True
        try:
            yield
        finally:
            with self._lock:
                self._reading = False

    def set_task(self, task: Mapping[str, Any]) -> None:
        """Replace one task of the current state with ``task`` as read (a read of changed tasks)."""
        with self._lock:
            assert self.state is not None
            if not self.state.stamps.holds_newer(task):  # else an event's read of it came after this one: kept
                self.state.set_task(task)
                if task.get("id") in self._recent:  # the newer read, for the task's next event
                    self._recent.keep(task)

    def install(self, state: ProjectState, *, watermark: datetime | None,
                margin_read: datetime | None = None) -> list[int]:
        """Put the state a pass read in place; return the tasks to refresh one by one now.

        Those are the tasks refreshed while it read, and, when ``state`` is a
        new one, the tasks the old state knew that it lacks. ``margin_read`` is the watermark below which the read
        looked into the margin (:meth:`changed_since`).
        """
        with self._lock:
            old = self.state
            missing = set(old.tasks) - set(state.tasks) if old is not None and old is not state else set()
            recheck = sorted(missing | self._deferred)
            self._deferred = set()
            self._installs += state is not old
            self.state = state
            self._watermark = watermark
            self._margin_read = margin_read
            if self._remap_to is not None and state.control_specs == self._remap_to:
                self._remap_to = None
            return recheck

    def controls(self) -> Mapping[str, Control]:
        """The label config's controls the state is mapped with (none before the first pass)."""
        with self._lock:
            return self.state.control_specs if self.state is not None else {}

    def stale_tasks(self) -> list[int]:
        """Tasks whose meta (mirrored score, overlap), as last read, differ from what they should carry."""
        with self._lock:
            return [] if self.state is None else self.state.stale_tasks(review=self.review)

    def flag_counts(self) -> tuple[int, int] | None:
        """Tasks with a score and flagged tasks, as the last :meth:`stale_tasks` found them (None before)."""
        with self._lock:
            return None if self.state is None else getattr(self.state, "flag_counts", None)

    def mapped(self) -> dict[str, MappedControl]:
        """Every control's rows over all tasks (empty before the first pass), to score after the lock."""
        with self._lock:
            return self.state.mapped() if self.state is not None else {}

    def snapshot(self) -> ProjectSnapshot | None:
        """What the project's full scores are computed from (None before the first pass)."""
        with self._lock:
            return self.state.snapshot() if self.state is not None else None

    def scores(self) -> ProjectScores:
        """The full project scores of the state (after a pass)."""
        with self._lock:
            assert self.state is not None
            return self.state.scores()
