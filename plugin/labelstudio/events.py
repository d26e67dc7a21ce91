"""Webhook payloads, parsed at the edge into small events: the ids they name, and what an annotation's says.

An event says which tasks to refresh. The ``project`` object of a payload is
read for its id and dropped (it carries the project's token). An annotation
created or updated one at a time (ANNOTATION_CREATED, ANNOTATION_UPDATED) also
keeps the annotation as Label Studio saved it and the task's own fields as it
left them (:class:`SavedAnnotation`): the task's refresh may take them for a
read of it, and a score made from them reaches the task only through a write
whose answer Label Studio checks them against (:mod:`plugin.keeper.recent`).

The body must be UTF-8 JSON without NaN or Infinity; ids must be positive
integers. Anything else is a
:class:`BadEvent` with a one-line reason (the route answers 400).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, NoReturn

__all__ = ["EVENTS", "BadEvent", "Event", "SavedAnnotation", "parse_body", "parse_event"]

EVENTS = ("ANNOTATION_CREATED", "ANNOTATIONS_CREATED", "ANNOTATION_UPDATED", "ANNOTATIONS_DELETED", "TASKS_DELETED",
          "PROJECT_UPDATED")
"""The actions the service's webhooks ask for. PROJECT_UPDATED (a changed label config, a new title) names only its
project: the service reads the config and re-maps the project when it changed. Label Studio's open-source edition
offers PROJECT_CREATED and PROJECT_DELETED only to organization webhooks, which its API does not create: new and
deleted projects are found by reading the project list (:meth:`plugin.service.projects.ServiceState.discover`)."""
_MAX_ID = 2**63 - 1


class BadEvent(ValueError):
    """A webhook body that is not a valid event; the message is the one-line reason."""


@dataclass(frozen=True)
class SavedAnnotation:
    """One annotation as an event's payload gives it, with its task's own fields (no other annotation).

    Attributes
    ----------
    task : int
        The annotation's task.
    annotation : dict
        The annotation as Label Studio saved it (the fields a read of the task gives it).
    task_fields : dict
        The task's fields as the save left them: ``data``, ``meta``, ``updated_at``, and its counts of
        annotations (``total_annotations``, ``cancelled_annotations``) and predictions (``total_predictions``).
    """

    task: int
    annotation: dict[str, Any]
    task_fields: dict[str, Any]


@dataclass(frozen=True)
class Event:
    """A validated webhook event: the ids it names, and what an annotation's payload says of it.

    Attributes
    ----------
    action : str
    project : int or None
        The project the payload names (None when it names none, as
        ``DELETE /api/projects/P/tasks/`` sends).
    tasks : tuple of int
        Tasks whose annotations were created or updated.
    annotations : tuple of int
        Annotations deleted (ANNOTATIONS_DELETED names only these).
    deleted_tasks : tuple of int
        Tasks deleted.
    saved : tuple of SavedAnnotation
        What an ANNOTATION_CREATED or ANNOTATION_UPDATED payload says of its annotation and task, when it says
        it in the shape Label Studio sends (else empty: the task is read).
    """

    action: str
    project: int | None
    tasks: tuple[int, ...] = ()
    annotations: tuple[int, ...] = ()
    deleted_tasks: tuple[int, ...] = ()
    saved: tuple[SavedAnnotation, ...] = field(default=(), compare=False, repr=False)


def _reject_constant(name: str) -> NoReturn:
    raise BadEvent(f"The payload holds {name}, which is not JSON.")


def parse_body(body: bytes) -> Any:
    """Strict JSON: UTF-8, no NaN or Infinity, not nested past the interpreter's recursion limit.

    Raises
    ------
    BadEvent
    """
    try:
        text = body.decode("utf-8")
    except UnicodeDecodeError:
        raise BadEvent("The payload is not UTF-8.") from None
    try:
        return json.loads(text, parse_constant=_reject_constant)
    except RecursionError:
        raise BadEvent("The payload is nested too deeply.") from None
    except json.JSONDecodeError:
        raise BadEvent("The payload is not JSON.") from None


def _id(value: Any, what: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or not 0 < value <= _MAX_ID:
        raise BadEvent(f"{what} must be a positive integer id.")
    return value


def _object_id(value: Any, what: str) -> int:
    if isinstance(value, Mapping):
        return _id(value.get("id"), f"The id of {what}")
    return _id(value, what)


def _ids(entries: Any, what: str) -> tuple[int, ...]:
    if not isinstance(entries, list):
        raise BadEvent(f"{what} must be a list of objects with an id.")
    return tuple(_object_id(entry, f"each of {what}") for entry in entries)


def _project(payload: Mapping[str, Any]) -> int | None:
    project = payload.get("project")
    if project is None:
        return None
    return _object_id(project, "the project")


def _annotation_tasks(payload: Mapping[str, Any], action: str) -> tuple[int, ...]:
    annotations = payload.get("annotation")
    if action == "ANNOTATIONS_CREATED":
        annotations = payload.get("annotation", payload.get("annotations"))
        if not isinstance(annotations, list):
            raise BadEvent("ANNOTATIONS_CREATED needs a list of annotations.")
    else:
        annotations = [annotations]
    tasks = []
    for annotation in annotations:
        if not isinstance(annotation, Mapping):
            raise BadEvent("Each annotation must be an object.")
        _id(annotation.get("id"), "An annotation's id")
        tasks.append(_object_id(annotation.get("task"), "An annotation's task"))
    return tuple(dict.fromkeys(tasks))


_COUNTS = ("total_annotations", "cancelled_annotations", "total_predictions")


def _saved(payload: Mapping[str, Any], task: int) -> tuple[SavedAnnotation, ...]:
    """What a one-annotation payload says of its annotation and task, or nothing if it is not in Label Studio's shape.

    >>> fields = {"id": 3, "updated_at": "2026-01-01T00:00:00Z", "meta": {}, "data": {"text": "a"},
    ...           "total_annotations": 1, "cancelled_annotations": 0, "total_predictions": 0}
    >>> [s.task for s in _saved({"annotation": {"id": 9, "task": 3, "result": []}, "task": fields}, 3)]
    [3]
    >>> _saved({"annotation": {"id": 9, "task": 3, "result": []}, "task": {**fields, "total_predictions": None}}, 3)
    ()
    """
    annotation, fields = payload.get("annotation"), payload.get("task")
    if not isinstance(annotation, Mapping) or not isinstance(fields, Mapping) or fields.get("id") != task:
        return ()
    if not isinstance(annotation.get("result"), list) or not isinstance(fields.get("updated_at"), str) or any(
            isinstance(fields.get(count), bool) or not isinstance(fields.get(count), int) or fields[count] < 0
            for count in _COUNTS):
        return ()
    return (SavedAnnotation(task, dict(annotation), dict(fields)),)


def parse_event(payload: Any) -> Event | None:
    """The event a payload describes, or None for an action the service does not follow.

    Raises
    ------
    BadEvent
        For a payload of an unknown shape or with ids that are not positive integers.
    """
    if not isinstance(payload, Mapping) or not isinstance(payload.get("action"), str):
        raise BadEvent("The payload must be an object with an action.")
    action = payload["action"]
    if action not in EVENTS:
        return None
    project = _project(payload)
    if action == "ANNOTATIONS_DELETED":
        return Event(action, project, annotations=_ids(payload.get("annotations"), "annotations"))
    if action == "TASKS_DELETED":
        return Event(action, project, deleted_tasks=_ids(payload.get("tasks"), "tasks"))
    if action == "PROJECT_UPDATED":
        if project is None:
            raise BadEvent("PROJECT_UPDATED needs the project's id.")
        return Event(action, project)
    tasks = _annotation_tasks(payload, action)
    saved = _saved(payload, tasks[0]) if action in ("ANNOTATION_CREATED", "ANNOTATION_UPDATED") and tasks else ()
    return Event(action, project, tasks=tasks, saved=saved)
