"""Benchmark: the live service under load, against a local Label Studio.

``ls-agreement serve`` runs in a subprocess on a project of N tasks with three
annotations each. Webhook events are posted to it directly (Label Studio itself
accepts about 4 annotations a second, far below these rates), with the secret:

1. a burst of 5,000 events over 50 tasks, from 8 threads, as fast as the
   service answers; the 50 tasks' annotations were changed just before, so
   each must end with a new block;
2. a steady 200 events a second for a minute, over all N tasks.

For each: events accepted, the webhook route's answer time, refreshes and
writes, the service's event-to-meta latency, how long after the last event
every queued refresh was done, and at the end the service's peak RSS and
whether ``sync --dry-run`` finds anything left to write.

    python bench/load.py [--tasks 500] [--burst 5000 --burst-tasks 50] [--rate 200 --seconds 60]
"""

from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import subprocess
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import requests
from label_studio_sdk import LabelStudio
from sync_project import CONFIG, SENTIMENTS, make_tasks

from plugin.labelstudio.localserver import free_port, sign_up, throwaway

SECRET = "load-benchmark-Secret-0123456789"
HEADERS = {"X-Agreement-Secret": SECRET}


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))] if ordered else float("nan")


def peak_rss_mib(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    return float("nan")


class Poster:
    """Posts events to the service from a pool of threads, timing each answer."""

    def __init__(self, url: str) -> None:
        self.url = f"{url}/webhook"
        self.local = threading.local()
        self.lock = threading.Lock()
        self.times: list[float] = []
        self.statuses: dict[int, int] = {}

    def post(self, payload: dict) -> None:
        session = getattr(self.local, "session", None)
        if session is None:
            session = self.local.session = requests.Session()
        started = time.perf_counter()
        status = session.post(self.url, json=payload, headers=HEADERS, timeout=10).status_code
        with self.lock:
            self.times.append(time.perf_counter() - started)
            self.statuses[status] = self.statuses.get(status, 0) + 1

    def summary(self) -> str:
        return (f"answers {self.statuses}; route answer median {1000 * statistics.median(self.times):.1f} ms, "
                f"p95 {1000 * percentile(self.times, 0.95):.1f} ms, p99 {1000 * percentile(self.times, 0.99):.1f} ms")


def event(project: int, task: int, annotation: int) -> dict:
    return {"action": "ANNOTATION_UPDATED", "project": {"id": project}, "annotation": {"id": annotation, "task": task}}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tasks", type=int, default=500)
    parser.add_argument("--burst", type=int, default=5000)
    parser.add_argument("--burst-tasks", type=int, default=50)
    parser.add_argument("--rate", type=float, default=200.0)
    parser.add_argument("--seconds", type=float, default=60.0)
    args = parser.parse_args()

    with throwaway("ls-load-bench-", command=os.environ.get("LABEL_STUDIO_BIN")) as server:
        service = None
        try:
            annotators = [sign_up(server.url, f"load{i}@example.com")[0] for i in range(3)]
            admin = LabelStudio(base_url=server.url, api_key=server.token, timeout=600)
            project = admin.projects.create(title="load bench", label_config=CONFIG).id
            admin.projects.import_tasks(id=project, request=make_tasks(args.tasks, annotators, 0))
            tasks = {t.id: [a["id"] for a in (t.annotations or [])]
                     for t in admin.tasks.list(project=project, page_size=1000, fields="all")}
            port = free_port()
            env = {**os.environ, "LABEL_STUDIO_URL": server.url, "LABEL_STUDIO_API_KEY": server.token,
                   "AGREEMENT_WEBHOOK_SECRET": SECRET}
            log = open(server.data_dir / "service.log", "wb")  # noqa: SIM115
            service = subprocess.Popen([sys.executable, "-m", "plugin", "serve", "--project", str(project),
                                        "--port", str(port), "--reconcile-interval", "3600"], env=env, stdout=log,
                                       stderr=subprocess.STDOUT)
            url = f"http://127.0.0.1:{port}"

            def status() -> dict:
                return requests.get(f"{url}/status", headers=HEADERS, timeout=30).json()

            def settle() -> float:
                started = time.perf_counter()
                while True:
                    try:
                        current = status()["projects"][str(project)]
                        if current["passes"] and not current["pending_writes"]:
                            return time.perf_counter() - started
                    except (requests.RequestException, KeyError):
                        pass
                    time.sleep(0.05)

            started = time.perf_counter()
            settle()
            print(f"{args.tasks} tasks; the service read the project and wrote every block in "
                  f"{time.perf_counter() - started:.1f} s")

            rnd = random.Random(2)
            chosen = rnd.sample(sorted(tasks), args.burst_tasks)
            for task in chosen:  # the truth changes; the events below announce it
                admin.annotations.update(id=tasks[task][0], result=[
                    {"from_name": "sentiment", "to_name": "text", "type": "choices",
                     "value": {"choices": [rnd.choice(SENTIMENTS)]}}])
            before = status()
            poster = Poster(url)
            payloads = [event(project, chosen[i % len(chosen)], tasks[chosen[i % len(chosen)]][0])
                        for i in range(args.burst)]
            started = time.perf_counter()
            with ThreadPoolExecutor(max_workers=8) as pool:
                list(pool.map(poster.post, payloads))
            sent = time.perf_counter() - started
            converged = settle()
            after = status()
            print(f"burst: {args.burst} events over {args.burst_tasks} tasks posted in {sent:.1f} s "
                  f"({args.burst / sent:.0f}/s); {poster.summary()}")
            print(f"  every refresh done {converged:.2f} s after the last event; refreshes "
                  f"{sum(after['writes'].values()) - sum(before['writes'].values())}, writes "
                  f"{after['writes'].get('written', 0) - before['writes'].get('written', 0)}; "
                  f"event-to-meta latency {after['write_latency_ms']}")

            before = after
            poster = Poster(url)
            ids = sorted(tasks)
            total = int(args.rate * args.seconds)
            started = time.perf_counter()
            with ThreadPoolExecutor(max_workers=8) as pool:
                for i in range(total):
                    task = ids[rnd.randrange(len(ids))]
                    pool.submit(poster.post, event(project, task, tasks[task][0]))
                    time.sleep(max(0.0, started + (i + 1) / args.rate - time.perf_counter()))
            sent = time.perf_counter() - started
            converged = settle()
            after = status()
            print(f"steady: {total} events in {sent:.1f} s ({total / sent:.0f}/s); {poster.summary()}")
            print(f"  every refresh done {converged:.2f} s after the last event; refreshes "
                  f"{sum(after['writes'].values()) - sum(before['writes'].values())}, writes "
                  f"{after['writes'].get('written', 0) - before['writes'].get('written', 0)}; "
                  f"event-to-meta latency {after['write_latency_ms']}")
            print(f"service peak RSS {peak_rss_mib(service.pid):.0f} MiB; read-to-write window "
                  f"{after['projects'][str(project)]['merge_window_ms']}")
            check = subprocess.run([sys.executable, "-m", "plugin", "sync", "--project", str(project), "--dry-run",
                                    "--json", "--quiet"], env=env, capture_output=True, text=True, check=True)
            print(f"sync --dry-run afterwards: {json.loads(check.stdout)['tasks_to_write']} tasks to write")
        finally:
            if service is not None:
                service.terminate()
                service.wait(timeout=30)


if __name__ == "__main__":
    main()
