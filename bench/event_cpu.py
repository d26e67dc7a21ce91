"""Benchmark: an event's own CPU in the live service, on the demo's project with its references.

What ``ls-agreement serve`` does on each webhook event, in process and without Label Studio: the task read is put
into the project's state (:meth:`plugin.state.project.ProjectState.set_task`) and its agreement block computed
(:meth:`~plugin.state.project.ProjectState.blocks`). The project is the demo's (sentiment, topics, helpfulness and
entities; ground truth imported on the first tasks, two model versions' predictions on every task): by default its
simulated export (:func:`plugin.demo.simulated_export`), or with ``--tasks`` a file ``{"config": ..., "tasks":
[...]}`` holding a project's config and its tasks as Label Studio returned them.

Printed: the full pass (``load`` of every task, then ``stale_tasks``, which scores them all), then the milliseconds
an event takes, for ``--events`` tasks read again as they were, and for as many read with their last annotation
removed (a changed task). Each figure is the median of ``--repeat`` runs.

    python bench/event_cpu.py [--tasks FILE] [--n-tasks 300] [--events 100] [--repeat 3]
"""

from __future__ import annotations

import argparse
import copy
import json
import statistics
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from plugin.mapping.labelconfig import parse_label_config  # noqa: E402 (after the path: runnable from a checkout)
from plugin.settings import MappingOptions, ScoringOptions  # noqa: E402
from plugin.state.project import ProjectState  # noqa: E402


def project(path: Path | None, n_tasks: int) -> tuple[str, list[dict[str, Any]]]:
    """The config and the tasks: those of ``path``, or the demo's simulated export of ``n_tasks`` tasks."""
    if path is not None:
        read = json.loads(path.read_text())
        return read["config"], read["tasks"]
    from plugin.demo import CONFIG, simulated_export

    return CONFIG, simulated_export(n_tasks, references=True)


def measure(config: str, tasks: list[dict[str, Any]], events: int) -> dict[str, float]:
    """One run: the full pass's seconds and the milliseconds an event takes, unchanged and changed."""
    started = time.perf_counter()
    state = ProjectState(1, parse_label_config(config), mapping=MappingOptions(), scoring=ScoringOptions())
    state.load(tasks)
    loaded = time.perf_counter()
    state.stale_tasks()
    passed = time.perf_counter()
    out = {"load_s": loaded - started, "stale_tasks_s": passed - loaded, "pass_s": passed - started}
    changed = []
    for task in tasks[events:2 * events]:
        task = copy.deepcopy(task)
        task["annotations"] = task["annotations"][:-1]
        changed.append(task)
    for name, batch in (("event_same_ms", tasks[:events]), ("event_changed_ms", changed)):
        begun = time.perf_counter()
        for task in batch:
            state.set_task(task)
            state.blocks([task["id"]], updated_at="")
        out[name] = (time.perf_counter() - begun) * 1000 / max(len(batch), 1)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tasks", type=Path, help="a project's config and tasks as Label Studio returned them")
    parser.add_argument("--n-tasks", type=int, default=300, help="the simulated demo's tasks (without --tasks)")
    parser.add_argument("--events", type=int, default=100, help="events of each kind")
    parser.add_argument("--repeat", type=int, default=3, help="runs; the median of each figure is printed")
    options = parser.parse_args()
    config, tasks = project(options.tasks, options.n_tasks)
    runs = [measure(config, tasks, options.events) for _ in range(options.repeat)]
    medians = {key: statistics.median(run[key] for run in runs) for key in runs[0]}
    print(f"{len(tasks)} tasks: load {medians['load_s']:.2f} s, stale_tasks {medians['stale_tasks_s']:.2f} s, "
          f"full pass {medians['pass_s']:.2f} s")
    print(f"an event: {medians['event_same_ms']:.1f} ms read again as it was, "
          f"{medians['event_changed_ms']:.1f} ms changed")


if __name__ == "__main__":
    main()
