"""Benchmark: an event's own cost as a free-text control's distinct answers grow from 500 to 20,000.

The service's event path as ``ls-agreement serve`` runs it, in process: its web app
(:func:`plugin.service.app.create_app`, called through Starlette's test client), the event queue, the writer and the
project's monitor, with Label Studio replaced by an in-memory store that serves each task as Label Studio's API
returns it (the JSON of ``GET /api/tasks``, parsed again on every read) and takes its meta writes. A real Label
Studio creates an annotation in 50-100 ms on a loaded machine: reaching 20,000 answers through it takes half an
hour, and its own time would hide the service's.

The project has one TextArea whose answers are all distinct. At each step the store is filled up to the step's
number of answers (tasks of two answers each) and a pass of the service reads them (and fits the consensus again,
as its scheduled pass does); then ``--events`` events are sent one at a time, each a new distinct answer
(the first or the second annotation of a task): the webhook is posted, the writer's count of refreshes (what
``/status`` shows as ``writes``) watched until it counts the event, and ``/status`` asked until it does, as a user
measures it. Printed per step: the median milliseconds from the post to the ``/status`` that counts the event; the
process's CPU time an event (every thread's: the web app, the event queue, the writer, ``/status``), which a loaded
machine disturbs far less than the wall clock; the event path alone (the post to the writer's count); one
``/status`` call; and the ratio of the last step to the first.

    python bench/event_cost.py [--steps 500,1000,2000,5000,10000,20000] [--events 200]
    python bench/busy.py -- python bench/event_cost.py      # with every core busy

The coalescing window is 0 (the service's default is 20 ms, which an event sent alone waits out): the time is the
work an event costs.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import threading
import time
import warnings
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
warnings.filterwarnings("ignore", message=".*httpx.*")  # Starlette's test client names its next transport

from fastapi.testclient import TestClient  # noqa: E402 (after the path: runnable from a checkout)

from plugin.labelstudio.client import Reachability  # noqa: E402
from plugin.service.app import create_app  # noqa: E402
from plugin.service.settings import ServiceSettings  # noqa: E402
from plugin.settings import Connection, ScoringOptions  # noqa: E402

SECRET = "benchmark-secret-0123456789"
PROJECT = 1
CONFIG = '<View><Text name="text" value="$text"/><TextArea name="note" toName="text"/></View>'


class MemoryLabelStudio:
    """Label Studio as the service's client sees it, in memory: tasks as its API returns them, meta writes kept."""

    writers = 4

    def __init__(self) -> None:
        self.reachability = Reachability()
        self._lock = threading.Lock()
        self._tasks: dict[int, str] = {}  # id -> the task's JSON, as the API returns it
        self._tick = 0

    def _stamp(self) -> str:
        self._tick += 1  # every change a millisecond after the one before (the watermark of a changed read)
        seconds, millis = divmod(self._tick, 1000)
        return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(1_798_761_600 + seconds)) + f".{millis:03d}000Z"

    def answer(self, task: int, annotator: int, text: str) -> None:
        """Annotator ``annotator`` answers ``text`` on ``task`` (created when new)."""
        with self._lock:
            held = json.loads(self._tasks[task]) if task in self._tasks else {
                "id": task, "project": PROJECT, "data": {"text": f"text {task}"}, "meta": {}, "predictions": [],
                "annotations": [], "is_labeled": False, "overlap": 1, "created_at": self._stamp()}
            held["annotations"].append({
                "id": 10 * task + annotator, "task": task, "project": PROJECT, "completed_by": annotator,
                "was_cancelled": False, "ground_truth": False, "lead_time": 3.5, "created_at": self._stamp(),
                "updated_at": self._stamp(), "result": [{"id": f"r{task}-{annotator}", "from_name": "note",
                                                         "to_name": "text", "type": "textarea", "origin": "manual",
                                                         "value": {"text": [text]}}]})
            held["total_annotations"] = len(held["annotations"])
            held["updated_at"] = self._stamp()
            self._tasks[task] = json.dumps(held)

    # --- what the service calls ---

    def label_config(self, project: int) -> str:
        return CONFIG

    def project_ids(self) -> list[int]:
        return [PROJECT]

    def project_exists(self, project: int) -> bool:
        return project == PROJECT

    def project_title(self, project: int) -> str:
        return "event cost"

    def users(self) -> dict[str, str]:
        return {"1": "Ann <ann@example.com>", "2": "Bo <bo@example.com>"}

    def tasks(self, project: int, *, on_total: Any = None, max_rate: float | None = None,
              updated_after: Any = None, stamps_only: bool = False, **_: Any) -> list[dict[str, Any]]:
        with self._lock:
            held = [json.loads(text) for text in self._tasks.values()]
            if on_total is not None:
                on_total(len(held))
        if updated_after is not None:
            since = updated_after.strftime("%Y-%m-%dT%H:%M:%S.%fZ")
            held = [task for task in held if task["updated_at"] > since]
        if stamps_only:  # each task's id and updated_at alone (fields=task_only&include=id,updated_at)
            return [{"id": task["id"], "updated_at": task["updated_at"]} for task in held]
        return held

    def requests_sent(self) -> int:
        return 0  # in memory: no request reaches a Label Studio

    def task_count(self, project: int) -> int:
        with self._lock:
            return len(self._tasks)

    def task(self, task: int) -> dict[str, Any] | None:
        with self._lock:
            return json.loads(self._tasks[task]) if task in self._tasks else None

    def tasks_by_id(self, project: int, ids: Any) -> list[dict[str, Any]]:
        with self._lock:
            return [json.loads(self._tasks[task]) for task in sorted(set(ids)) if task in self._tasks]

    def update_meta(self, task: int, meta: dict[str, Any], *, data: Any = None, overlap: Any = None) -> None:
        with self._lock:
            held = json.loads(self._tasks[task])
            held["meta"] = meta
            held["updated_at"] = self._stamp()
            self._tasks[task] = json.dumps(held)

    def write_prediction(self, task: int, **_: Any) -> None:
        return None

    def ensure_view(self, project: int, **_: Any) -> int:
        return 1

    def ensure_webhook(self, project: int, **_: Any) -> int:
        return 1

    def remove_webhooks(self, project: int, **_: Any) -> int:
        return 0


