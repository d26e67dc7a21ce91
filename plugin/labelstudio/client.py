"""The one module that talks to Label Studio: reading projects and tasks, writing task meta.

Through label-studio-sdk 2.x. A legacy token and a personal access token (a
JWT, refreshed by the SDK) both work. Every request, reads and page reads
included, is retried with exponential backoff on timeouts, connection errors,
429 and 5xx answers, and on answers that are not JSON (a proxy's error page).
The client keeps how long Label Studio has been unreachable, for ``/health``, and counts every request it sends
by outcome, for ``/metrics``.

It is past 600 lines because it is the one place that calls Label Studio (a rule of the layout): each read,
write, page and retry is here, so no other module can make a request.
"""

from __future__ import annotations

import html
import json
import re
import threading
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from datetime import datetime
from typing import Any, TypeVar
from urllib.parse import urlsplit, urlunsplit

import httpx
from label_studio_sdk import LabelStudio
from label_studio_sdk.core.api_error import ApiError

from plugin.clock import parse_time
from plugin.labelstudio.errors import LabelStudioError, LabelStudioNotFound, one_line, squeeze
from plugin.mapping.annotations import person_name
from plugin.settings import Connection

__all__ = ["DEFAULT_VIEW", "REQUEST_OUTCOMES", "TOKEN_HINT", "LabelStudioClient", "LabelStudioError",
           "LabelStudioNotFound", "PeopleCache", "Reachability", "annotator_names", "one_line", "request_outcome",
           "squeeze"]

_T = TypeVar("_T")

_RETRY_STATUS = {429, 500, 502, 503, 504}


class _NotWhatWasAsked(ApiError):
    """A 2xx answer whose JSON is not what was asked for (a page of tasks, a task).

    It is retried as an answer that is not JSON.
    """

    def __init__(self, asked: str, response: httpx.Response) -> None:
        super().__init__(status_code=response.status_code, headers=dict(response.headers), body=response.text)
        self.asked = asked


TOKEN_HINT = ("A personal access token expires: make a new one in Label Studio under Account & Settings, Personal "
              "Access Token; a legacy token must be enabled for the organization (Organization, Settings, Access "
              "Token Settings).")


DETAIL_LIMIT = 120
"""The most characters of what Label Studio said that an error message quotes."""

_HTML = re.compile(r"<\s*(!doctype|html|head|body|title|h1|h2|p|div|pre)\b", re.IGNORECASE)


def _page_text(page: str) -> str:
    """An HTML page in a few words: its ``<title>``, else its text, tags and scripts left out.

    >>> _page_text("<!DOCTYPE html><html><head><title>Server Error (500)</title></head><body>...</body></html>")
    'Server Error (500)'
    >>> _page_text("<html><style>p {}</style><body><h1>Bad &amp; gone</h1>\\n<p>Try later.</p></body></html>")
    'Bad & gone Try later.'
    """
    title = re.search(r"<title[^>]*>(.*?)</title\s*>", page, re.IGNORECASE | re.DOTALL)
    if title and title.group(1).strip():
        text = title.group(1)
    else:
        text = re.sub(r"<(script|style)\b.*?</\1\s*>", " ", page, flags=re.IGNORECASE | re.DOTALL)
    return squeeze(html.unescape(re.sub(r"<[^>]*>", " ", text)), DETAIL_LIMIT)


def _detail(body: Any) -> str:
    """What Label Studio said, on one short line.

    That is the ``detail`` of its JSON answer when it gives one, the title or text of an HTML page (a server's or
    a proxy's error page), else the answer itself, cut to :data:`DETAIL_LIMIT` characters.
    """
    if isinstance(body, str):
        try:
            body = json.loads(body)
        except ValueError:
            return _page_text(body) if _HTML.search(body[:2000]) else squeeze(body, DETAIL_LIMIT)
    if isinstance(body, Mapping) and isinstance(body.get("detail"), str):
        return squeeze(body["detail"], DETAIL_LIMIT)
    return squeeze(body if isinstance(body, str) else json.dumps(body, default=str), DETAIL_LIMIT)


