"""Label Studio's JSON export, read offline: no server, no SDK.

The tasks of an export file are the same records the client reads page by
page, so they fill a project state the same way
(:meth:`plugin.state.project.ProjectState.from_tasks`).
"""

from __future__ import annotations

import json
import re
from array import array
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from typing import Any, TextIO, TypeVar

import numpy as np

from plugin.bugs import InputError
from plugin.mapping.annotations import people_of_tasks
from plugin.mapping.labelconfig import Control, infer_controls, parse_label_config

__all__ = ["CHUNK", "Export", "iter_entries", "open_export"]


T = TypeVar("T")

CHUNK = 1 << 20
"""Characters read from an export file at a time."""
_SPACE = re.compile(r"[ \t\n\r]*")
_NUMBER = re.compile(r"[0-9eE+\-.]*")  # what may follow a number's first characters


def _merge_into(first: dict[str, Any], task: Mapping[str, Any]) -> None:
    """Merge a later ``task`` with the same id into ``first``.

    The data of ``first`` stays; the annotations of both are kept, unique by annotation id.
    """
    annotations = first.get("annotations") if isinstance(first.get("annotations"), list) else []
    seen = {a.get("id") for a in annotations if isinstance(a, dict) and a.get("id") is not None}
    extra = task.get("annotations") if isinstance(task.get("annotations"), list) else []
    for annotation in extra:
        key = annotation.get("id") if isinstance(annotation, dict) else None
        if key is None or key not in seen:
            annotations = [*annotations, annotation]
            seen.add(key)
    first["annotations"] = annotations


def _json_min(entry: Any) -> bool:
    """Whether a list entry is a JSON-MIN row.

    A JSON-MIN row is flat task data with ``annotator``/``annotation_id``, and no annotations.
    """
    return isinstance(entry, dict) and "annotations" not in entry and "completions" not in entry and (
        "annotation_id" in entry or "annotator" in entry)


def _as_task(entry: Any) -> Any:
    """A pre-1.0 task's ``completions`` read as its annotations; any other entry as it is."""
    if isinstance(entry, dict) and "annotations" not in entry and isinstance(entry.get("completions"), list):
        return {**{k: v for k, v in entry.items() if k != "completions"}, "annotations": entry["completions"]}
    return entry


def _key(entry: Any) -> Any:
    """The id two entries must share to be one task, or None.

    An entry without a usable id is never merged.
    """
    identifier = entry.get("id") if isinstance(entry, dict) else None
    return None if identifier is None or isinstance(identifier, (dict, list)) else identifier


def iter_entries(path: Path) -> Iterator[Any]:
    """The entries of the JSON list in the file at ``path``, one at a time.

    The file is read :data:`CHUNK` characters at a time and never held whole.

    Raises
    ------
    InputError
        If the file does not exist, is not JSON, or is not a JSON list (raised when the broken part is reached).
    """
    try:
        stream = path.open(encoding="utf-8-sig")
    except FileNotFoundError:
        raise InputError(f"{path} does not exist.") from None
    except IsADirectoryError:
        raise InputError(f"{path} is a directory, not an export file.") from None
    with stream:
        try:
            yield from _list_entries(stream, path)
        except UnicodeDecodeError as error:
            raise InputError(f"{path} is not a JSON export: {error}.") from None