def _written(status: dict[str, Any]) -> int:
    writes = status["writes"]
    return writes.get("written", 0) + writes.get("unchanged", 0)


def run(steps: list[int], n_events: int) -> list[dict[str, float]]:
    """Per step, the milliseconds an event costs, measured as the module's docstring says."""
    store = MemoryLabelStudio()
    settings = ServiceSettings(projects=(PROJECT,), public_url="http://agreement.test", secret=SECRET,
                               connection=Connection(url="http://label-studio.test", api_key="key"),
                               scoring=ScoringOptions(), coalesce_seconds=0.0, reconcile_interval=3600.0,
                               read_rate=None)
    app = create_app(settings, store, register=False)
    headers = {"X-Agreement-Secret": SECRET}
    rows = []
    with TestClient(app) as http:
        service = app.state.agreement
        monitor = service.monitors[PROJECT]
        if not service.wait_ready(120):
            raise RuntimeError("The service did not read the project within 120 s.")
        answers, task = 0, 0
        for step in steps:
            while answers < step:  # two distinct answers a task, read by a pass
                task += 1
                store.answer(task, 1, f"answer {task}-1")
                store.answer(task, 2, f"answer {task}-2")
                answers += 2
            passes = monitor.passes
            service.request_pass(PROJECT)
            while monitor.passes == passes:
                time.sleep(0.05)
            if not service.writer.wait_idle(600):
                raise RuntimeError("The pass's writes did not end within 600 s.")
            counted = _written(http.get("/status", headers=headers).json())
            to_status, to_writer = [], []
            cpu = time.process_time()
            for event in range(n_events):
                if event % 2 == 0:
                    task += 1
                annotator = 1 + event % 2
                store.answer(task, annotator, f"answer {task}-{annotator}")
                answers += 1
                started = time.perf_counter()
                http.post("/webhook", headers=headers, json={
                    "action": "ANNOTATION_CREATED", "project": {"id": PROJECT},
                    "annotation": {"id": 10 * task + annotator, "task": task}, "task": {"id": task}})
                counted += 1
                while sum(service.writer.outcome_counts().get(key, 0) for key in ("written", "unchanged")) < counted:
                    time.sleep(0.0002)  # the writer's count, which /status shows: a cheap look
                written = time.perf_counter()
                while _written(http.get("/status", headers=headers).json()) < counted:
                    time.sleep(0.0005)
                to_status.append(1000 * (time.perf_counter() - started))
                to_writer.append(1000 * (written - started))
            cpu = 1000 * (time.process_time() - cpu) / n_events
            status_calls = []
            for _ in range(30):
                started = time.perf_counter()
                http.get("/status", headers=headers)
                status_calls.append(1000 * (time.perf_counter() - started))
            rows.append({"answers": step, "median": statistics.median(to_status), "cpu": cpu,
                         "path": statistics.median(to_writer), "status": statistics.median(status_calls)})
            print(f"{step:>7,} answers: {rows[-1]['median']:6.2f} ms (event to /status, median), "
                  f"{cpu:6.2f} ms of CPU an event; event path alone {rows[-1]['path']:6.2f} ms; one /status "
                  f"{rows[-1]['status']:6.2f} ms", flush=True)
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", default="500,1000,2000,5000,10000,20000",
                        help="distinct answers at each step, comma-separated (500,1000,2000,5000,10000,20000)")
    parser.add_argument("--events", type=int, default=200, help="events measured at each step (200)")
    args = parser.parse_args()
    steps = sorted(int(step) for step in args.steps.split(","))
    rows = run(steps, args.events)
    first, last = rows[0], rows[-1]
    print("\n| distinct answers | event to /status, median (ms) | CPU an event (ms) | event path alone, median (ms) "
          "| one /status, median (ms) |")
    print("| --- | --- | --- | --- | --- |")
    for row in rows:
        print(f"| {row['answers']:,} | {row['median']:.2f} | {row['cpu']:.2f} | {row['path']:.2f} | "
              f"{row['status']:.2f} |")
    print(f"\nlast / first: event to /status {last['median'] / first['median']:.2f}, CPU an event "
          f"{last['cpu'] / first['cpu']:.2f}, event path alone {last['path'] / first['path']:.2f}, "
          f"/status {last['status'] / first['status']:.2f}")


if __name__ == "__main__":
    main()
