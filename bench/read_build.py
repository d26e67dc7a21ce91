"""Benchmark: this process's cost to read, map and build a task, against Label Studio's cost to serve it.

For each shape a throwaway Label Studio (``label-studio start``: SQLite, loopback) holds N tasks with their
annotations:

* ``demo``: the demo's project (a single choice, multiple choices, entity spans and a rating; 2 to 3 annotations a
  task, with predictions of two model versions), as ``bench/read_tasks.py`` imports it;
* ``spans``: named entities, three annotators, 12 entities of 4 labels a text, as ``bench/scale.py`` makes them;
* ``boxes``: RectangleLabels, three annotators drawing five boxes each, as ``bench/mapping_throughput.py`` makes
  them.

Every task is read back through :meth:`plugin.labelstudio.client.LabelStudioClient.tasks` (pages of 1,000), with the
process's startup objects frozen out of the garbage collector's passes as ``ls-agreement`` does; the pages read are
then loaded into a :class:`plugin.state.project.ProjectState`, as a full read builds one (each result mapped, each
task's rows packed). Measured per task, best of ``--repeat``: Label Studio's CPU while it serves the read (its
process and children, from /proc), this process's CPU for the read and for the build. The goal (issue "Speed that
holds on a busy machine"): read, map and build cost at most a tenth of what Label Studio spends serving the same
task, for every shape.

    python bench/read_build.py [--tasks 3000] [--shapes demo spans boxes] [--repeat 2]
"""

from __future__ import annotations

import argparse
import os
import random
import time
from typing import Any

from mapping_throughput import CONFIGS, make_tasks
from read_tasks import importable, process_tree_cpu
from scale import PAGE, config, span_page

SHAPES = ("demo", "spans", "boxes")


def shape_config(shape: str) -> str:
    """The shape's labeling config."""
    return CONFIGS["boxes"] if shape == "boxes" else config(shape)


def shape_tasks(shape: str, n_tasks: int) -> list[dict[str, Any]]:
    """The shape's tasks as an export gives them, annotators numbered from 1."""
    from plugin.demo import simulated_export

    if shape == "demo":
        return simulated_export(n_tasks, seed=0, references=True)
    if shape == "spans":
        return span_page(1, n_tasks, random.Random(0))
    tasks = make_tasks("boxes", n_tasks, [1, 2, 3])
    for task in tasks:
        for annotation in task["annotations"]:
            annotation["created_at"] = "2026-01-05T09:00:00Z"
    return tasks


def build_seconds(shape: str, project: int, read: list[dict[str, Any]]) -> tuple[float, int]:
    """This process's CPU seconds to load the tasks read into a new project state, a page at a time, and the
    results it read."""
    from plugin.mapping.labelconfig import parse_label_config
    from plugin.settings import MappingOptions, ScoringOptions
    from plugin.state.project import ProjectState

    state = ProjectState(project, parse_label_config(shape_config(shape)), mapping=MappingOptions(),
                         scoring=ScoringOptions())
    started = time.process_time()
    for first in range(0, len(read), PAGE):
        state.load(read[first:first + PAGE])
    spent = time.process_time() - started
    assert len(state.tasks) == len(read), (shape, len(state.tasks), len(read))
    return spent, sum(len(a["result"]) for task in read for a in task["annotations"])


def main() -> None:
    from label_studio_sdk import LabelStudio

    from plugin.keeper.memory import freeze_startup_objects
    from plugin.labelstudio.client import LabelStudioClient
    from plugin.labelstudio.localserver import sign_up, throwaway
    from plugin.settings import Connection

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tasks", type=int, default=3_000)
    parser.add_argument("--shapes", nargs="+", choices=SHAPES, default=list(SHAPES))
    parser.add_argument("--repeat", type=int, default=2, help="reads and builds of each shape (the best is printed)")
    args = parser.parse_args()

    rows = []
    with throwaway("ls-bench-", command=os.environ.get("LABEL_STUDIO_BIN")) as server:
        users = [sign_up(server.url, f"reader{i}@example.com")[0] for i in range(5)]
        admin = LabelStudio(base_url=server.url, api_key=server.token, timeout=600)
        client = LabelStudioClient(Connection(url=server.url, api_key=server.token, page_size=PAGE, timeout=600))
        freeze_startup_objects()  # as ls-agreement does once its modules are imported
        for shape in args.shapes:
            project = admin.projects.create(title=f"read and build: {shape}", label_config=shape_config(shape)).id
            tasks = importable(shape_tasks(shape, args.tasks), users)
            for first in range(0, len(tasks), 1000):
                admin.projects.import_tasks(id=project, request=tasks[first:first + 1000])
            del tasks
            best: tuple[float, float] | None = None
            read: list[dict[str, Any]] = []
            for _ in range(args.repeat):
                cpu, theirs = time.process_time(), process_tree_cpu(server.process.pid)
                read = list(client.tasks(project))
                measured = (time.process_time() - cpu, process_tree_cpu(server.process.pid) - theirs)
                best = measured if best is None or measured[0] < best[0] else best
            assert best is not None and len(read) == args.tasks, (shape, len(read))
            build, results = min(build_seconds(shape, project, read) for _ in range(args.repeat))
            ours, serving = best
            rows.append((shape, results, serving, ours, build))
            print(f"  {shape}: Label Studio {serving:.1f} s CPU, read {ours:.2f} s, build {build:.2f} s", flush=True)
    n = args.tasks
    print(f"{n:,} tasks a shape, best of {args.repeat}; CPU per task")
    print("| shape | results | Label Studio serving | read | map and build | read + build | (read + build) / serving |")
    print("| --- | --- | --- | --- | --- | --- | --- |")
    for shape, results, serving, ours, build in rows:
        print(f"| {shape} | {results:,} | {1e6 * serving / n:,.0f} µs | {1e6 * ours / n:,.0f} µs | "
              f"{1e6 * build / n:,.0f} µs | {1e6 * (ours + build) / n:,.0f} µs | {(ours + build) / serving:.3f} |")


if __name__ == "__main__":
    main()