def shown_url(url: str) -> str:
    """Label Studio's URL as an error names it: no user or password, query or fragment, no trailing slash.

    >>> shown_url("https://me:pw@ls.example.org/ls/?token=x")
    'https://ls.example.org/ls'
    """
    parts = urlsplit(url.strip())
    return urlunsplit((parts.scheme, parts.netloc.rpartition("@")[2], parts.path.rstrip("/"), "", "")) or url


def _reason(error: Exception) -> str:
    """What an HTTP error of no answer says, without its errno: ``[Errno 111] Connection refused`` is that."""
    text = re.sub(r"^\[Errno [-\d]+\]\s*", "", squeeze(str(error), DETAIL_LIMIT)).rstrip(".")
    return text[:1].lower() + text[1:] if text else type(error).__name__


def _describe(error: Exception, *, url: str = "", asked: str | None = None, timeout: float | None = None) -> str:
    """A failed request to Label Studio as one line for the user, logs and ``/status``.

    It names the status, the request (``asked``, its method and path) and what Label Studio said in a few words;
    or, when no answer came, the URL tried (``url``, shown without credentials) and why. Never the token.
    """
    to = f" to {asked}" if asked else ""
    if isinstance(error, _NotWhatWasAsked):
        return (f"Label Studio's answer{to} ({error.status_code}) was not {error.asked}: "
                f"{squeeze(str(error.body), 80)}")
    if isinstance(error, ApiError):
        said = _detail(error.body).rstrip(".")
        if error.status_code is not None and 200 <= error.status_code < 300:
            return f"Label Studio's answer{to} ({error.status_code}) was not JSON: {said}"
        if error.status_code in (401, 403):
            on = f" on {asked}" if asked else ""
            return f"Label Studio refused the API key ({error.status_code}){on}: {said}. {TOKEN_HINT}"
        return f"Label Studio answered {error.status_code}{to}: {said}."
    where = shown_url(url) if url else "its URL"
    during = f" {asked}" if asked else " a request"
    if isinstance(error, httpx.ConnectTimeout):
        return f"Cannot reach Label Studio at {where}: the connection timed out."
    if isinstance(error, httpx.TimeoutException):
        within = f" within {timeout:g} s" if timeout else ""
        return f"Label Studio at {where} did not answer{during}{within} (--timeout sets the wait)."
    if isinstance(error, _DROPPED):
        return f"Label Studio at {where} closed the connection during{during}: {_reason(error)}."
    return f"Cannot reach Label Studio at {where}: {_reason(error)}."


_DROPPED = (httpx.RemoteProtocolError, httpx.ReadError, httpx.WriteError)
"""Errors of a connection closed under a request (not a refused or timed-out one): sent again at once, once."""


def _retryable(error: Exception) -> bool:
    if isinstance(error, ApiError):
        status = error.status_code or 0
        return status in _RETRY_STATUS or 200 <= status < 300  # 2xx here: a body that is not JSON
    return isinstance(error, (httpx.TimeoutException, httpx.TransportError))


REQUEST_OUTCOMES = ("ok", "client_error", "server_error", "unreachable")
"""What became of a request to Label Studio (:meth:`Reachability.count`)."""


def request_outcome(error: Exception | None) -> str:
    """What became of one request, from the error it raised (None: it succeeded).

    ``ok``; ``client_error``, a 4xx answer; ``server_error``, a 5xx answer or a 2xx that is not the JSON asked for
    (a proxy's page); ``unreachable``, no answer (refused, timed out, dropped).

    >>> request_outcome(None), request_outcome(ApiError(status_code=404, body="")), request_outcome(OSError())
    ('ok', 'client_error', 'unreachable')
    """
    if error is None:
        return "ok"
    if isinstance(error, ApiError) and error.status_code is not None:
        return "client_error" if 400 <= error.status_code < 500 else "server_error"
    return "unreachable"


