"""Benchmark: the live service's annotation-to-meta latency, and its in-process event throughput.

1. In process: a task as Label Studio returns it after an event, applied to
   the project state (mapping, running sums) and its block computed, per
   second; and the same for a free-text control as its distinct answers grow
   from 1,000 to 20,000 (the time per event must stay flat).
2. Against a local Label Studio with the service running as
   ``ls-agreement serve`` in a subprocess, Label Studio calling its webhook:
   * a steady stream: annotations created one at a time at a fixed rate; for
     each, the time from the create call returning (the annotation exists)
     until Label Studio stored the meta that shows it (the task's
     ``updated_at`` after the service's write, on the same machine's clock),
     and until a poll every 50 ms saw it (which adds the poll's own read);
   * a burst of N annotations from 8 threads at once; the service's own
     event-to-written-meta latency (``/status``) and how long after the last
     create every task's meta had settled.

    python bench/live_latency.py [--steady 100 --rate 4] [--burst 500] [--events 20000] [--server production]

``--server production`` runs Label Studio on PostgreSQL under uwsgi with four
workers (:func:`plugin.labelstudio.localserver.start_production`); the default is its own
development server on SQLite.
"""

from __future__ import annotations

import argparse
import os
import random
import statistics
import subprocess
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor

import requests
from label_studio_sdk import LabelStudio

from plugin.clock import parse_time
from plugin.labelstudio.localserver import free_port, sign_up, throwaway
from plugin.mapping.labelconfig import parse_label_config
from plugin.settings import MappingOptions, ScoringOptions
from plugin.state.project import ProjectState

SECRET = "benchmark-secret-0123456789"
CONFIG = """<View><Text name="text" value="$text"/>
<Choices name="sentiment" toName="text"><Choice value="pos"/><Choice value="neg"/><Choice value="neu"/></Choices>
<Rating name="quality" toName="text" maxRating="5"/></View>"""


def results(rnd: random.Random) -> list[dict]:
    return [{"from_name": "sentiment", "to_name": "text", "type": "choices",
             "value": {"choices": [rnd.choice(["pos", "neg", "neu"])]}},
            {"from_name": "quality", "to_name": "text", "type": "rating", "value": {"rating": rnd.randint(1, 5)}}]