def _list_entries(stream: TextIO, path: Path) -> Iterator[Any]:
    decoder = json.JSONDecoder()
    buffer, at, before, done = "", 0, 0, False  # ``before``: characters dropped from the buffer's front

    def more(size: int = CHUNK) -> bool:
        nonlocal buffer, at, before, done
        chunk = "" if done else stream.read(size)
        if not chunk:
            done = True
            return False
        before += at
        buffer, at = buffer[at:] + chunk, 0
        return True

    def peek() -> str:
        nonlocal at
        while True:
            at = _SPACE.match(buffer, at).end()  # type: ignore[union-attr]
            if at < len(buffer) or not more():
                return buffer[at: at + 1]

    def broken(what: str) -> InputError:
        return InputError(f"{path} is not a JSON export: {what} at character {before + at}.")

    if peek() != "[":
        whole = buffer[at:] + stream.read()
        try:
            json.loads(whole)
        except json.JSONDecodeError as error:
            raise InputError(f"{path} is not a JSON export: {error}.") from None
        raise InputError(f"{path} is not a Label Studio JSON export (a list of tasks).")
    at += 1
    first = True
    while True:
        char = peek()
        if char == "]":
            at += 1
            if peek():
                raise broken("extra data after the list")
            return
        if not char:
            raise broken("the file ends before its list does")
        if not first:
            if char != ",":
                raise broken("expected ',' or ']'")
            at += 1
            char = peek()
        size = CHUNK
        while True:
            try:
                entry, end = decoder.raw_decode(buffer, at)
            except json.JSONDecodeError as error:
                if more(size):  # an entry cut at the end of the buffer: read on (more each time), and try again
                    size *= 2
                    continue
                raise InputError(f"{path} is not a JSON export: {error.msg} at character {before + error.pos}."
                                 ) from None
            except RecursionError:
                raise broken("an entry nested deeper than a JSON reader goes") from None
            if (isinstance(entry, (int, float)) and _NUMBER.match(buffer, end).end() == len(buffer)  # type: ignore[union-attr]
                    and more(size)):  # a number may go on in the next chunk
                continue
            break
        yield entry
        at, first = end, False


class Export:
    """A Label Studio JSON export file, read as a stream (:func:`open_export` scans it first).

    Iterating gives its tasks, read from the file again each time, one at a
    time, never the whole file at once: the JSON export (``annotations``)
    and the pre-1.0 export, whose tasks hold ``completions``, read as
    annotations. Tasks that appear twice with one id (two exports
    concatenated) are merged, their annotations kept once each by annotation
    id, and come where their last copy is. Entries that are not tasks are
    counted and skipped downstream.

    Attributes
    ----------
    path : Path
    duplicates : dict
        The ids of the tasks that appear more than once, and the index of the
        entry of each that comes last.
    people : dict of str to str
        Annotator id -> name, from the user objects the export writes
        (:func:`plugin.mapping.annotations.people_of_tasks`).
    n_entries : int
        Entries of the file's list.
    """

    def __init__(self, path: Path, *, duplicates: dict[Any, int], people: dict[str, str], n_entries: int) -> None:
        self.path = path
        self.duplicates = duplicates
        self.people = people
        self.n_entries = n_entries

    def __iter__(self) -> Iterator[Any]:
        merged: dict[Any, dict[str, Any]] = {}
        for index, entry in enumerate(iter_entries(self.path)):
            task = _as_task(entry)
            key = _key(task)
            last = self.duplicates.get(key) if key is not None else None
            if last is None:
                yield task
                continue
            if key in merged:
                _merge_into(merged[key], task)
            else:
                merged[key] = dict(task)
            if index == last:  # its last copy: the task is whole
                yield merged.pop(key)


