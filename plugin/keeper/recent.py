"""A task as its annotation events say it is: a read the write's answer checks, so an event costs no read.

Label Studio's webhook for an annotation created or updated one at a time
carries the annotation as saved and the task's own fields as the save left
them (its data, meta and ``updated_at``, and how many annotations and
predictions it has), but not its other annotations. Those are kept from the
task's last read or write, for the tasks read most recently
(:class:`RecentTasks`, bounded in bytes for each project); a task the state
holds with no annotation and no prediction needs none, and a pass keeps the
predictions of tasks with no annotation while there is room.
:func:`provisional_read` puts them together into the task as a read would
give it, or gives None when they do not add up: an annotation or a
prediction missing (an event lost, an annotation deleted), and then the task
is read.

No score made from it is believed unchecked: a write made from it is checked against
Label Studio's answer, which holds the task as the write left it
(:func:`plugin.state.stamps.answer_holds_read`); when the answer holds other
annotations or predictions, or another overlap, the task is read again and
written from that read, and a provisional read that asks for no write, or
for a prediction's or an escalation's, is confirmed by a read first
(:func:`plugin.keeper.passes.refresh_tasks`). So the scores a task keeps are
computed from what Label Studio's own answer holds, as with a read; the
event saves the read. The meta they are merged into, and the data, are the
event's (docs/serve.md says what a forged event can do with them).
"""

from __future__ import annotations

import json
import sys
from collections import OrderedDict
from collections.abc import Mapping, Sequence
from datetime import UTC, datetime
from typing import Any

from plugin.clock import parse_time
from plugin.labelstudio.events import SavedAnnotation

__all__ = ["RECENT_BYTES", "RecentTasks", "provisional_read"]

RECENT_BYTES = 8 * 2**20
"""Most bytes :class:`RecentTasks` keeps for one project (the least recently kept tasks are dropped first)."""
_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)


class RecentTasks:
    """The annotations, predictions, meta and ``updated_at`` of the tasks read most recently, within a bound.

    Kept as compact JSON (bytes: small, and never walked by the garbage collector), about a kilobyte a task
    with three annotations of the demo's shape. Not thread-safe: its owner locks it.

    Parameters
    ----------
    most_bytes : int
        Most bytes kept in all.
    """

    def __init__(self, *, most_bytes: int = RECENT_BYTES) -> None:
        self._most = most_bytes
        self._held: OrderedDict[int, bytes] = OrderedDict()
        self._bytes = 0

    def __len__(self) -> int:
        return len(self._held)

    def __contains__(self, task: object) -> bool:
        return task in self._held

    @property
    def bytes(self) -> int:
        """Bytes kept: the JSON, its objects and the map's entries (``/status`` ``memory_bytes`` adds them)."""
        return self._bytes

    def keep(self, task: Mapping[str, Any], *, if_room: bool = False) -> None:
        """Keep ``task`` as Label Studio just gave it whole (a read, a write's answer); one of no shape is dropped.

        ``if_room``: only while the bound holds it without dropping another (a pass's read of every task keeps the
        first it reads, where annotators of a project served in order start, and never pushes out the tasks events
        brought).
        """
        identifier, annotations, predictions = task.get("id"), task.get("annotations"), task.get("predictions")
        if not isinstance(identifier, int) or isinstance(identifier, bool):
            return
        self.drop(identifier)
        if not isinstance(annotations, list) or not isinstance(predictions, list):
            return
        try:
            text = json.dumps({"annotations": annotations, "predictions": predictions, "meta": task.get("meta"),
                               "updated_at": task.get("updated_at")}, separators=(",", ":")).encode()
        except (TypeError, ValueError):  # not JSON as Label Studio sends it: read the task when it is next needed
            return
        size = _size(text)
        if size > self._most or (if_room and self._bytes + size > self._most):
            return
        self._held[identifier] = text
        self._bytes += size
        while self._bytes > self._most:
            _, dropped = self._held.popitem(last=False)
            self._bytes -= _size(dropped)

    def drop(self, task: int) -> None:
        """Forget ``task`` (deleted, or its last write's answer held what was not expected)."""
        text = self._held.pop(task, None)
        if text is not None:
            self._bytes -= _size(text)

    def last_read(self, task: int) -> dict[str, Any] | None:
        """``task``'s annotations, predictions, meta and ``updated_at`` as last kept (None: not kept)."""
        text = self._held.get(task)
        return None if text is None else json.loads(text)