class Reachability:
    """Since when Label Studio has failed every request (thread-safe); None while it answers.

    It also counts every request sent, by outcome (:data:`REQUEST_OUTCOMES`), for ``/metrics``.
    """

    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        self._clock = clock
        self._lock = threading.Lock()
        self._failing_since: float | None = None
        self.last_error: str | None = None
        self._requests: dict[str, int] = dict.fromkeys(REQUEST_OUTCOMES, 0)

    def count(self, outcome: str) -> None:
        """Count one request by its outcome (one of :data:`REQUEST_OUTCOMES`)."""
        with self._lock:
            self._requests[outcome] += 1

    def requests(self) -> dict[str, int]:
        """Requests sent so far, by outcome (every outcome, 0 included)."""
        with self._lock:
            return dict(self._requests)

    def ok(self) -> None:
        with self._lock:
            self._failing_since = None

    def failed(self, reason: str) -> None:
        with self._lock:
            if self._failing_since is None:
                self._failing_since = self._clock()
            self.last_error = reason

    def unreachable_for(self) -> float:
        """Seconds since the first of the failures that continue until now (0 while it answers)."""
        with self._lock:
            return 0.0 if self._failing_since is None else self._clock() - self._failing_since


CHANGED_PROBE = 10
"""Tasks asked for on the first page of a read of changed tasks (:meth:`LabelStudioClient.tasks`)."""

PROJECT_PAGE = 100
"""Projects asked for per page of the project list (the most Label Studio 1.23 gives: its ``max_page_size``)."""
LIGHT_WRITE = {"review": "true"}
"""The query of a meta write: Label Studio finds the task without the Data Manager's columns (:meth:`update_meta`)."""


def _count(value: Any) -> int | None:
    """A count from a JSON answer, None when it is not a whole number (an answer that does not say)."""
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else None


def _older(task: Any, moment: datetime) -> bool:
    """Whether a task as read was last changed at ``moment`` or before (False when it does not say)."""
    return isinstance(task, dict) and (changed := parse_time(task.get("updated_at"))) is not None \
        and changed <= moment


