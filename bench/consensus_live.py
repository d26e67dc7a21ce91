"""Consensus in a project's state: what it adds to a pass, and what a live event costs with it.

A demo-shaped project (:func:`plugin.demo.simulated_export`: single and multiple choices, spans, a rating; 2 to 3
annotations a task) is built once; then, with ``--consensus dawid-skene`` and ``off``:

* **a pass**: every task's scores at once (:meth:`ProjectState.task_scores`), where the consensus model of each
  categorical control is fit from scratch over every item;
* **an event**: one task read again (an annotation changed) and its scores computed
  (``set_task`` then ``task_scores([task])``), where the consensus scores the task's items with the fit held from
  the last pass (one E-step over the task), the median and 95th percentile over ``--events`` tasks.

The script prints the times and their ratios (with consensus over without); it never asserts a time.

Usage: ``python bench/consensus_live.py [--tasks 30000] [--events 300]``.
"""

from __future__ import annotations

import argparse
import copy
import os
import platform
import statistics
import time

from plugin.demo import CONFIG, simulated_export
from plugin.mapping.labelconfig import parse_label_config
from plugin.settings import MappingOptions, ScoringOptions
from plugin.state.project import ProjectState


def measure(tasks: list[dict], method: str, events: int) -> dict[str, float]:
    """Build, time a pass twice (the best counts) and ``events`` events, with one consensus method."""
    state = ProjectState(1, parse_label_config(CONFIG), mapping=MappingOptions(),
                         scoring=ScoringOptions(n_resamples=20, consensus=method))
    state.load(copy.deepcopy(tasks))
    passes = []
    for _ in range(2):
        started = time.perf_counter()
        state.task_scores()
        passes.append(time.perf_counter() - started)
    times = []
    for task in tasks[:: max(1, len(tasks) // events)][:events]:
        changed = copy.deepcopy(task)
        if changed["annotations"]:
            changed["annotations"] = changed["annotations"][:-1]  # one annotation deleted
        started = time.perf_counter()
        state.set_task(changed)
        state.task_scores([task["id"]])
        times.append(time.perf_counter() - started)
    times.sort()
    return {"pass": min(passes), "event_p50": statistics.median(times),
            "event_p95": times[int(0.95 * (len(times) - 1))]}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--tasks", type=int, default=30_000)
    parser.add_argument("--events", type=int, default=300)
    args = parser.parse_args()
    tasks = simulated_export(args.tasks, seed=1)
    print(f"{platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}; "
          f"{args.tasks:,} demo tasks, {args.events} events")
    found = {method: measure(tasks, method, args.events) for method in ("off", "majority", "dawid-skene")}
    off = found["off"]
    print(f"{'consensus':12s} {'a pass':>9s} {'ratio':>6s} {'event p50':>10s} {'ratio':>6s} {'event p95':>10s}")
    for method, values in found.items():
        print(f"{method:12s} {values['pass']:8.2f}s {values['pass'] / off['pass']:6.2f} "
              f"{values['event_p50'] * 1000:8.2f}ms {values['event_p50'] / off['event_p50']:6.2f} "
              f"{values['event_p95'] * 1000:8.2f}ms")


if __name__ == "__main__":
    main()
