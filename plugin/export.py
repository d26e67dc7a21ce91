"""Label Studio's JSON export, read offline: no server, no SDK.

The tasks of an export file are the same records the client reads page by
page, so they fill a project state the same way
(:meth:`plugin.state.ProjectState.from_tasks`).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from plugin.labelconfig import Control, infer_controls, parse_label_config

__all__ = ["export_project", "read_export"]


def _merge_duplicates(tasks: list[Any]) -> list[Any]:
    """Tasks with one id merged into one: the first's data, the annotations of all, unique by annotation id."""
    merged: dict[Any, dict[str, Any]] = {}
    out: list[Any] = []
    for task in tasks:
        identifier = task.get("id") if isinstance(task, dict) else None
        if identifier is None or isinstance(identifier, (dict, list)):
            out.append(task)
            continue
        if identifier not in merged:
            merged[identifier] = dict(task)
            out.append(merged[identifier])
            continue
        first = merged[identifier]
        annotations = first.get("annotations") if isinstance(first.get("annotations"), list) else []
        seen = {a.get("id") for a in annotations if isinstance(a, dict) and a.get("id") is not None}
        extra = task.get("annotations") if isinstance(task.get("annotations"), list) else []
        for annotation in extra:
            key = annotation.get("id") if isinstance(annotation, dict) else None
            if key is None or key not in seen:
                annotations = [*annotations, annotation]
                seen.add(key)
        first["annotations"] = annotations
    return out


def _json_min(entry: Any) -> bool:
    """Whether a list entry is a JSON-MIN row: flat task data with ``annotator``/``annotation_id``, no annotations."""
    return isinstance(entry, dict) and "annotations" not in entry and "completions" not in entry and (
        "annotation_id" in entry or "annotator" in entry)


def read_export(path: Path) -> list[Any]:
    """Tasks from a Label Studio JSON export file (a list of tasks).

    Reads the JSON export (``annotations``) and the pre-1.0 export, whose
    tasks hold ``completions``: these are read as annotations. Tasks that
    appear twice with one id (two exports concatenated) are merged, their
    annotations kept once each by annotation id. JSON-MIN, CSV and TSV exports
    are refused, with a line that names the JSON export: JSON-MIN keeps one
    annotation per row without result types or region ids, and without
    ``was_cancelled`` or ``ground_truth``, so what counts and which answers
    belong to which region cannot be known from it.

    Raises
    ------
    ValueError
        If the file cannot be read, is not a JSON list of task objects, or is an export this cannot score.
    """
    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        raise ValueError(f"{path} does not exist.") from None
    except IsADirectoryError:
        raise ValueError(f"{path} is a directory, not an export file.") from None
    header = raw[:4000].split(b"\n")[0].lower()
    columns = set(header.replace(b"\t", b",").replace(b'"', b"").strip().split(b","))
    if path.suffix.lower() in (".csv", ".tsv") or (b"id" in columns and columns & {b"annotator", b"annotation_id"}):
        kind = "TSV" if path.suffix.lower() == ".tsv" or b"\t" in header else "CSV"
        raise ValueError(f"{path} looks like a {kind} export, which drops result types and region ids: export the project "
                         "as JSON (Export, JSON) and pass that file.")
    try:
        data = json.loads(raw)
    except (UnicodeDecodeError, json.JSONDecodeError) as error:
        raise ValueError(f"{path} is not a JSON export: {error}.") from None
    if not isinstance(data, list):
        raise ValueError(f"{path} is not a Label Studio JSON export (a list of tasks).")  # noqa: TRY004 - bad input
    if data and sum(_json_min(entry) for entry in data) > len(data) / 2:
        raise ValueError(f"{path} is a JSON-MIN export, which drops result types, region ids and skipped annotations: "
                         "export the project as JSON (Export, JSON) and pass that file.")
    tasks = []
    for task in data:
        if isinstance(task, dict) and "annotations" not in task and isinstance(task.get("completions"), list):
            task = {**{k: v for k, v in task.items() if k != "completions"}, "annotations": task["completions"]}
        tasks.append(task)
    return _merge_duplicates(tasks)  # entries that are not tasks are counted and skipped downstream


def export_project(path: Path, *, label_config: str | None = None) -> tuple[list[Any], dict[str, Control]]:
    """The tasks of the export at ``path`` and their controls: from ``label_config`` (the labeling config's XML),
    else inferred from the results.

    Raises
    ------
    ValueError
        If the file cannot be read or scored (see :func:`read_export`).
    """
    tasks = read_export(path)
    return tasks, dict(parse_label_config(label_config) if label_config else infer_controls(tasks))
