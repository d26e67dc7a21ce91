"""Benchmark: a full read of a project's tasks from a local Label Studio, and whose CPU it costs.

Starts a throwaway Label Studio (SQLite, loopback), signs up five annotators,
imports N tasks of the demo's project (a single choice, multiple choices,
entity spans and a rating; 2 to 3 annotations a task, with predictions of two
model versions), then reads every task, 1,000 a page, two ways:

* ours: :meth:`plugin.labelstudio.client.LabelStudioClient.tasks`, each page's JSON
  read through the SDK's HTTP client as plain dicts;
* the peer: what a user of label-studio-sdk 2.x writes, and what this project
  did before: ``tasks.list(fields="all")``, whose typed page builds a model of
  every task, dumped back to a dict (``model_dump(mode="json")``).

Each read runs with the process's startup objects in the garbage collector's
passes (a plain script), then frozen out of them (``gc.freeze``, as
``ls-agreement`` does once its modules are imported). Printed for each: the
wall time, this process's CPU time (parsing, building models) and Label
Studio's (its process and children, from /proc), and the tasks read are
checked equal (as :func:`in_order` compares them).

    python bench/read_tasks.py [--tasks 5000] [--repeat 2]
"""

from __future__ import annotations

import argparse
import gc
import os
import time
from collections import Counter
from typing import Any

from label_studio_sdk import LabelStudio

from plugin.demo import CONFIG, simulated_export
from plugin.labelstudio.client import LabelStudioClient
from plugin.labelstudio.localserver import sign_up, throwaway
from plugin.settings import Connection


def process_tree_cpu(pid: int) -> float:
    """CPU seconds (user and system) of process ``pid`` and every process below it, from /proc."""
    children: dict[int, list[int]] = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/stat") as stat:
                    parent = int(stat.read().rsplit(")", 1)[1].split()[1])
            except (OSError, IndexError, ValueError):
                continue
            children.setdefault(parent, []).append(int(entry))
    total, stack = 0.0, [pid]
    while stack:
        current = stack.pop()
        try:
            with open(f"/proc/{current}/stat") as stat:
                fields = stat.read().rsplit(")", 1)[1].split()
            total += (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
        except (OSError, IndexError, ValueError):
            pass
        stack.extend(children.get(current, []))
    return total


def importable(tasks: list[dict[str, Any]], users: list[int]) -> list[dict[str, Any]]:
    """The demo's export as an import: annotations by the signed-up users (its imported ground truth by the first),
    ids left to Label Studio."""
    out = []
    for task in tasks:
        annotations = [{"completed_by": users[a["completed_by"] - 1] if 0 < a["completed_by"] <= len(users)
                        else users[0], "ground_truth": bool(a.get("ground_truth")), "result": a["result"],
                        "created_at": a["created_at"]} for a in task["annotations"]]
        predictions = [{k: v for k, v in p.items() if k != "id"} for p in task.get("predictions", [])]
        out.append({"data": task["data"], "annotations": annotations, "predictions": predictions})
    return out


def in_order(task: dict[str, Any]) -> dict[str, Any]:
    """A task as two reads of it compare: its annotations and predictions by id (Label Studio lists them in no set
    order), without ``created_ago`` (Label Studio's "0 minutes", "1 minute": the time since, as of the read)."""
    return {**task, **{key: sorted(({k: v for k, v in item.items() if k != "created_ago"} for item in task[key]),
                                   key=lambda item: item["id"])
                       for key in ("annotations", "predictions") if isinstance(task.get(key), list)}}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tasks", type=int, default=5_000)
    parser.add_argument("--repeat", type=int, default=2, help="reads of each kind (the best is printed)")
    args = parser.parse_args()

    started = time.perf_counter()
    with throwaway("ls-bench-", command=os.environ.get("LABEL_STUDIO_BIN")) as server:
        print(f"Label Studio up in {time.perf_counter() - started:.1f} s at {server.url}")
        users = [sign_up(server.url, f"reader{i}@example.com")[0] for i in range(5)]
        admin = LabelStudio(base_url=server.url, api_key=server.token, timeout=600)
        project = admin.projects.create(title="read bench", label_config=CONFIG).id
        started = time.perf_counter()
        tasks = importable(simulated_export(args.tasks, seed=0, references=True), users)
        for first in range(0, len(tasks), 1000):
            admin.projects.import_tasks(id=project, request=tasks[first:first + 1000])
        print(f"imported {args.tasks:,} tasks in {time.perf_counter() - started:.1f} s")
        client = LabelStudioClient(Connection(url=server.url, api_key=server.token, page_size=1000,
                                              timeout=600))

        def ours() -> list[dict[str, Any]]:
            return list(client.tasks(project))

        def peer() -> list[dict[str, Any]]:
            return [task.model_dump(mode="json")
                    for task in admin.tasks.list(project=project, fields="all", page_size=1000)]

        print("| reader | startup objects | wall s | this process's CPU s | per task | Label Studio's CPU s |")
        print("| --- | --- | --- | --- | --- | --- |")
        read: dict[str, list[dict[str, Any]]] = {}
        mine: dict[tuple[str, str], float] = {}
        for frozen in ("collected", "frozen"):
            if frozen == "frozen":
                gc.collect()
                gc.freeze()
            for name, reader in (("ours", ours), ("peer: tasks.list + model_dump", peer)):
                best = None
                for _ in range(args.repeat):
                    wall, cpu, theirs = time.perf_counter(), time.process_time(), process_tree_cpu(
                        server.process.pid)
                    read[name] = reader()
                    measured = (time.perf_counter() - wall, time.process_time() - cpu,
                                process_tree_cpu(server.process.pid) - theirs)
                    best = measured if best is None or measured[1] < best[1] else best
                wall_s, cpu_s, ls_s = best
                mine[(name, frozen)] = cpu_s
                print(f"| {name} | {frozen} | {wall_s:.1f} | {cpu_s:.2f} | {1e6 * cpu_s / args.tasks:.0f} µs | "
                      f"{ls_s:.1f} |", flush=True)
            theirs = {task["id"]: in_order(task) for task in read["peer: tasks.list + model_dump"]}
            differ = Counter(key for task in map(in_order, read["ours"])
                             for key in set(task) | set(theirs[task["id"]])
                             if task.get(key) != theirs[task["id"]].get(key))
            assert len(theirs) == len(read["ours"]) == args.tasks and not differ, f"the reads differ: {differ}"
        gc.unfreeze()
        for frozen in ("collected", "frozen"):
            ratio = mine[("peer: tasks.list + model_dump", frozen)] / mine[("ours", frozen)]
            print(f"this process's CPU, peer / ours, startup objects {frozen}: {ratio:.1f}x")
        print(f"the peer with its startup objects collected / ours frozen: "
              f"{mine[('peer: tasks.list + model_dump', 'collected')] / mine[('ours', 'frozen')]:.1f}x")


if __name__ == "__main__":
    main()