def _size(text: bytes) -> int:
    """What one kept task costs: its bytes object and its entry in the ordered map (about 100 bytes)."""
    return sys.getsizeof(text) + 100


def _task_time(saved: SavedAnnotation) -> datetime:
    """When the save left ``saved``'s task (its ``updated_at``; the epoch when unreadable)."""
    return parse_time(saved.task_fields.get("updated_at")) or _EPOCH


def _newer(saved: SavedAnnotation, than: Mapping[str, Any] | None) -> bool:
    """Whether ``saved``'s annotation is at least as new as ``than`` (the same annotation as held)."""
    if than is None:
        return True
    mine, theirs = parse_time(saved.annotation.get("updated_at")), parse_time(than.get("updated_at"))
    return mine is None or theirs is None or mine >= theirs


def provisional_read(saved: Sequence[SavedAnnotation], last_read: Mapping[str, Any]) -> dict[str, Any] | None:
    """The task as ``saved`` (its events, in the order they came) say it is, on top of ``last_read``; or None.

    ``last_read`` holds the task's ``annotations`` and ``predictions`` (and its ``meta`` and ``updated_at``, or
    None) as last read. Each saved annotation replaces the one with its id unless that one is newer, or is
    added. The task's fields are the newest event's; its meta is the last read's when that read is newer (this
    service's own write, answered after the event's save). None when they do not add up: the annotations and
    predictions differ in number from what the newest event's counts say.

    >>> fields = {"id": 3, "updated_at": "2026-01-01T00:00:02Z", "meta": {"a": 1}, "data": {},
    ...           "total_annotations": 2, "cancelled_annotations": 0, "total_predictions": 0}
    >>> one = {"id": 8, "updated_at": "2026-01-01T00:00:00Z", "result": []}
    >>> two = SavedAnnotation(3, {"id": 9, "updated_at": "2026-01-01T00:00:01Z", "result": []}, fields)
    >>> read = provisional_read([two], {"annotations": [one], "predictions": [], "meta": None, "updated_at": None})
    >>> [a["id"] for a in read["annotations"]], read["meta"]
    ([8, 9], {'a': 1})
    >>> provisional_read([two], {"annotations": [], "predictions": [], "meta": None, "updated_at": None}) is None
    True
    """
    if not saved:
        return None
    annotations: dict[Any, Mapping[str, Any]] = {}
    for annotation in last_read.get("annotations") or []:
        if isinstance(annotation, Mapping):
            annotations[annotation.get("id")] = annotation
    for event in saved:
        key = event.annotation.get("id")
        if _newer(event, annotations.get(key)):
            annotations[key] = event.annotation
    predictions = list(last_read.get("predictions") or [])
    fields = max(reversed(saved), key=_task_time).task_fields  # the newest; of equals, the last to come
    if len(annotations) != fields["total_annotations"] + fields["cancelled_annotations"] \
            or len(predictions) != fields["total_predictions"]:
        return None
    read_at, event_at = parse_time(last_read.get("updated_at")), parse_time(fields.get("updated_at"))
    newer = read_at is not None and event_at is not None and read_at > event_at
    return {**fields, "meta": last_read.get("meta") if newer else fields.get("meta"),
            "updated_at": last_read.get("updated_at") if newer else fields.get("updated_at"),
            "annotations": list(annotations.values()), "predictions": predictions}
