"""``ls-agreement serve``: the live monitor Label Studio calls on every annotation event.

An app factory (:func:`create_app`) with its state in one object it owns
(:class:`ServiceState`): the live projects, an event queue and a meta writer.

* ``POST /webhook`` checks the ``X-Agreement-Secret`` header in constant time
  (401), parses the payload (400 for malformed JSON or an unknown shape),
  queues it and answers at once: Label Studio without Redis waits for the
  answer inside the annotator's request, with a 1 s timeout. One processor
  thread applies events in arrival order.
* Writes go through a writer thread that coalesces them per task (a burst of
  events on one task, one write), merges the block into the task's meta as
  last read (at start-up, from the event's task object, or after our own
  write; read from Label Studio when unknown), and writes only when the
  agreement block changed, with retries.
* ``GET /health``, ``GET /status``, and the ML-backend contract (``/setup``,
  ``/predict`` answering with no predictions) so the service can be connected
  under a project's Model settings too. Every route also lives under
  ``/s/<secret>/``: Label Studio's ML connection creates its own webhook to
  ``<model url>/webhook`` without custom headers, so a model URL that carries
  the secret keeps those calls authenticated.

Payloads are never logged or stored as received: the ``project`` object in
every payload carries the project's token.
"""

from __future__ import annotations

import hmac
import json
import logging
import queue
import threading
import time
from collections import deque
from collections.abc import Iterator, Mapping
from concurrent.futures import ThreadPoolExecutor
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from fastapi import APIRouter, Depends, FastAPI, Header, HTTPException, Request
from fastapi.responses import JSONResponse

from plugin import __version__
from plugin.labelconfig import parse_label_config
from plugin.labelstudio import LabelStudioClient, LabelStudioError
from plugin.live import LiveProject
from plugin.settings import Connection, MappingOptions, ScoringOptions
from plugin.writeback import agreement_block, merged_meta

__all__ = ["EVENTS", "ServiceSettings", "ServiceState", "create_app"]

log = logging.getLogger("ls_agreement.service")

EVENTS = ("ANNOTATION_CREATED", "ANNOTATIONS_CREATED", "ANNOTATION_UPDATED", "ANNOTATIONS_DELETED", "TASKS_DELETED")
MAX_PAYLOAD = 16 * 2**20  # bytes


@dataclass(frozen=True)
class ServiceSettings:
    """Everything the service needs, read once at the entry point.

    Attributes
    ----------
    projects : tuple of int
        Projects to monitor.
    public_url : str
        The URL Label Studio reaches this service at (for its webhook).
    secret : str
        Shared secret of the webhook (``AGREEMENT_WEBHOOK_SECRET``).
    connection : Connection
    mapping, scoring : MappingOptions, ScoringOptions
    coalesce_seconds : float
        How long the writer waits for more events on a task before writing.
    """

    projects: tuple[int, ...]
    public_url: str
    secret: str = field(repr=False)
    connection: Connection
    mapping: MappingOptions = field(default_factory=MappingOptions)
    scoring: ScoringOptions = field(default_factory=ScoringOptions)
    coalesce_seconds: float = 0.05


class BadEvent(ValueError):
    """A webhook payload of an unknown shape."""


def _ids(entries: Any, what: str) -> list[int]:
    if not isinstance(entries, list):
        raise BadEvent(f"{what} must be a list of objects with an id.")
    out = []
    for entry in entries:
        identifier = entry.get("id") if isinstance(entry, Mapping) else None
        if isinstance(identifier, bool) or not isinstance(identifier, int):
            raise BadEvent(f"{what} must be a list of objects with an id.")
        out.append(identifier)
    return out


def _project_id(payload: Mapping[str, Any]) -> int | None:
    project = payload.get("project")
    identifier = project.get("id") if isinstance(project, Mapping) else project
    return identifier if isinstance(identifier, int) and not isinstance(identifier, bool) else None


@dataclass(frozen=True)
class Event:
    """A validated webhook event: only what the service uses, nothing of the payload kept."""

    action: str
    project: int | None
    annotations: tuple[tuple[Mapping[str, Any], int, Any], ...] = ()  # (annotation, task id, task meta)
    deleted_annotations: tuple[int, ...] = ()
    deleted_tasks: tuple[int, ...] = ()