def _last_page(*, read: int, got: int, size: int, count: int | None, more: bool | None = None) -> bool:
    """Whether a paged read ends with the page just read, without asking for one past the last.

    ``read`` items so far, ``got`` on this page of ``size`` asked for; ``count``, the total the answer gives (None:
    it gives none); ``more``, whether the answer names a next page (None: it does not say). An empty page ends the
    read; with a count, reaching it does (so that a page Label Studio made smaller than asked does not); without,
    an answer without a next page, or a short page.

    >>> _last_page(read=20, got=10, size=10, count=20), _last_page(read=10, got=10, size=10, count=20)
    (True, False)
    >>> _last_page(read=100, got=100, size=500, count=250), _last_page(read=3, got=3, size=10, count=None)
    (False, True)
    >>> _last_page(read=0, got=0, size=10, count=5), _last_page(read=10, got=10, size=10, count=None, more=False)
    (True, True)
    """
    if got == 0:
        return True
    if count is not None:
        return read >= count
    if more is not None:
        return not more
    return got < size


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
        self.reachability = Reachability()
        self._sent = threading.local()  # this thread's latest request, "METHOD /path", named by its error
        try:  # the SDK checks a personal access token's expiry here, before any request
            self._sdk = LabelStudio(base_url=connection.url, api_key=connection.api_key, timeout=connection.timeout,
                                    httpx_client=httpx_client, max_retries=0)
        except ApiError as error:
            raise LabelStudioError(self._told(error)) from None
        sending = self._sdk._client_wrapper.httpx_client.httpx_client  # the SDK's own (as _get_json sends through)
        hooks = sending.event_hooks
        sending.event_hooks = {**hooks, "request": [*hooks.get("request", ()), self._note_request]}

    def requests_sent(self) -> int:
        """Requests this thread has sent so far, retries included (a pass counts its own: ``/status``)."""
        return int(getattr(self._sent, "count", 0))

    def _note_request(self, request: httpx.Request) -> None:
        """Keep the method and path of the request this thread sends (never its query or headers: no token)."""
        self._sent.request = f"{request.method} {request.url.path}"

    def _told(self, error: Exception) -> str:
        """A failed request as one line (:func:`_describe`): the request this thread sent last, and the URL."""
        told = _describe(error, url=self._connection.url, asked=getattr(self._sent, "request", None),
                         timeout=self._connection.timeout)
        key = self._connection.api_key
        return told.replace(key, "<token>") if key and len(key) >= 8 else told

    def _call(self, action: Callable[[], _T]) -> _T:
        delay = self._connection.backoff
        for attempt in range(self._connection.retries + 1):
            self._sent.request = None
            self._sent.count = getattr(self._sent, "count", 0) + 1
            try:
                result = action()
            except (ApiError, httpx.HTTPError) as error:
                self.reachability.count(request_outcome(error))
                if attempt == 0 < self._connection.retries and isinstance(error, _DROPPED):
                    # A kept-alive connection the server closed as it was reused (uwsgi's http router without
                    # http-keepalive does, and any server after its idle timeout): sent again at once on a new
                    # connection, neither waiting nor counting Label Studio as unreachable.
                    continue
                retryable = _retryable(error)
                told = self._told(error)
                if retryable:
                    self.reachability.failed(told)
                else:
                    self.reachability.ok()  # it answered, if only to refuse
                if attempt == self._connection.retries or not retryable:
                    if isinstance(error, ApiError) and error.status_code == 404:
                        raise LabelStudioNotFound(told) from None
                    raise LabelStudioError(told) from None
                self._sleep(delay)
                delay *= 2
            else:
                self.reachability.count("ok")
                self.reachability.ok()
                return result
        raise AssertionError("unreachable")

    def label_config(self, project: int) -> str:
        """The project's labeling config (XML)."""
        return str(self._call(lambda: self._sdk.projects.get(id=project)).label_config or "")

    def tasks(self, project: int, *, on_total: Callable[[int], None] | None = None,
              max_rate: float | None = None, updated_after: datetime | None = None,
              selected: str | None = None, stamps_only: bool = False) -> Iterator[dict[str, Any]]:
        """Every task of ``project`` with its annotations, page by page, as plain dicts.

        Each page is one request with its own retries, so a failure on page 7
        retries page 7. ``on_total`` is told the number of tasks once the
        first page arrives. ``max_rate`` (tasks per second) spaces the pages,
        so that a periodic full read leaves Label Studio room for annotators.
        ``updated_after`` reads only the tasks Label Studio changed after that
        moment (by its own clock): an annotation created, updated or deleted,
        a prediction created and a meta written all move a task's
        ``updated_at``. The tasks are read newest first and the read stops at
        the first one not newer: no time is sent, since the Data Manager's
        ``updated_at`` filter parses its value as a naive datetime and Label
        Studio then logs a ``RuntimeWarning`` on every such read. A task
        changed during the read moves to the front, so later pages show a task
        twice rather than skip one. ``on_total`` is told the number of every
        task of the project then (the read is ordered, not filtered): what
        :meth:`task_count` would say, without a request of its own.
        ``selected`` is a Data Manager query of its own (see
        :meth:`tasks_by_id`).

        A read of changed tasks asks first for a page of :data:`CHANGED_PROBE`
        tasks: Label Studio builds every task of a page it answers (500 tasks
        of three annotations, about 3.6 s on its development server; 10, 0.16
        s), and a pass finds few changed tasks, or none. Only when all of them
        are newer does it read on, in pages of the page size from the first
        (the probe's tasks are not given twice).

        The read ends where the pages do, without asking for a page past the
        last (Label Studio answers one with a 404, "Invalid page.", and logs a
        traceback): once the tasks read reach the ``total`` of the latest page
        (the page size Label Studio applied, which ``TASK_API_PAGE_SIZE_MAX``
        may cap, need not be the one asked for), or on an empty page; on a
        short page when an answer gives no total. A 404 past the first page
        (tasks deleted during the read) ends it too.

        ``stamps_only`` lists each task's ``id`` and ``updated_at`` alone
        (``fields=task_only&include=id,updated_at``): Label Studio then
        builds no annotation, and a pass reads in full only the tasks whose
        stamp the state has not seen (:func:`plugin.keeper.passes.full_pass`).
        """
        size = self._connection.page_size
        if updated_after is None:
            for items, _ in self._task_pages(project, size=size, query=selected, on_total=on_total,
                                             max_rate=max_rate, stamps_only=stamps_only):
                yield from items
            return
        query = json.dumps({"ordering": ["-tasks:updated_at"]})
        probe = min(size, CHANGED_PROBE)
        given: set[tuple[Any, Any]] = set()
        for items, last in self._task_pages(project, size=probe, query=query, on_total=on_total,
                                            max_rate=max_rate, stamps_only=stamps_only):
            for read in items:
                if _older(read, updated_after):
                    return  # newest first: every task from here on is older
                if isinstance(read, dict):
                    given.add((read.get("id"), read.get("updated_at")))
                yield read
            if last or probe == size:
                continue  # no probe (a page size this small), or its page was the last: the read ends with these
            break  # more changed tasks than the probe holds: pages of the page size, from the first
        else:
            return
        for items, _ in self._task_pages(project, size=size, query=query, on_total=None, max_rate=max_rate,
                                         stamps_only=stamps_only):
            for read in items:
                if _older(read, updated_after):
                    return
                if isinstance(read, dict) and (read.get("id"), read.get("updated_at")) in given:
                    continue  # given by the probe, unchanged since
                yield read

    def _task_pages(self, project: int, *, size: int, query: str | None, on_total: Callable[[int], None] | None,
                    max_rate: float | None, stamps_only: bool = False) -> Iterator[tuple[list[Any], bool]]:
        """Pages of ``GET /api/tasks/`` from the first, each as its tasks and whether it is the last.

        Each page is one request with its own retries; the next is asked for only once the one before has been
        taken, spaced by ``max_rate`` (tasks per second), and never past the last (:func:`_last_page`).
        ``on_total`` is told the first page's total.
        """
        page, seen = 1, 0
        while True:
            started = time.monotonic()
            body = self._call(lambda page=page: self._task_page(project, page=page, size=size, query=query,
                                                                stamps_only=stamps_only))
            items = [] if body is None else body["tasks"]
            total = _count(body.get("total")) if body is not None else None
            if page == 1 and on_total is not None and total is not None:
                on_total(total)
            seen += len(items)
            last = _last_page(read=seen, got=len(items), size=size, count=total)
            yield items, last
            if last:
                return
            page += 1
            if max_rate:
                self._sleep(max(0.0, len(items) / max_rate - (time.monotonic() - started)))

    def _task_page(self, project: int, *, page: int, size: int, query: str | None,
                   stamps_only: bool = False) -> dict[str, Any] | None:
        """One page of ``GET /api/tasks/`` as Label Studio's JSON, or None past the last page.

        Read as plain JSON (:meth:`_get_json`): the SDK's typed page would
        build a model of every task, which :meth:`tasks` then dumped back into
        the same dict, at about what mapping the task costs (210 µs a task of
        the demo's shape, 530 µs of the span benchmark's, where ``json.loads``
        takes 20 and 50; BENCHMARKS.md, "A full read").
        """
        params: dict[str, Any] = {"project": project, "fields": "all", "page": page, "page_size": size}
        if stamps_only:
            params.update(fields="task_only", include="id,updated_at")
        if query is not None:
            params["query"] = query
        return self._get_json("api/tasks/", params=params, asked="a page of tasks", gone_is_none=page > 1,
                              fits=lambda body: isinstance(body, dict) and isinstance(body.get("tasks"), list))

    def _get_json(self, path: str, *, asked: str, fits: Callable[[Any], bool],
                  params: Mapping[str, Any] | None = None, gone_is_none: bool = False,
                  method: str = "GET", sent: Any = None) -> Any:
        """The JSON of ``GET path`` (or ``method`` with ``sent`` as its JSON), checked to be what was ``asked`` for.

        ``fits`` checks it. None on a 404 when ``gone_is_none``.

        Sent through the SDK's HTTP client (its base URL, its headers and token
        refresh, the injected transport) and read as plain JSON, without the
        SDK's models: Label Studio's answer as it wrote it, undeclared fields
        included.

        Raises
        ------
        ApiError
            On an answer other than 2xx, and on a 2xx answer that is not JSON
            (a proxy's error page) or not what was asked for; :meth:`_call`
            retries and describes them as it does the SDK's.
        """
        # The SDK's own client (private to it, and the one its typed methods send through): no public method reads
        # an answer without building its models.
        response = self._sdk._client_wrapper.httpx_client.request(path, method=method, params=params, json=sent)
        if response.status_code == 404 and gone_is_none:
            return None
        try:
            body = response.json()
        except ValueError:  # not JSON: the text is the error's body, as the SDK gives it
            raise ApiError(status_code=response.status_code, headers=dict(response.headers),
                           body=response.text) from None
        if not 200 <= response.status_code < 300:
            raise ApiError(status_code=response.status_code, headers=dict(response.headers), body=body)
        if not fits(body):
            raise _NotWhatWasAsked(asked, response)
        return body

    def tasks_by_id(self, project: int, ids: Sequence[int]) -> list[dict[str, Any]]:
        """The tasks of ``project`` among ``ids``, with annotations and meta, in as few requests as pages.

        A task deleted, or of another project, is simply absent. One request
        for a hundred tasks costs Label Studio about what one ``GET
        /api/tasks/ID`` costs (the Data Manager's ``selectedItems``).
        """
        if not ids:
            return []
        query = json.dumps({"selectedItems": {"all": False, "included": sorted(set(ids))}})
        return list(self.tasks(project, selected=query))

    def project_ids(self) -> list[int]:
        """Every project the token can see, by id (pages of 100, ids only: cheap enough to poll every minute).

        Each page is one request with its own retries. The read ends where the list's ``count`` says it does,
        without asking for a page past the last (Label Studio answers one with a 404 and logs a traceback, which
        the SDK's pager would ask for on every read): 100 projects are one request, 101 two.
        """
        found: list[int] = []
        page, listed = 1, 0
        while True:
            body = self._call(lambda page=page: self._get_json(
                "api/projects/", params={"include": "id", "page": page, "page_size": PROJECT_PAGE},
                asked="a page of projects", gone_is_none=page > 1,
                fits=lambda body: isinstance(body, dict) and isinstance(body.get("results"), list)))
            items = [] if body is None else body["results"]
            found.extend(item["id"] for item in items if isinstance(item, Mapping) and _count(item.get("id")))
            listed += len(items)
            count = _count(body.get("count")) if body is not None else None
            if _last_page(read=listed, got=len(items), size=PROJECT_PAGE, count=count,
                          more=None if body is None else bool(body.get("next"))):
                return sorted(set(found))
            page += 1

    def project_exists(self, project: int) -> bool:
        """Whether Label Studio still has ``project`` (False only on its 404: a failure to answer raises)."""
        try:
            self._call(lambda: self._sdk.projects.get(id=project))
        except LabelStudioNotFound:
            return False
        return True

    def project_title(self, project: int) -> str:
        """The project's title as Label Studio shows it ("Project N" when it has none, or cannot say)."""
        try:
            title = self._call(lambda: self._sdk.projects.get(id=project)).title
        except LabelStudioError:
            title = None
        return str(title).strip() if title and str(title).strip() else f"Project {project}"

    def task_count(self, project: int) -> int:
        """How many tasks the project has now (one request)."""
        return int(self._call(lambda: self._sdk.projects.get(id=project)).task_number or 0)

    def task(self, task: int) -> dict[str, Any] | None:
        """One task with its annotations and meta as Label Studio holds it now, or None if it was deleted.

        Read as plain JSON, as pages are (:meth:`_get_json`); an answer that is not this task (another id, not an
        object) is retried, then reported in one line.
        """
        return self._call(lambda: self._get_json(
            f"api/tasks/{int(task)}/", asked="a task", gone_is_none=True,
            fits=lambda body: isinstance(body, dict) and body.get("id") == task))

    @property
    def writers(self) -> int:
        """How many meta updates may be sent at once."""
        return self._connection.writers

    def ensure_webhook(self, project: int, *, url: str, actions: Sequence[str], headers: dict[str, str],
                       marker: str | None = None) -> int:
        """Create the webhook to ``url`` on ``project``, or update the one that exists.

        There are no duplicates on restart.

        With ``marker`` (a header name this service sets on its webhooks), the project's other webhooks that carry
        it, registered before at another URL, are deleted: the service owns exactly one webhook per project. A
        webhook without the marker is someone else's and is never touched.
        """
        hooks = self._call(lambda: list(self._sdk.webhooks.list(project=str(project))))
        options = {"actions": list(actions), "headers": headers, "send_payload": True,
                   "send_for_all_actions": False, "is_active": True}
        mine = [h for h in hooks if getattr(h, "project", project) == project]
        for hook in mine:
            if marker is not None and hook.url != url and marker in (getattr(hook, "headers", None) or {}):
                self._call(lambda identifier=int(hook.id): self._sdk.webhooks.delete(id=identifier))
        for hook in mine:
            if hook.url == url:
                identifier = int(hook.id)

                def update(identifier: int = identifier) -> Any:
                    return self._sdk.webhooks.update(id=identifier, url=url, **options)

                self._call(update)
                return identifier
        created = self._call(lambda: self._sdk.webhooks.create(url=url, project=project, **options))
        return int(created.id)

    def remove_webhooks(self, project: int, *, url: str, marker: str) -> int:
        """Delete this service's webhooks to ``url`` on ``project``; return how many.

        This service's webhooks are those carrying ``marker``.

        One attempt each, no retries: a service stopping does not wait for a Label Studio that is gone.

        Raises
        ------
        LabelStudioError
            If Label Studio does not answer.
        """
        self._sent.request = None
        try:
            hooks = list(self._sdk.webhooks.list(project=str(project)))
            removed = 0
            for hook in hooks:
                if hook.url == url and marker in (getattr(hook, "headers", None) or {}):
                    self._sdk.webhooks.delete(id=int(hook.id))
                    removed += 1
            return removed
        except (ApiError, httpx.HTTPError) as error:
            raise LabelStudioError(f"Label Studio did not remove the webhook of project {project}: "
                                   f"{self._told(error)}") from None

    def update_meta(self, task: int, meta: dict[str, Any], *, data: dict[str, Any] | None = None,
                    overlap: int | None = None) -> dict[str, Any]:
        """Replace the task's meta, and its data when given; return the task as Label Studio answered.

        Callers merge first; see :mod:`plugin.state.blocks`. The answer is the
        task as the write left it, annotations, predictions and ``updated_at``
        included: the state takes it as a read (:meth:`plugin.keeper.monitor.ProjectMonitor.wrote`), so a
        pass does not read the task again for the write's own change.

        With ``overlap``, the task also asks for that many annotators, and is
        marked not labeled so that Label Studio's queue serves it again: in
        1.23 a change of ``overlap`` alone does not recompute ``is_labeled``;
        the next submitted annotation does.

        Sent with ``review=true``: Label Studio then finds the task to update without computing the Data Manager's
        columns its answer does not hold (the same answer, for about a fifth less of its CPU on its development
        server: ``bench/ls_share.py``; a version without the parameter ignores it).
        """
        fields: dict[str, Any] = {"meta": meta}
        if data is not None:
            fields["data"] = data
        if overlap is not None:
            fields.update(overlap=overlap, is_labeled=False)
        return self._call(lambda: self._get_json(f"api/tasks/{task}/", method="PATCH", sent=fields,
                                                 params=LIGHT_WRITE, asked="the task written",
                                                 fits=lambda body: isinstance(body, dict)))

    def write_prediction(self, task: int, *, model_version: str, prediction: int | None,
                         results: list[dict[str, Any]] | None, score: float | None,
                         delete: Sequence[int] = ()) -> None:
        """Create (``prediction`` None) or update a prediction of ``task``, then delete the predictions ``delete``.

        With ``results`` None, only deletes. Extra copies are deleted after the one kept is written, so that a
        failure in between leaves one at least.
        """
        if results is not None:
            fields: dict[str, Any] = {"result": results, "model_version": model_version}
            if score is not None:
                fields["score"] = score
            if prediction is None:
                self._call(lambda: self._sdk.predictions.create(task=task, **fields))
            else:
                self._call(lambda: self._sdk.predictions.update(id=prediction, **fields))
        for identifier in delete:
            try:
                self._call(lambda identifier=identifier: self._sdk.predictions.delete(id=identifier))
            except LabelStudioNotFound:
                continue  # deleted meanwhile: what was wanted

    def users(self) -> dict[str, str]:
        """Every user's id (as text, as annotators are keyed) -> "First Last <email>" (or just the email)."""
        return {str(user.id): person_name(user) for user in self._call(lambda: list(self._sdk.users.list()))}

    def ensure_view(self, project: int, *, title: str, filters: dict[str, Any], ordering: Sequence[str],
                    hidden: Sequence[str] = (), numbers: Sequence[str] = ()) -> int:
        """Create the Data Manager tab ``title`` on ``project``, or update the one there: never a second one.

        ``hidden`` names the grid's columns the tab hides (``tasks:<field>``), ``numbers`` those it shows and sorts
        as numbers (Label Studio sorts a ``data`` column as text unless its tab says it holds numbers). In a project
        that has no tab yet, a "Default" tab of every task (:data:`DEFAULT_VIEW`) is created first, as Label
        Studio creates it when a person first opens such a project: without it, the project's only tab would be
        this one, and no tab would list every task.
        """
        data: dict[str, Any] = {"title": title, "filters": filters, "ordering": list(ordering)}
        if hidden:
            data["hiddenColumns"] = {"explore": list(hidden), "labeling": list(hidden)}
        if numbers:
            data["columnsDisplayType"] = dict.fromkeys(numbers, "Number")
        views = self._call(lambda: list(self._sdk.views.list(project=project)))
        if not views:
            self._call(lambda: self._sdk.views.create(project=project, data=dict(DEFAULT_VIEW)))
        for view in views:
            found = getattr(view, "data", None) or {}
            if isinstance(found, dict) and found.get("title") == title:
                identifier = int(view.id)
                self._call(lambda identifier=identifier: self._sdk.views.update(id=str(identifier),
                                                                                project=project, data=data))
                return identifier
        created = self._call(lambda: self._sdk.views.create(project=project, data=data))
        return int(created.id)