def in_process(n_events: int) -> float:
    """Tasks applied to the state and their blocks computed, per second (each event re-reads one task)."""
    rnd = random.Random(0)
    state = ProjectState(1, parse_label_config(CONFIG), mapping=MappingOptions(), scoring=ScoringOptions())
    n_tasks = max(1, n_events // 3)
    state.load([{"id": t, "project": 1, "meta": {}, "annotations": []} for t in range(n_tasks)])
    annotations: dict[int, list[dict]] = {t: [] for t in range(n_tasks)}
    reads = []
    for i in range(n_events):
        task = i % n_tasks
        annotations[task] = [*annotations[task], {"id": i, "completed_by": i // n_tasks, "result": results(rnd),
                                                   "updated_at": f"2026-01-01T00:00:00.{i:06d}Z"}]
        reads.append({"id": task, "project": 1, "meta": {}, "annotations": annotations[task]})
    started = time.perf_counter()
    for read in reads:
        state.set_task(read)
        state.blocks([read["id"]], updated_at="")
    return n_events / (time.perf_counter() - started)


def free_text(n_categories: int, n_events: int = 2000) -> float:
    """Microseconds per event on a TextArea whose answers are all distinct (``n_categories`` of them first)."""
    config = '<View><Text name="text" value="$text"/><TextArea name="note" toName="text"/></View>'
    state = ProjectState(1, parse_label_config(config), mapping=MappingOptions(), scoring=ScoringOptions())

    def read(task: int, answers: tuple[str, str]) -> dict:
        return {"id": task, "project": 1, "meta": {}, "annotations": [
            {"id": 2 * task + k, "completed_by": k + 1, "updated_at": "2026-01-01T00:00:00Z",
             "result": [{"from_name": "note", "type": "textarea", "value": {"text": [answer]}}]}
            for k, answer in enumerate(answers)]}

    state.load(read(t, (f"a{t}", f"b{t}")) for t in range(n_categories // 2))
    started = time.perf_counter()
    for i in range(n_events):
        task = n_categories + i
        state.set_task(read(task, (f"c{task}", f"c{task}" if i % 2 else f"d{task}")))
        state.blocks([task], updated_at="")
    return 1e6 * (time.perf_counter() - started) / n_events


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steady", type=int, default=100, help="annotations in the steady stream")
    parser.add_argument("--rate", type=float, default=4.0, help="annotations per second in the steady stream")
    parser.add_argument("--burst", type=int, default=500, help="annotations in the burst")
    parser.add_argument("--events", type=int, default=20000, help="events for the in-process throughput")
    parser.add_argument("--reconcile-interval", type=float, default=300.0,
                        help="the service's seconds between passes (300, its default; 5 makes passes run among events)")
    parser.add_argument("--server", choices=("default", "production"), default="default",
                        help="Label Studio's own server on SQLite (default), or PostgreSQL with four uwsgi workers")
    args = parser.parse_args()

    rate = in_process(args.events)
    print(f"in process: {rate:,.0f} events/s over {args.events:,} events (a task re-read and scored each)")
    for n in (1_000, 20_000):
        print(f"free text with {n:,} distinct answers: {free_text(n):.0f} µs an event")

    with throwaway("ls-live-bench-", production=args.server == "production",
                   command=os.environ.get("LABEL_STUDIO_BIN")) as server:
        print(f"Label Studio: {'PostgreSQL, 4 uwsgi workers' if args.server == 'production' else 'SQLite, its server'}")
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
                                        "--port", str(port), "--reconcile-interval",
                                        str(args.reconcile_interval)], env=env, stdout=subprocess.DEVNULL,
                                       stderr=subprocess.DEVNULL)
            status_url = f"http://127.0.0.1:{port}/status"

            def status() -> dict:
                return requests.get(status_url, headers={"X-Agreement-Secret": SECRET}, timeout=5).json()

            for _ in range(200):
                try:
                    if status()["projects"][str(project.id)]["passes"]:
                        break
                except (requests.RequestException, KeyError):
                    pass
                time.sleep(0.3)
            rnd = random.Random(1)

            latencies, written, create_times = [], [], []
            for i in range(args.steady):
                task = tasks[i]
                started = time.perf_counter()
                users[i % 3].annotations.create(id=task, result=results(rnd))
                created, created_wall = time.perf_counter(), time.time()
                create_times.append(created - started)
                time.sleep(0.1)  # gently: the poll's own reads load Label Studio too
                while True:
                    read = admin.tasks.get(id=str(task))
                    block = (read.meta or {}).get("agreement")
                    if block and block["n_annotations"] == 1:
                        break
                    time.sleep(0.05)
                latencies.append(time.perf_counter() - created)
                written.append(parse_time(read.updated_at).timestamp() - created_wall)
                time.sleep(max(0.0, 1.0 / args.rate - (time.perf_counter() - started)))
            print(f"steady ({args.steady} annotations at {args.rate}/s): annotation to meta stored "
                  f"median {1000 * statistics.median(written):.0f} ms, p95 {1000 * percentile(written, 0.95):.0f} ms; "
                  f"seen by a poll median {1000 * statistics.median(latencies):.0f} ms, "
                  f"p95 {1000 * percentile(latencies, 0.95):.0f} ms; Label Studio's create call itself median "
                  f"{1000 * statistics.median(create_times):.0f} ms; "
                  f"read-to-write window {status()['projects'][str(project.id)]['merge_window_ms']}")
            before = status()["writes"].get("written", 0)

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
            while status()["projects"][str(project.id)]["pending_writes"]:
                time.sleep(0.05)
            settled = time.perf_counter()
            final = status()
            print(f"burst ({args.burst} annotations, 8 threads): created in {last_create - started:.1f} s "
                  f"({args.burst / (last_create - started):.0f}/s through Label Studio); every meta settled "
                  f"{1000 * (settled - last_create):.0f} ms after the last create; "
                  f"{final['writes'].get('written', 0) - before} writes (coalesced); service event-to-meta latency "
                  f"over the last writes: {final['write_latency_ms']}; read-to-write window "
                  f"{final['projects'][str(project.id)]['merge_window_ms']}")
        finally:
            if service is not None:
                service.terminate()
                try:
                    service.wait(timeout=20)
                except subprocess.TimeoutExpired:
                    service.kill()


if __name__ == "__main__":
    main()