def parse_event(payload: Any) -> Event | None:
    """Validate a webhook payload; None for actions the service does not follow.

    Raises
    ------
    BadEvent
        For a payload of an unknown shape.
    """
    if not isinstance(payload, Mapping) or not isinstance(payload.get("action"), str):
        raise BadEvent("The payload must be a JSON object with an action.")
    action = payload["action"]
    if action not in EVENTS:
        return None
    project = _project_id(payload)
    if action == "ANNOTATIONS_DELETED":
        return Event(action, project, deleted_annotations=tuple(_ids(payload.get("annotations"), "annotations")))
    if action == "TASKS_DELETED":
        return Event(action, project, deleted_tasks=tuple(_ids(payload.get("tasks"), "tasks")))
    annotations = payload.get("annotation")
    tasks = payload.get("task")
    if action != "ANNOTATIONS_CREATED":
        annotations, tasks = [annotations], [tasks]
    if not isinstance(annotations, list) or not all(isinstance(a, Mapping) for a in annotations):
        raise BadEvent("annotation must be an object (a list of objects for ANNOTATIONS_CREATED).")
    task_objects = {t.get("id"): t for t in tasks if isinstance(t, Mapping)} if isinstance(tasks, list) else {}
    out = []
    for annotation in annotations:
        task = annotation.get("task")
        task = task.get("id") if isinstance(task, Mapping) else task
        if isinstance(task, bool) or not isinstance(task, int):
            only = next(iter(task_objects), None) if len(task_objects) == 1 else None
            task = only if isinstance(only, int) else None
        if task is None or not isinstance(annotation.get("id"), int):
            raise BadEvent("Each annotation needs an id and its task.")
        meta = task_objects.get(task, {}).get("meta") if task in task_objects else None
        out.append((dict(annotation), task, meta))
    if project is None and out:
        project = out[0][0].get("project") if isinstance(out[0][0].get("project"), int) else None
    return Event(action, project, annotations=tuple(out))


@dataclass
class _Marker:
    """Put on the event queue to learn when every event before it has been applied."""

    done: threading.Event


