"""Which version of each task a state holds: a pass reads in full only the tasks it has not seen.

Label Studio moves a task's ``updated_at`` on every change: an annotation
created, updated or deleted, and this service's own write of its meta. A pass
lists the tasks changed since its last read with their ``updated_at`` alone
(:meth:`plugin.labelstudio.client.LabelStudioClient.tasks`, ``stamps_only``),
and reads in full only those whose stamp differs from the one the state
holds: a task an event already brought, or whose only change is the meta this
service wrote, is not read again.

The stamps belong to the state (:attr:`plugin.state.project.ProjectState.stamps`): a task taken into it keeps its
stamp, a task removed loses it, and they are saved and restored with it, so the first pass after a restart reads
only what changed while no service ran.

A write's own stamp is taken from Label Studio's answer to it, and only when
that answer holds the annotations the state was given (each annotation's id
and ``updated_at``, :func:`answer_holds_read`): an annotation saved between the read and the write moves
the task's stamp before the write does, and would otherwise be hidden behind
it. Such a task stays unseen, and the next pass reads it.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from datetime import UTC, datetime
from typing import Any

from plugin.clock import parse_time

__all__ = ["Stamps", "annotation_stamps", "answer_holds_read", "task_contents"]

_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)


def _micros(moment: datetime) -> int:
    """A stamp as whole microseconds since 1970 (an int is exact and smaller than a datetime, kept per task)."""
    delta = moment - _EPOCH
    return (delta.days * 86_400 + delta.seconds) * 1_000_000 + delta.microseconds


def annotation_stamps(task: Mapping[str, Any]) -> frozenset[tuple[Any, datetime | None]] | None:
    """Each annotation's id and ``updated_at`` in ``task`` as Label Studio gave it (None: it gave none).

    >>> sorted(annotation_stamps({"annotations": [{"id": 2, "updated_at": "2026-01-01T00:00:00Z"}]}))
    [(2, datetime.datetime(2026, 1, 1, 0, 0, tzinfo=datetime.timezone.utc))]
    >>> annotation_stamps({"id": 1}) is None
    True
    """
    annotations = task.get("annotations")
    if not isinstance(annotations, list):
        return None
    return frozenset((a.get("id"), parse_time(a.get("updated_at"))) for a in annotations if isinstance(a, Mapping))


_ANNOTATION_FIELDS = ("result", "was_cancelled", "ground_truth", "completed_by", "created_at", "import_id",
                      "updated_by")
"""What scoring reads of an annotation besides its id and ``updated_at``."""
_PREDICTION_FIELDS = ("result", "model_version", "score", "created_at", "updated_at")
"""What scoring reads of a prediction besides its id."""
_ABSENT = "absent"  # a field left out, told apart from one given as null (``updated_by``: imported or not)


def _contents(entries: Any, fields: tuple[str, ...]) -> frozenset[tuple[Any, ...]] | None:
    if not isinstance(entries, list):
        return None
    try:
        return frozenset((e.get("id"), *(json.dumps(e[name], sort_keys=True) if name in e else _ABSENT
                                         for name in fields)) for e in entries if isinstance(e, Mapping))
    except (TypeError, ValueError):  # not JSON: held by nothing
        return frozenset({(object(),)})


def task_contents(task: Mapping[str, Any]) -> tuple[Any, ...] | None:
    """What scoring reads of ``task``: each annotation (its ``updated_at`` included) and prediction, its overlap.

    None when it gives no annotations.

    >>> read = {"annotations": [{"id": 2, "updated_at": "2026-01-01T00:00:00Z", "result": [{"value": 1}]}]}
    >>> task_contents(read) == task_contents({"annotations": [{**read["annotations"][0], "x": 1}]})
    True
    >>> task_contents(read) == task_contents({"annotations": [{**read["annotations"][0], "result": []}]})
    False
    >>> task_contents(read) == task_contents({**read, "overlap": 2})
    False
    """
    annotations = _contents(task.get("annotations"), ("updated_at", *_ANNOTATION_FIELDS))
    if annotations is None:
        return None
    return annotations, _contents(task.get("predictions") or [], _PREDICTION_FIELDS), task.get("overlap")


def answer_holds_read(answer: Mapping[str, Any], read: Mapping[str, Any], *, whole: bool = False) -> bool:
    """Whether a write's ``answer`` holds the annotations of ``read``, the task as read for that write, and a stamp.

    Their ids and ``updated_at``; with ``whole``, all that scoring reads of the task (:func:`task_contents`: for a
    ``read`` its events gave, which a forged event could have made up, and predictions an older read gave).

    >>> read = {"id": 1, "annotations": [{"id": 5, "updated_at": "2026-01-01T00:00:01Z"}]}
    >>> answer_holds_read({**read, "updated_at": "2026-01-01T00:01:00Z"}, read)
    True
    >>> answer_holds_read({**read, "updated_at": "2026-01-01T00:01:00Z", "annotations": []}, read)
    False
    """
    key = task_contents if whole else annotation_stamps
    held = key(read)
    return (isinstance(answer.get("id"), int) and held is not None and key(answer) == held
            and parse_time(answer.get("updated_at")) is not None)


class Stamps:
    """The ``updated_at`` of each task as a state last took it (not thread-safe: the state's owner locks it)."""

    def __init__(self) -> None:
        self._seen: dict[int, int] = {}

    def __len__(self) -> int:
        return len(self._seen)

    def saw(self, task: Mapping[str, Any]) -> None:
        """Keep the stamp of ``task``, as it was just taken into the state in full."""
        identifier, moment = task.get("id"), parse_time(task.get("updated_at"))
        if isinstance(identifier, int) and moment is not None:
            self._seen[identifier] = _micros(moment)
        elif isinstance(identifier, int):  # a read without a stamp: the next listing's is never this one
            self._seen.pop(identifier, None)

    def forget(self, tasks: Iterable[int]) -> None:
        """Drop the stamps of ``tasks`` (removed, or whose version the state may not hold)."""
        for task in tasks:
            self._seen.pop(task, None)

    def holds_newer(self, task: Mapping[str, Any]) -> bool:
        """Whether the state holds a newer version of ``task`` than this read of it (an event's read came later).

        >>> stamps = Stamps()
        >>> stamps.saw({"id": 1, "updated_at": "2026-01-01T00:01:00Z"})
        >>> stamps.holds_newer({"id": 1, "updated_at": "2026-01-01T00:00:00Z"}), stamps.holds_newer({"id": 2})
        (True, False)
        """
        held, moment = self._seen.get(task.get("id")), parse_time(task.get("updated_at"))  # type: ignore[arg-type]
        return held is not None and moment is not None and held > _micros(moment)

    def unseen(self, listed: Iterable[Mapping[str, Any]]) -> list[int]:
        """The ids of ``listed`` tasks (``id`` and ``updated_at``) whose stamp the state does not hold.

        >>> stamps = Stamps()
        >>> stamps.saw({"id": 1, "updated_at": "2026-01-01T00:00:00Z"})
        >>> stamps.unseen([{"id": 1, "updated_at": "2026-01-01T00:00:00.000Z"}, {"id": 2, "updated_at": None}])
        [2]
        """
        out = []
        for task in listed:
            identifier = task.get("id")
            if isinstance(identifier, int) and (
                    (moment := parse_time(task.get("updated_at"))) is None
                    or self._seen.get(identifier) != _micros(moment)):
                out.append(identifier)
        return out