DEFAULT_VIEW: Mapping[str, Any] = {"title": "Default", "type": "list", "target": "tasks",
                                   "filters": {"conjunction": "and", "items": []}, "ordering": []}
"""The tab Label Studio's Data Manager creates in a project without one: every task, in id order."""


def annotator_names(client: LabelStudioClient, *, otherwise: Mapping[str, str] | None = None) -> dict[str, str]:
    """Annotator id -> name and email (:meth:`LabelStudioClient.users`).

    Gives ``otherwise`` (default: none) when Label Studio will not tell: names are a courtesy, ids still
    identify the annotators.
    """
    try:
        return client.users()
    except LabelStudioError:
        return dict(otherwise or {})


class PeopleCache:
    """Annotator id -> name and email, read at most every ``keep_for`` seconds.

    The last answer (or none: ids still identify the annotators) stands while Label Studio will not tell.
    """

    def __init__(self, client: LabelStudioClient, *, keep_for: float = 300.0) -> None:
        self._client = client
        self._keep_for = keep_for
        self._lock = threading.Lock()
        self._people: dict[str, str] = {}
        self._read_at = -float("inf")

    def known(self) -> dict[str, str]:
        """The names as last read, without asking Label Studio (what ``/status`` shows, whatever its state)."""
        with self._lock:
            return self._people

    def get(self) -> dict[str, str]:
        """The names, read again from Label Studio when older than ``keep_for``."""
        with self._lock:
            people, read_at = self._people, self._read_at
        if time.monotonic() - read_at < self._keep_for:
            return people
        people = annotator_names(self._client, otherwise=people)
        with self._lock:
            self._people, self._read_at = people, time.monotonic()
        return people