class MetaWriter:
    """Writes task scores to Label Studio from a background thread, coalesced per task."""

    def __init__(self, state: ServiceState, client: LabelStudioClient, *, coalesce_seconds: float) -> None:
        self._state = state
        self._client = client
        self._coalesce = coalesce_seconds
        self._pending: dict[int, tuple[int, float]] = {}  # task -> (project, when its first pending event came)
        self._latencies: deque[float] = deque(maxlen=1000)  # seconds from event to written meta
        self._busy = 0
        self._condition = threading.Condition()
        self._stopping = False
        self._thread = threading.Thread(target=self._run, name="meta-writer", daemon=True)
        self.written = 0
        self.failed = 0

    def start(self) -> None:
        self._thread.start()

    def stop(self, timeout: float = 10.0) -> None:
        """Stop after the writes in flight; pending ones are dropped (the next start reconciles them)."""
        with self._condition:
            self._stopping = True
            self._pending.clear()
            self._condition.notify_all()
        if self._thread.is_alive():
            self._thread.join(timeout=timeout)

    @property
    def pending(self) -> int:
        with self._condition:
            return len(self._pending) + self._busy

    def enqueue(self, project: int, tasks: Iterator[int] | set[int] | list[int]) -> None:
        now = time.monotonic()
        with self._condition:
            for task in tasks:
                self._pending.setdefault(task, (project, now))
            self._condition.notify_all()

    def latency(self) -> dict[str, float | int | None]:
        """Median and 95th percentile, in ms, from an event to its task's written meta (last 1,000 writes)."""
        with self._condition:
            values = sorted(self._latencies)
        if not values:
            return {"p50": None, "p95": None, "n": 0}
        return {"p50": round(1000 * values[len(values) // 2], 1),
                "p95": round(1000 * values[min(len(values) - 1, int(0.95 * len(values)))], 1), "n": len(values)}

    def wait_idle(self, timeout: float) -> bool:
        """Block until nothing is pending or being written (for tests and shutdown)."""
        deadline = time.monotonic() + timeout
        with self._condition:
            while self._pending or self._busy:
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    return False
                self._condition.wait(remaining)
        return True

    def _write(self, task: int, project: int, since: float) -> None:
        if self._stopping:
            return
        block = self._state.block(project, task)
        if block is None:
            return
        try:
            known, current = self._state.cached_meta(project, task)
            if not known:
                current = self._client.task_meta(task)
            meta = merged_meta(current, block)
            if meta is not None:
                self._client.update_meta(task, meta)
                self._state.remember_meta(project, task, meta)
                with self._condition:
                    self.written += 1
                    self._latencies.append(time.monotonic() - since)
        except LabelStudioError as error:
            self.failed += 1
            log.warning("Task %s was not written: %s", task, error)

    def _run(self) -> None:
        with ThreadPoolExecutor(max_workers=max(1, self._client.writers)) as pool:
            while True:
                with self._condition:
                    while not self._pending and not self._stopping:
                        self._condition.wait()
                    if self._stopping and not self._pending:
                        return
                time.sleep(self._coalesce)  # let a burst on the same tasks gather
                with self._condition:
                    batch, self._pending = self._pending, {}
                    self._busy = len(batch)
                try:
                    list(pool.map(lambda item: self._write(item[0], *item[1]), batch.items()))
                finally:
                    with self._condition:
                        self._busy = 0
                        self._condition.notify_all()


class ServiceState:
    """The service's state: live projects, the event queue and its processor, the writer."""

    def __init__(self, settings: ServiceSettings, client: LabelStudioClient) -> None:
        self.settings = settings
        self.client = client
        self.projects: dict[int, LiveProject] = {}
        self.lock = threading.RLock()
        self.events: dict[int, int] = {p: 0 for p in settings.projects}
        self.last_event_at: dict[int, str | None] = {p: None for p in settings.projects}
        self.rejected = 0
        self.writer = MetaWriter(self, client, coalesce_seconds=settings.coalesce_seconds)
        self._queue: queue.Queue[Event | _Marker | None] = queue.Queue()
        self._processor = threading.Thread(target=self._process, name="event-processor", daemon=True)

    # --- lifecycle ---

    def start(self, *, register: bool = True, reconcile: bool = True) -> None:
        """Register the webhooks, read every project (reconcile), then follow events."""
        for project in self.settings.projects:
            if register:
                self.register_webhook(project)
            if reconcile:
                self.reconcile(project)
        self.writer.start()
        self._processor.start()

    def stop(self) -> None:
        """Stop following events and writing; nothing pending survives, the next start reconciles."""
        self._queue.put(None)
        if self._processor.is_alive():
            self._processor.join(timeout=10)
        self.writer.stop()

    def register_webhook(self, project: int) -> None:
        """Create this service's webhook on ``project``, or update the one a previous run created."""
        url = f"{self.settings.public_url.rstrip('/')}/webhook"
        self.client.ensure_webhook(project, url=url, actions=EVENTS,
                                   headers={"X-Agreement-Secret": self.settings.secret})

    def reconcile(self, project: int) -> None:
        """Read the whole project, rebuild its live state, and write every task whose block changed."""
        controls = parse_label_config(self.client.label_config(project))
        live = LiveProject(project, controls, mapping=self.settings.mapping, scoring=self.settings.scoring)
        live.load(self.client.tasks(project))
        with self.lock:
            self.projects[project] = live
            blocks = self.blocks(project, live.tasks)
            stale = [task for task, block in blocks.items() if merged_meta(live.meta.get(task), block) is not None]
        self.writer.enqueue(project, stale)

    # --- events ---

    def submit(self, event: Event) -> None:
        """Queue a validated event (the webhook route answers right after)."""
        self._queue.put(event)

    def wait_processed(self, timeout: float) -> None:
        """Block until every queued event has been applied (for tests and benchmarks)."""
        done = threading.Event()
        self._queue.put(_Marker(done))
        done.wait(timeout)

    def _process(self) -> None:
        while True:
            event = self._queue.get()
            if event is None:
                return
            if isinstance(event, _Marker):
                event.done.set()
                continue
            try:
                self.apply(event)
            except Exception:  # the service keeps running whatever one event holds
                log.exception("An event of type %s could not be applied.", event.action)

    def apply(self, event: Event) -> set[int]:
        """Apply one event to its project; return the tasks queued for writing."""
        with self.lock:
            live = self.projects.get(event.project) if event.project is not None else None
            if live is None and event.project is None and len(self.projects) == 1:
                live = next(iter(self.projects.values()))
            if live is None:
                return set()
            changed: set[int] = set()
            for annotation, task, meta in event.annotations:
                changed |= live.apply_annotation(annotation, task, task_meta=meta)
            if event.deleted_annotations:
                changed |= live.delete_annotations(event.deleted_annotations)
            if event.deleted_tasks:
                live.delete_tasks(event.deleted_tasks)
            self.events[live.project] = self.events.get(live.project, 0) + 1
            self.last_event_at[live.project] = datetime.now(UTC).isoformat(timespec="milliseconds")
        self.writer.enqueue(live.project, changed)
        return changed

    # --- scores ---

    def blocks(self, project: int, tasks: list[int]) -> dict[int, dict[str, Any]]:
        """The agreement blocks of the known ``tasks`` of ``project``, as they stand."""
        with self.lock:
            live = self.projects.get(project)
            if live is None:
                return {}
            now = datetime.now(UTC).isoformat(timespec="seconds")
            scores = live.task_scores(task for task in tasks if task in live.meta)
            return {task: agreement_block(score, version=__version__, updated_at=now) for task, score in scores.items()}

    def block(self, project: int, task: int) -> dict[str, Any] | None:
        """One task's agreement block, or None for an unknown task."""
        return self.blocks(project, [task]).get(task)

    def cached_meta(self, project: int, task: int) -> tuple[bool, Any]:
        """The task's meta as last read (start-up read, the event's task object, or our own write), if known."""
        with self.lock:
            live = self.projects.get(project)
            meta = live.meta.get(task) if live is not None else None
            return meta is not None, meta

    def remember_meta(self, project: int, task: int, meta: Mapping[str, Any]) -> None:
        with self.lock:
            live = self.projects.get(project)
            if live is not None and task in live.meta:
                live.meta[task] = dict(meta)

    def status(self) -> dict[str, Any]:
        with self.lock:
            return {"projects": {str(p): {"controls": live.status(), "events": self.events.get(p, 0),
                                          "last_event_at": self.last_event_at.get(p),
                                          "n_tasks": len(live.tasks), "pending_writes": self.writer.pending}
                                 for p, live in sorted(self.projects.items())},
                    "written": self.writer.written, "failed_writes": self.writer.failed,
                    "write_latency_ms": self.writer.latency(),
                    "rejected_events": self.rejected, "version": __version__}


def create_app(settings: ServiceSettings, client: LabelStudioClient, *, register: bool = True,
               reconcile: bool = True) -> FastAPI:
    """The web service; its state is ``app.state.agreement`` (a :class:`ServiceState`)."""
    state = ServiceState(settings, client)

    @asynccontextmanager
    async def lifespan(app: FastAPI):  # type: ignore[no-untyped-def]
        state.start(register=register, reconcile=reconcile)
        yield
        state.stop()

    app = FastAPI(title="label-studio-agreement", version=__version__, lifespan=lifespan)
    app.state.agreement = state

    def check_secret(x_agreement_secret: str | None = Header(default=None), secret: str | None = None) -> None:
        given = secret if secret is not None else x_agreement_secret
        if given is None or not hmac.compare_digest(given.encode(), settings.secret.encode()):
            state.rejected += 1
            raise HTTPException(status_code=401, detail="Wrong or missing webhook secret.")

    router = APIRouter()

    @router.post("/webhook", dependencies=[Depends(check_secret)])
    async def webhook(request: Request) -> JSONResponse:
        body = await request.body()
        if len(body) > MAX_PAYLOAD:
            raise HTTPException(status_code=413, detail="The payload is larger than the service accepts.")
        try:
            event = parse_event(json.loads(body))
        except (json.JSONDecodeError, UnicodeDecodeError):
            raise HTTPException(status_code=400, detail="The payload is not JSON.") from None
        except BadEvent as error:
            raise HTTPException(status_code=400, detail=str(error)) from None
        if event is None:
            return JSONResponse({"status": "ignored"})
        state.submit(event)
        return JSONResponse({"status": "accepted"})

    @router.get("/health")
    def health() -> dict[str, str]:
        return {"status": "UP", "model_class": "AgreementMonitor"}

    @router.get("/status")
    def status() -> dict[str, Any]:
        return state.status()

    @router.post("/setup")
    def setup() -> dict[str, str]:
        return {"model_version": f"agreement-{__version__}"}

    @router.post("/predict")
    def predict() -> dict[str, list[Any]]:
        return {"results": []}

    app.include_router(router)
    app.include_router(router, prefix="/s/{secret}")
    return app
