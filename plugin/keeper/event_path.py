"""The event path of one project: which tasks an event names, and their refresh into the state.

:class:`EventPath` is one part of :class:`plugin.keeper.monitor.ProjectMonitor`: an event's tasks are resolved
(:meth:`EventPath.event_tasks`), read from Label Studio by the writer, and put into the state with their blocks
computed (:meth:`EventPath.refresh`); a write's answer is taken as a read (:meth:`EventPath.wrote`), and the
version of each task the state holds (:mod:`plugin.state.stamps`) lets a pass read only the others.
"""

from __future__ import annotations

import threading
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from plugin.clock import now_iso
from plugin.labelstudio.events import Event
from plugin.state.project import ProjectState
from plugin.state.stamps import answer_holds_read

__all__ = ["EventPath", "EventTasks"]


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
    state: ProjectState | None
    _deferred: set[int]
    _reading: bool
    _remap_to: dict[str, Any] | None

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

    def refresh(self, tasks: Iterable[int], fresh: Mapping[int, Mapping[str, Any]]) -> tuple[
            dict[int, str], dict[int, dict[str, Any]]]:
        """Put ``fresh`` (tasks as just read) into the state; return what left it, and the others' blocks.

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
            blocks = state.blocks([t for t in wanted if t not in gone], updated_at=now_iso())
        return gone, blocks

    def wrote(self, answer: Mapping[str, Any], read: Mapping[str, Any]) -> None:
        """Take Label Studio's ``answer`` to a write of the task ``read`` as a read of it.

        Only when it holds the annotations of ``read`` (:func:`plugin.state.stamps.answer_holds_read`): the state
        then holds the meta written and the write's ``updated_at``, and a pass neither reads the task again nor
        finds it stale. Otherwise an annotation came in between: the state forgets the task's stamp, and the next
        pass reads it.
        """
        with self._lock:
            if self.state is None:
                return
            if answer_holds_read(answer, read):
                self.state.set_task(answer)
            else:
                self.state.stamps.forget([read.get("id")])  # type: ignore[list-item]

    def unseen(self, listed: Iterable[Mapping[str, Any]]) -> list[int]:
        """The ``listed`` tasks (``id`` and ``updated_at``) whose version the state does not hold."""
        with self._lock:
            return self.state.stamps.unseen(listed) if self.state is not None else [
                t["id"] for t in listed if isinstance(t.get("id"), int)]
