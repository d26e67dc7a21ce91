"""Benchmark: what one reconcile pass costs Label Studio, in requests and seconds per 1,000 tasks.

Starts a throwaway Label Studio (SQLite, loopback), imports N tasks with three
annotations each, then runs the passes ``serve`` runs:

1. a full pass on a project whose meta holds no scores: every task is stale,
   and each is read again and written (a GET and a PATCH);
2. a full pass with nothing changed: every page is read, nothing is written;
3. a pass of changed tasks only, after 1% of the tasks got one more annotation
   (the Data Manager filter on ``updated_at``): the changed tasks are read,
   and the tasks whose score moved are written.

Every request to Label Studio is counted (an httpx event hook), and the time
is split into reading, this project's computing, and writing.

    python bench/reconcile_pass.py [--tasks 2000] [--writers 4]
"""

from __future__ import annotations

import argparse
import os
import random
import time
from collections import Counter

import httpx
from label_studio_sdk import LabelStudio
from sync_project import CONFIG, SENTIMENTS, make_tasks

from plugin.keeper.monitor import ProjectMonitor
from plugin.keeper.passes import full_pass
from plugin.keeper.writer import TaskWriter
from plugin.labelstudio.client import LabelStudioClient
from plugin.labelstudio.localserver import sign_up, throwaway
from plugin.settings import Connection, MappingOptions, ScoringOptions


def run_pass(client: LabelStudioClient, monitor: ProjectMonitor, requests: Counter[str], *, incremental: bool,
             writers: int) -> dict[str, float]:
    requests.clear()
    report = full_pass(client, monitor, incremental=incremental)
    read_requests = sum(requests.values())
    written = time.perf_counter()
    writer = TaskWriter(client, {monitor.project: monitor}, workers=writers, coalesce_seconds=0.0)
    writer.start()
    try:
        writer.request(monitor.project, report.stale)
        assert writer.wait_idle(timeout=7200)
    finally:
        writer.stop()
    return {"kind": report.kind, "tasks read": report.n_tasks, "stale": len(report.stale),
            "read requests": read_requests, "write requests": sum(requests.values()) - read_requests,
            "read s": report.seconds["read"], "compute s": report.seconds["compute"],
            "write s": time.perf_counter() - written, "written": writer.outcomes["written"]}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tasks", type=int, default=2000)
    parser.add_argument("--writers", type=int, default=4)
    parser.add_argument("--page-size", type=int, default=500)
    args = parser.parse_args()

    with throwaway("ls-pass-bench-", command=os.environ.get("LABEL_STUDIO_BIN")) as server:
        annotators = [sign_up(server.url, f"pass{i}@example.com")[0] for i in range(4)]
        admin = LabelStudio(base_url=server.url, api_key=server.token, timeout=600)
        project = admin.projects.create(title="pass bench", label_config=CONFIG)
        tasks = make_tasks(args.tasks, annotators[:3], 0)
        for at in range(0, len(tasks), 2000):
            admin.projects.import_tasks(id=project.id, request=tasks[at:at + 2000])
        requests: Counter[str] = Counter()
        http = httpx.Client(timeout=120, event_hooks={"request": [
            lambda request: requests.update([f"{request.method} {request.url.path.split('/')[2]}"])]})
        client = LabelStudioClient(Connection(url=server.url, api_key=server.token, page_size=args.page_size,
                                              writers=args.writers, timeout=120), httpx_client=http)
        monitor = ProjectMonitor(project.id, mapping=MappingOptions(), scoring=ScoringOptions())
        rows = [("first (nothing written yet)", run_pass(client, monitor, requests, incremental=False,
                                                         writers=args.writers)),
                ("full, nothing changed", run_pass(client, monitor, requests, incremental=False,
                                                   writers=args.writers))]
        ids = sorted(monitor.state.tasks)  # type: ignore[union-attr]
        rnd = random.Random(1)
        for task in rnd.sample(ids, max(1, len(ids) // 100)):
            admin.annotations.create(id=task, completed_by=annotators[3], result=[
                {"from_name": "sentiment", "to_name": "text", "type": "choices",
                 "value": {"choices": [rnd.choice(SENTIMENTS)]}}])
        rows.append(("changed only, 1% changed", run_pass(client, monitor, requests, incremental=True,
                                                          writers=args.writers)))
        print(f"{args.tasks} tasks, page size {args.page_size}, {args.writers} writers")
        for name, row in rows:
            per = 1000 / args.tasks
            print(f"{name:28s} {row['kind']:8s} read {row['tasks read']:6d} tasks with {row['read requests']:4d} "
                  f"requests in {row['read s']:6.1f} s ({row['read s'] * per:5.1f} s per 1,000 tasks); "
                  f"compute {row['compute s']:5.2f} s; stale {row['stale']:5d}; "
                  f"{row['write requests']:5d} write-path requests in {row['write s']:6.1f} s")


if __name__ == "__main__":
    main()
