"""The event path of one project: which tasks an event names, and their refresh into the state.

:class:`EventPath` is one part of :class:`plugin.keeper.monitor.ProjectMonitor`: an event's tasks are resolved
(:meth:`EventPath.event_tasks`), what an annotation's event says of its task is held (:meth:`EventPath.hold`)
until the writer refreshes the task, from that (:meth:`EventPath.provisional`, :mod:`plugin.keeper.recent`) or
from a read of it, and puts it into the state with its block computed (:meth:`EventPath.refresh`); a write's
answer is taken as a read (:meth:`EventPath.wrote`), and the version of each task the state holds
(:mod:`plugin.state.stamps`) lets a pass read only the others.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Collection, Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from plugin.clock import now_iso
from plugin.keeper.recent import RecentTasks, provisional_read
from plugin.labelstudio.events import Event, SavedAnnotation
from plugin.state.project import ProjectState
from plugin.state.stamps import answer_holds_read

__all__ = ["MOST_HELD", "EventPath", "EventTasks"]

MOST_HELD = 8
"""Most events on one task held for its refresh; past them it is read."""


@dataclass(frozen=True)
class EventTasks:
    """The tasks of one project an event names, as the project's state resolves them.

    Attributes
    ----------
    tasks : set of int
        Tasks to refresh: those the event names, and those of its annotations.
    deleted : list of int
        Deleted tasks the state knows.
    unseen_annotations : int
        Deleted annotations the state never saw.
    unknown_deletions : int
        Deleted tasks the state does not know.
    """

    tasks: set[int]
    deleted: list[int]
    unseen_annotations: int
    unknown_deletions: int


class EventPath:
    """An event's tasks, their refresh into the state, and the version of each task the state holds."""

    _lock: threading.RLock
    project: int
    state: ProjectState | None
    _deferred: set[int]
    _reading: bool
    _remap_to: dict[str, Any] | None
    _recent: RecentTasks  # the tasks read most recently, whole: what an event's provisional read starts from
    # by task, since its refresh: when its first event came and what its events said (None: one said nothing of
    # it, and it is read)
    _said: dict[int, tuple[float, list[SavedAnnotation]] | None]

    def knows(self, event: Event) -> bool:
        """Whether the state knows a task or an annotation the event names (an event that names no project)."""
        named = set(event.tasks) | set(event.deleted_tasks)
        with self._lock:
            state = self.state
            return state is not None and (any(t in state.tasks for t in named) or any(
                state.task_of_annotation(a) is not None for a in event.annotations))

    def event_tasks(self, event: Event) -> EventTasks:
        """The tasks of this project ``event`` names, as the state resolves its annotations and deletions."""
        tasks = set(event.tasks)
        unseen = 0
        with self._lock:
            state = self.state
            for annotation in event.annotations:
                task = state.task_of_annotation(annotation) if state is not None else None
                if task is None:
                    unseen += 1
                else:
                    tasks.add(task)
            deleted = [t for t in event.deleted_tasks if state is None or t in state.tasks]
        return EventTasks(tasks, deleted, unseen, len(event.deleted_tasks) - len(deleted))

    def hold(self, event: Event, tasks: Iterable[int]) -> None:
        """Keep what ``event`` says of each of ``tasks`` until the task's refresh (:meth:`provisional`).

        A task the event names without saying what it holds (a deletion, annotations created in bulk) is read at
        its refresh, whatever other events said of it; so is a task of a project not read yet or being re-mapped,
        and one with more than :data:`MOST_HELD` events waiting (the read costs less than keeping them).
        """
        said: dict[int, list[SavedAnnotation]] = {}
        for saved in event.saved:
            said.setdefault(saved.task, []).append(saved)
        now = time.monotonic()
        with self._lock:
            unread = self.state is None or self._remap_to is not None
            for task in tasks:
                held = self._said.get(task, (now, []))
                if unread or task not in said or held is None or len(held[1]) + len(said[task]) > MOST_HELD:
                    self._said[task] = None
                else:  # the first event's arrival: what its meta is as old as, at most
                    self._said[task] = (held[0], [*held[1], *said[task]])

    def provisional(self, tasks: Iterable[int]) -> dict[int, tuple[dict[str, Any], float]]:
        """Each of ``tasks`` that its events say all of, as a read would give it, and when the first of them came.

        A task's events say all of it when the task is kept as last read (:class:`plugin.keeper.recent.RecentTasks`),
        or the state holds it with no annotation, and their annotations and the task's counts add up
        (:func:`plugin.keeper.recent.provisional_read`); not while the project is unread or being re-mapped. What
        they said of every one of ``tasks`` is let go.
        """
        found: dict[int, tuple[dict[str, Any], float]] = {}
        with self._lock:
            for task in tasks:
                said = self._said.pop(task, None)
                if said is None or not self._said_stands(task, said):
                    continue
                read = provisional_read(said[1], self._recent.last_read(task) or {
                    "annotations": [], "predictions": [], "meta": None, "updated_at": None})
                if read is not None:
                    found[task] = (read, said[0])
        return found

    def needs_read(self, task: int) -> bool:
        """Whether the refresh of ``task`` reads it: what its events said, held now, cannot stand for a read.

        False leaves one check to :meth:`provisional`: that the events' annotations and the task's counts add up.
        """
        with self._lock:
            said = self._said.get(task)
            return said is None or not self._said_stands(task, said)

    def _said_stands(self, task: int, said: tuple[float, list[SavedAnnotation]]) -> bool:
        """Whether what events ``said`` of ``task`` can stand for its read (call with the lock held).

        Not for a task of a project unread or being re-mapped, one the state does not hold, one an event gives
        another project's fields for (refused from a read, not removed for an event's), and one with annotations
        that is not kept as last read (:class:`plugin.keeper.recent.RecentTasks`).
        """
        state = self.state
        if state is None or self._remap_to is not None or task not in state.tasks or any(
                saved.task_fields.get("project") not in (None, self.project) for saved in said[1]):
            return False
        return task in self._recent or not state.tasks[task].annotations

    def remember(self, task: Mapping[str, Any]) -> None:
        """Keep a task a pass read with predictions and no annotation, unless kept already, while there is room.

        Its first event then needs no read: the state does not hold what predictions a task has.
        """
        if task.get("annotations") == [] and task.get("predictions"):
            with self._lock:
                if task.get("id") not in self._recent:  # an event's read of it may be newer than this page
                    self._recent.keep(task, if_room=True)

    def defer_unread(self, tasks: Iterable[int]) -> bool:
        """Keep tasks for after the next pass while the project is unread or being re-mapped.

        Whether the project has not been read yet, or is being re-mapped under a changed label config; if so,
        ``tasks`` are refreshed after that pass (never scored with the old config's mapping)."""
        with self._lock:
            if self.state is None or self._remap_to is not None:
                self._deferred.update(tasks)
                return True
            return False

    def defer(self, tasks: Iterable[int]) -> None:
        """Refresh ``tasks`` after the next pass's read."""
        with self._lock:
            self._deferred.update(tasks)

    def refresh(self, tasks: Iterable[int], fresh: Mapping[int, Mapping[str, Any]], *,
                provisional: Collection[int] = ()) -> tuple[dict[int, str], dict[int, dict[str, Any]]]:
        """Put ``fresh`` (tasks as just read) into the state; return what left it, and the others' blocks.

        Those of ``provisional`` are not read but as their events said (:meth:`provisional`): the state takes
        them without their stamp, so that until a write's answer confirms them (:meth:`wrote`) a pass reads them.

        The refresh steps, written once: each of ``tasks`` is replaced with its
        fresh read, or forgotten when it was not read (deleted) or is refused
        (another project's); then the blocks of those kept are computed. While
        a pass reads pages that may be older than this read, the tasks are
        refreshed again after it.

        Returns
        -------
        gone : dict of int to str
            "gone" (known, and deleted since) or "not a task of this project".
        blocks : dict of int to dict
            The agreement block each other task should carry.
        """
        wanted = list(tasks)
        gone: dict[int, str] = {}
        with self._lock:
            state = self.state
            assert state is not None, "A task is refreshed only once the project has been read."
            if self._reading:
                self._deferred.update(wanted)
            for task in wanted:
                if task not in fresh or state.set_task(fresh[task]) is None:
                    gone[task] = "gone" if state.remove_task(task) else "not a task of this project"
                    self._recent.drop(task)
                elif task in provisional:
                    state.stamps.forget([task])
                else:
                    self._recent.keep(fresh[task])
            blocks = state.blocks([t for t in wanted if t not in gone], updated_at=now_iso())
        return gone, blocks

    def wrote(self, answer: Mapping[str, Any], read: Mapping[str, Any], *, provisional: bool = False) -> bool:
        """Take Label Studio's ``answer`` to a write of the task ``read`` as a read of it; whether it holds ``read``.

        Only when it holds the annotations of ``read`` (:func:`plugin.state.stamps.answer_holds_read`): the state
        then holds the meta written and the write's ``updated_at``, and a pass neither reads the task again nor
        finds it stale. Otherwise an annotation came in between (or ``read`` was its events', and wrong): the
        state forgets the task's stamp, and the next pass reads it. A ``provisional`` read (its events') is held
        only when the answer holds each annotation and prediction as it did, what scoring reads of them included,
        and its overlap.
        """
        held = answer_holds_read(answer, read, whole=provisional)
        with self._lock:
            if self.state is None:
                return held
            if held:
                self.state.set_task(answer)
                self._recent.keep(answer)
            else:
                self.state.stamps.forget([read.get("id")])  # type: ignore[list-item]
                self._recent.drop(read.get("id"))  # type: ignore[arg-type]
        return held

    def unseen(self, listed: Iterable[Mapping[str, Any]]) -> list[int]:
        """The ``listed`` tasks (``id`` and ``updated_at``) whose version the state does not hold."""
        with self._lock:
            return self.state.stamps.unseen(listed) if self.state is not None else [
                t["id"] for t in listed if isinstance(t.get("id"), int)]
