"""Benchmark: what Label Studio spends on an annotation: the annotator's create, and the service's read and write.

On a throwaway Label Studio (its development server on SQLite; ``--server production`` for PostgreSQL under
uwsgi), a project with the demo's label config and a webhook to a local listener that answers 200 at once (as the
service's route does), each kind of request is sent ``--rounds`` times, one kind after the other:

* ``create``: an annotator's annotation (Label Studio calls the webhook inside it);
* ``read``: the service's read of that task after the event (:meth:`LabelStudioClient.tasks_by_id`, one task);
* ``write meta``: the service's write of the task's agreement block (:meth:`LabelStudioClient.update_meta`);
* ``write meta and data``: the same with the score mirrored into ``data`` (``--mirror-to-data``, as the demo runs);
* ``write meta, full queryset``: the meta write without ``?review=true`` (as the service sent it before), for
  comparison.

For each kind: the wall time (median and 95th percentile), and Label Studio's CPU time per request (user and system
time of its process group, from ``/proc``, over the kind's requests). Then what a pace of annotations asks of Label
Studio's CPU: annotations a second times (create + read + writes an annotation times a write), in cores; a
server that is asked for more than the CPU it gets queues, and the service's events wait in that queue.

    python bench/ls_share.py [--rounds 100] [--server production] [--pace 2.2] [--writes 1.08]

Under ``bench/busy.py`` (one CPU burner per core) it gives the same with every core busy.
"""

from __future__ import annotations

import argparse
import os
import random
import statistics
import threading
import time
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import requests
from label_studio_sdk import LabelStudio

from live_latency import percentile  # the same percentile as the latency bench (bench/ is on the path)
from plugin.clock import now_iso
from plugin.demo import CONFIG, annotate, make_truths
from plugin.labelstudio.client import LabelStudioClient
from plugin.labelstudio.events import EVENTS
from plugin.labelstudio.localserver import free_port, sign_up, throwaway
from plugin.mapping.labelconfig import parse_label_config
from plugin.settings import Connection, MappingOptions, ScoringOptions
from plugin.state.project import ProjectState

TICK = os.sysconf("SC_CLK_TCK")


def group_cpu(leader: int) -> float:
    """CPU seconds (user and system) of every process in the process group ``leader`` leads."""
    total = 0.0
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue  # gone meanwhile
        if int(fields[2]) == leader:  # fields after the name: state, ppid, pgrp, ..., utime (11), stime (12)
            total += (int(fields[11]) + int(fields[12])) / TICK
    return total


class _Answer(BaseHTTPRequestHandler):
    def do_POST(self) -> None:  # noqa: N802 (http.server's name)
        self.rfile.read(int(self.headers.get("Content-Length") or 0))
        self.send_response(200)
        self.send_header("Content-Length", "0")
        self.end_headers()

    def log_message(self, format: str, *args: object) -> None:  # noqa: A002 (http.server's name)
        return


def measured(leader: int, calls: list[Callable[[], object]]) -> tuple[list[float], float]:
    """Each call's wall seconds, and Label Studio's CPU seconds per call over them all."""
    walls = []
    before = group_cpu(leader)
    for call in calls:
        started = time.perf_counter()
        call()
        walls.append(time.perf_counter() - started)
    return walls, (group_cpu(leader) - before) / len(calls)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=100, help="requests of each kind (100)")
    parser.add_argument("--server", choices=("default", "production"), default="default",
                        help="Label Studio's own server on SQLite (default), or PostgreSQL with four uwsgi workers")
    parser.add_argument("--pace", type=float, default=2.2,
                        help="annotations a second to price (2.2: the demo's, five simulated annotators)")
    parser.add_argument("--writes", type=float, default=1.08,
                        help="the service's meta writes an annotation (1.08: the demo's with every core busy)")
    args = parser.parse_args()

    listener = ThreadingHTTPServer(("127.0.0.1", free_port()), _Answer)
    threading.Thread(target=listener.serve_forever, daemon=True).start()
    try:
        with throwaway("ls-share-bench-", production=args.server == "production",
                       command=os.environ.get("LABEL_STUDIO_BIN")) as server:
            leader = server.process.pid
            shape = "PostgreSQL, 4 uwsgi workers" if args.server == "production" else "SQLite, its server"
            print(f"Label Studio: {shape}; {args.rounds} requests of each kind, one at a time")
            admin = LabelStudio(base_url=server.url, api_key=server.token, timeout=120)
            project = int(admin.projects.create(title="share bench", label_config=CONFIG).id)
            rnd = random.Random(0)
            truths = make_truths(args.rounds, rnd)
            admin.projects.import_tasks(id=project, request=[{"data": {"text": t.text}, "meta": {"source": "bench"}}
                                                             for t in truths])
            tasks = sorted(int(t.id) for t in admin.tasks.list(project=project, page_size=1000))
            client = LabelStudioClient(Connection(url=server.url, api_key=server.token))
            client.ensure_webhook(project, url=f"http://127.0.0.1:{listener.server_address[1]}/webhook",
                                  actions=EVENTS, headers={})
            annotator = LabelStudio(base_url=server.url, api_key=sign_up(server.url, "share@example.com")[1],
                                    timeout=120)
            controls = parse_label_config(CONFIG)

            rows = {}
            rows["create"] = measured(leader, [
                lambda task=task, truth=truth: annotator.annotations.create(id=task, result=annotate(truth, 0.8, rnd))
                for task, truth in zip(tasks, truths, strict=True)])
            read: dict[int, dict] = {}
            rows["read"] = measured(leader, [
                lambda task=task: read.__setitem__(task, client.tasks_by_id(project, [task])[0]) for task in tasks])
            state = ProjectState.from_tasks(read.values(), controls, mapping=MappingOptions(), scoring=ScoringOptions())
            blocks = state.blocks(updated_at=now_iso())
            rows["write meta"] = measured(leader, [
                lambda task=task: client.update_meta(task, {**read[task]["meta"], "agreement": blocks[task]})
                for task in tasks])
            full = requests.Session()
            full.headers["Authorization"] = f"Token {server.token}"
            rows["write meta, full queryset"] = measured(leader, [
                lambda task=task: full.patch(f"{server.url}/api/tasks/{task}/", timeout=120, json={
                    "meta": {**read[task]["meta"], "agreement": blocks[task]}}).raise_for_status()
                for task in tasks])
            rows["write meta and data"] = measured(leader, [
                lambda task=task: client.update_meta(task, {**read[task]["meta"], "agreement": blocks[task]},
                                                     data={**read[task]["data"], "agreement_score": 0.5})
                for task in tasks])
    finally:
        listener.shutdown()

    print("| request | wall median / 95th (ms) | Label Studio's CPU a request (ms) |")
    print("| --- | --- | --- |")
    for kind, (walls, cpu) in rows.items():
        print(f"| {kind} | {1000 * statistics.median(walls):.0f} / {1000 * percentile(walls, 0.95):.0f} "
              f"| {1000 * cpu:.0f} |")
    create, read_cpu, write = rows["create"][1], rows["read"][1], rows["write meta and data"][1]
    ours = read_cpu + args.writes * write
    print(f"At {args.pace} annotations a second and {args.writes} writes an annotation, Label Studio's CPU: "
          f"{args.pace * create:.2f} cores for the annotators' creates, {args.pace * ours:.2f} for the service's "
          f"reads and writes, {args.pace * (create + ours):.2f} in all (the service's share "
          f"{ours / (create + ours):.0%}).")


if __name__ == "__main__":
    main()
