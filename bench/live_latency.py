"""Benchmark: the live service's annotation-to-meta latency, and its in-process event throughput.

1. In process: parsed events applied to the service state (mapping, running
   sums; no HTTP, no writes), events per second.
2. Against a local Label Studio with the service running as
   ``ls-agreement serve`` in a subprocess, Label Studio calling its webhook:
   * a steady stream: annotations created one at a time at a fixed rate; for
     each, the time from the create call returning (the annotation exists)
     until the task's meta shows it, polled every 20 ms;
   * a burst of N annotations from 8 threads at once; the service's own
     event-to-written-meta latency (``/status``) and how long after the last
     create every task's meta had settled.

    python bench/live_latency.py [--steady 100 --rate 4] [--burst 2000] [--events 20000]
"""

from __future__ import annotations

import argparse
import os
import random
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import requests
from label_studio_sdk import LabelStudio

from plugin.labelconfig import parse_label_config
from plugin.live import LiveProject
from plugin.localserver import free_port, sign_up, start
from plugin.service import parse_event
from plugin.settings import MappingOptions, ScoringOptions

SECRET = "benchmark-secret-0123456789"
CONFIG = """<View><Text name="text" value="$text"/>
<Choices name="sentiment" toName="text"><Choice value="pos"/><Choice value="neg"/><Choice value="neu"/></Choices>
<Rating name="quality" toName="text" maxRating="5"/></View>"""


def results(rnd: random.Random) -> list[dict]:
    return [{"from_name": "sentiment", "to_name": "text", "type": "choices",
             "value": {"choices": [rnd.choice(["pos", "neg", "neu"])]}},
            {"from_name": "quality", "to_name": "text", "type": "rating", "value": {"rating": rnd.randint(1, 5)}}]


def in_process(n_events: int) -> float:
    rnd = random.Random(0)
    live = LiveProject(1, parse_label_config(CONFIG), mapping=MappingOptions(), scoring=ScoringOptions())
    n_tasks = max(1, n_events // 3)
    live.load([{"id": t, "meta": {}, "annotations": []} for t in range(n_tasks)])
    payloads = [{"action": "ANNOTATION_CREATED", "project": {"id": 1},
                 "annotation": {"id": i, "task": i % n_tasks, "completed_by": i // n_tasks, "result": results(rnd),
                                "updated_at": f"2026-01-01T00:00:00.{i:06d}Z"}} for i in range(n_events)]
    started = time.perf_counter()
    for payload in payloads:
        event = parse_event(payload)
        for annotation, task, meta in event.annotations:
            live.apply_annotation(annotation, task, task_meta=meta)
    return n_events / (time.perf_counter() - started)


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steady", type=int, default=100, help="annotations in the steady stream")
    parser.add_argument("--rate", type=float, default=4.0, help="annotations per second in the steady stream")
    parser.add_argument("--burst", type=int, default=2000, help="annotations in the burst")
    parser.add_argument("--events", type=int, default=20000, help="events for the in-process throughput")
    args = parser.parse_args()

    rate = in_process(args.events)
    print(f"in process: {rate:,.0f} events/s over {args.events:,} events (goal 50,000)")

    with tempfile.TemporaryDirectory(prefix="ls-live-bench-") as directory:
        server = start(Path(directory) / "server", command=os.environ.get("LABEL_STUDIO_BIN"))
        service = None
        try:
            admin = LabelStudio(base_url=server.url, api_key=server.token, timeout=120)
            project = admin.projects.create(title="live bench", label_config=CONFIG)
            n_tasks = args.steady + args.burst // 3 + 1
            admin.projects.import_tasks(id=project.id, request=[{"data": {"text": f"t{i}"}} for i in range(n_tasks)])
            tasks = sorted(t.id for t in admin.tasks.list(project=project.id, page_size=1000))
            users = [LabelStudio(base_url=server.url, api_key=sign_up(server.url, f"live{i}@example.com")[1],
                                 timeout=120) for i in range(3)]
            port = free_port()
            env = {**os.environ, "LABEL_STUDIO_URL": server.url, "LABEL_STUDIO_API_KEY": server.token,
                   "AGREEMENT_WEBHOOK_SECRET": SECRET}
            service = subprocess.Popen([sys.executable, "-m", "plugin", "serve", "--project", str(project.id),
                                        "--port", str(port)], env=env, stdout=subprocess.DEVNULL,
                                       stderr=subprocess.DEVNULL)
            status_url = f"http://127.0.0.1:{port}/status"
            for _ in range(200):
                try:
                    if str(project.id) in requests.get(status_url, timeout=2).json()["projects"]:
                        break
                except requests.RequestException:
                    time.sleep(0.3)
            rnd = random.Random(1)

            latencies, create_times = [], []
            for i in range(args.steady):
                task = tasks[i]
                started = time.perf_counter()
                users[i % 3].annotations.create(id=task, result=results(rnd))
                created = time.perf_counter()
                create_times.append(created - started)
                while True:
                    block = (admin.tasks.get(id=str(task)).meta or {}).get("agreement")
                    if block and block["n_annotations"] == 1:
                        break
                    time.sleep(0.02)
                latencies.append(time.perf_counter() - created)
                time.sleep(max(0.0, 1.0 / args.rate - (time.perf_counter() - started)))
            print(f"steady ({args.steady} annotations at {args.rate}/s): annotation to meta "
                  f"median {1000 * statistics.median(latencies):.0f} ms, p95 {1000 * percentile(latencies, 0.95):.0f} ms"
                  f"; Label Studio's create call itself median {1000 * statistics.median(create_times):.0f} ms")
            before = requests.get(status_url, timeout=5).json()["written"]

            burst_tasks = tasks[args.steady:]
            jobs = [(burst_tasks[i // 3], i % 3) for i in range(args.burst)]
            lock = threading.Lock()
            finished = []

            def create(job: tuple[int, int]) -> None:
                task, who = job
                users[who].annotations.create(id=task, result=results(random.Random(task * 3 + who)))
                with lock:
                    finished.append(time.perf_counter())

            started = time.perf_counter()
            with ThreadPoolExecutor(max_workers=8) as pool:
                list(pool.map(create, jobs))
            last_create = time.perf_counter()
            while requests.get(status_url, timeout=5).json()["projects"][str(project.id)]["pending_writes"]:
                time.sleep(0.05)
            settled = time.perf_counter()
            status = requests.get(status_url, timeout=5).json()
            print(f"burst ({args.burst} annotations, 8 threads): created in {last_create - started:.1f} s "
                  f"({args.burst / (last_create - started):.0f}/s through Label Studio); every meta settled "
                  f"{1000 * (settled - last_create):.0f} ms after the last create; {status['written'] - before} writes "
                  f"(coalesced); service event-to-meta latency over the last writes: {status['write_latency_ms']}")
        finally:
            try:
                if service is not None:
                    service.terminate()
                    try:
                        service.wait(timeout=20)
                    except subprocess.TimeoutExpired:
                        service.kill()
            finally:
                server.stop()


if __name__ == "__main__":
    main()
