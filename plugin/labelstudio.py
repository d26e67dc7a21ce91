"""The one module that talks to Label Studio: reading projects and tasks, writing task meta.

Through label-studio-sdk 2.x. A legacy token and a personal access token (a
JWT, refreshed by the SDK) both work. Writes are retried with exponential
backoff on timeouts, connection errors, 429 and 5xx answers.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

import httpx
from label_studio_sdk import LabelStudio
from label_studio_sdk.core.api_error import ApiError

from plugin.settings import Connection

__all__ = ["LabelStudioClient", "LabelStudioError", "read_export"]

_RETRY_STATUS = {429, 500, 502, 503, 504}


class LabelStudioError(Exception):
    """Label Studio refused or failed a request; the message is one line for the user."""


def _describe(error: Exception) -> str:
    if isinstance(error, ApiError):
        body = error.body if isinstance(error.body, str) else json.dumps(error.body)[:200]
        if error.status_code in (401, 403):
            return f"Label Studio refused the API key ({error.status_code}): {body}"
        return f"Label Studio answered {error.status_code}: {body}"
    return f"Label Studio could not be reached: {type(error).__name__}: {error}"


def _retryable(error: Exception) -> bool:
    if isinstance(error, ApiError):
        return error.status_code in _RETRY_STATUS
    return isinstance(error, (httpx.TimeoutException, httpx.TransportError))


class LabelStudioClient:
    """Label Studio, as this project uses it.

    Parameters
    ----------
    connection : Connection
    httpx_client : httpx.Client, optional
        Injected HTTP client (tests use ``httpx.MockTransport``).
    sleep : callable, optional
        Waits between retries; injected by tests.
    """

    def __init__(self, connection: Connection, *, httpx_client: httpx.Client | None = None,
                 sleep: Callable[[float], None] = time.sleep) -> None:
        self._connection = connection
        self._sleep = sleep
        self._sdk = LabelStudio(base_url=connection.url, api_key=connection.api_key, timeout=connection.timeout,
                                httpx_client=httpx_client, max_retries=0)

    def _call(self, action: Callable[[], Any]) -> Any:
        delay = self._connection.backoff
        for attempt in range(self._connection.retries + 1):
            try:
                return action()
            except (ApiError, httpx.HTTPError) as error:
                if attempt == self._connection.retries or not _retryable(error):
                    raise LabelStudioError(_describe(error)) from None
                self._sleep(delay)
                delay *= 2
        raise AssertionError("unreachable")

    def label_config(self, project: int) -> str:
        """The project's labeling config (XML)."""
        return str(self._call(lambda: self._sdk.projects.get(id=project)).label_config or "")

    def tasks(self, project: int, *, on_total: Callable[[int], None] | None = None) -> Iterator[dict[str, Any]]:
        """Every task of ``project`` with its annotations, page by page, as plain dicts.

        ``on_total`` is told the number of tasks once the first page arrives.
        """
        pager = self._call(lambda: self._sdk.tasks.list(project=project, fields="all",
                                                        page_size=self._connection.page_size))
        if on_total is not None:
            on_total(int(getattr(pager.response, "total", 0) or 0))
        try:
            for page in pager.iter_pages():
                for task in page.items or []:
                    yield task.model_dump(mode="json")
        except ApiError as error:
            if error.status_code != 404:  # the SDK ends its pages with a 404
                raise LabelStudioError(_describe(error)) from None
        except httpx.HTTPError as error:
            raise LabelStudioError(_describe(error)) from None

    @property
    def writers(self) -> int:
        """How many meta updates may be sent at once."""
        return self._connection.writers

    def task_meta(self, task: int) -> Any:
        """The task's meta as it is now (read before merging a write)."""
        return self._call(lambda: self._sdk.tasks.get(id=str(task))).meta

    def ensure_webhook(self, project: int, *, url: str, actions: Sequence[str], headers: dict[str, str]) -> int:
        """Create the webhook to ``url`` on ``project``, or update the one that exists: no duplicates on restart."""
        hooks = self._call(lambda: self._sdk.webhooks.list(project=str(project)))
        options = {"actions": list(actions), "headers": headers, "send_payload": True,
                   "send_for_all_actions": False, "is_active": True}
        for hook in hooks:
            if hook.url == url and getattr(hook, "project", project) == project:
                identifier = int(hook.id)

                def update(identifier: int = identifier) -> Any:
                    return self._sdk.webhooks.update(id=identifier, url=url, **options)

                self._call(update)
                return identifier
        created = self._call(lambda: self._sdk.webhooks.create(url=url, project=project, **options))
        return int(created.id)

    def update_meta(self, task: int, meta: dict[str, Any]) -> None:
        """Replace the task's meta (callers merge first; see :mod:`plugin.writeback`)."""
        self._call(lambda: self._sdk.tasks.update(id=str(task), meta=meta))


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