def _scan(path: Path, seen: dict[str, Any]) -> Iterator[Any]:
    """The tasks of the file at ``path`` as read (without merging).

    Notes in ``seen`` what :class:`Export` needs: its duplicate ids, how many entries are JSON-MIN rows, its
    people.
    """
    ids: array[int] = array("q")  # 64-bit integer ids, and the index of their entry
    places: array[int] = array("q")
    others: dict[Any, list[int]] = {}  # any other id: how many times, and its last entry
    people: dict[str, str] = {}
    n_entries = n_min = n_objects = 0
    for entry in iter_entries(path):
        n_min += _json_min(entry)
        n_objects += isinstance(entry, dict)
        task = _as_task(entry)
        key = _key(task)
        if isinstance(key, int) and not isinstance(key, bool) and -(2**63) <= key < 2**63:
            ids.append(key)
            places.append(n_entries)
        elif key is not None:
            count = others.setdefault(key, [0, 0])
            count[0] += 1
            count[1] = n_entries
        for person, name in people_of_tasks([task]).items():
            people.setdefault(person, name)
        n_entries += 1
        yield task
    duplicates: dict[Any, int] = {}
    if ids:
        keys, at = np.frombuffer(ids, dtype=np.int64), np.frombuffer(places, dtype=np.int64)
        order = np.lexsort((at, keys))  # by id, then by place
        ordered = keys[order]
        last = np.flatnonzero(np.append(ordered[1:] != ordered[:-1], True))  # each id's last entry
        first = np.append(0, last[:-1] + 1)
        repeated = last[last > first]
        duplicates.update(zip(ordered[repeated].tolist(), at[order][repeated].tolist(), strict=True))
    duplicates.update({key: at for key, (count, at) in others.items() if count > 1})
    seen.update(n_entries=n_entries, n_min=n_min, n_objects=n_objects, people=people, duplicates=duplicates)


def _scanned(path: Path, read: Callable[[Iterator[Any]], T]) -> tuple[Export, T]:
    """The :class:`Export` one pass over ``path`` finds, and what ``read`` makes of its tasks on the way.

    Other formats, JSON-MIN and a list without a task object are refused. ``read`` may stop early: the pass goes
    on to the end.
    """
    _refuse_other_formats(path)
    seen: dict[str, Any] = {}
    tasks = _scan(path, seen)
    made = read(tasks)
    for _ in tasks:
        pass
    if seen["n_entries"] and not seen["n_objects"]:
        raise InputError(f"{path} is not a Label Studio JSON export: none of its {seen['n_entries']} entries is a "
                         "task (a JSON object).")
    if seen["n_entries"] and seen["n_min"] > seen["n_entries"] / 2:
        raise InputError(f"{path} is a JSON-MIN export, which drops result types, region ids and skipped annotations: "
                         "export the project as JSON (Export, JSON) and pass that file.")
    return Export(path, duplicates=seen["duplicates"], people=seen["people"], n_entries=seen["n_entries"]), made


def _refuse_other_formats(path: Path) -> None:
    """CSV and TSV exports are refused, with a line that names the JSON export."""
    try:
        with path.open("rb") as stream:
            head = stream.read(4000)
    except (FileNotFoundError, IsADirectoryError):
        return  # said by iter_entries
    header = head.split(b"\n")[0].lower()
    columns = set(header.replace(b"\t", b",").replace(b'"', b"").strip().split(b","))
    if path.suffix.lower() in (".csv", ".tsv") or (b"id" in columns and columns & {b"annotator", b"annotation_id"}):
        kind = "TSV" if path.suffix.lower() == ".tsv" or b"\t" in header else "CSV"
        raise InputError(f"{path} looks like a {kind} export, which drops result types and region ids: "
                         "export the project as JSON (Export, JSON) and pass that file.")


def open_export(path: Path, *, label_config: str | None = None) -> tuple[Export, dict[str, Control]]:
    """The export at ``path`` and its controls.

    Its tasks are read as a stream when iterated. The controls come from ``label_config`` (the labeling config's
    XML), else are inferred from the results.

    One pass over the file checks it, finds its duplicate ids and its people
    and, without a config, infers its controls; the file is never held whole.
    JSON-MIN, CSV and TSV exports are refused, with a line that names the
    JSON export: JSON-MIN keeps one annotation per row without result types
    or region ids, and without ``was_cancelled`` or ``ground_truth``, so what
    counts and which answers belong to which region cannot be known from it.

    Raises
    ------
    InputError
        If the file cannot be read, is not a JSON list of task objects, or is an export this cannot score.
    """
    return _scanned(path, lambda tasks: dict(parse_label_config(label_config) if label_config
                                             else infer_controls(tasks)))
