"""Benchmark: the project scores of a free-text control with thousands of distinct answers.

N tasks (2,000 and 20,000 by default), three annotators who each type an answer; two of them always agree, so
there are 2N distinct answers. Prints the time and the peak memory (tracemalloc) of the project scores (`sync`'s)
and of the report's tables, against the size of one items x answers count matrix. Up to
:data:`agreement.counts.WIDE_CELLS` cells the scores use that matrix and should stay within a few of it, never grow
with answers x answers; past it they come from sparse counts, in memory that grows with the annotations alone.

    python bench/free_text.py [--tasks 2000 20000]
"""

from __future__ import annotations

import argparse
import time
import tracemalloc
import warnings

from agreement.counts import WIDE_CELLS
from plugin.mapping.labelconfig import parse_label_config
from plugin.report import build_report
from plugin.settings import MappingOptions, ScoringOptions
from plugin.state.project import ProjectState

CONFIG = '<View><Text name="text" value="$text"/><TextArea name="answer" toName="text"/></View>'


def measure(n_tasks: int) -> None:
    """Build the state of ``n_tasks`` tasks, then time and trace the scores and the report's tables."""
    tasks = [{"id": i, "data": {"text": "x"}, "annotations": [
        {"id": 10 * i + who, "completed_by": who, "result": [
            {"from_name": "answer", "to_name": "text", "type": "textarea",
             "value": {"text": [f"answer {i} {who % 2}"]}}]} for who in (1, 2, 3)]} for i in range(n_tasks)]
    state = ProjectState(None, parse_label_config(CONFIG), mapping=MappingOptions(), scoring=ScoringOptions())
    state.load(tasks)
    del tasks
    warnings.simplefilter("ignore")
    snapshot = state.snapshot()
    tracemalloc.start()
    started = time.perf_counter()
    snapshot.scores()
    seconds = time.perf_counter() - started
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.reset_peak()
    started = time.perf_counter()
    build_report(snapshot, source="bench", generated_at="now")
    report_seconds = time.perf_counter() - started
    report_peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    matrix = n_tasks * 2 * n_tasks * 8
    print(f"| {n_tasks:,} | {2 * n_tasks:,} | {matrix / 2**20:,.0f} MiB | "
          f"{'sparse counts' if n_tasks * 2 * n_tasks > WIDE_CELLS else 'count matrix'} | {seconds:.2f} s | "
          f"{peak / 2**20:,.0f} MiB | {report_seconds:.2f} s | {report_peak / 2**20:,.0f} MiB |", flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tasks", type=int, nargs="+", default=[2000, 20000])
    args = parser.parse_args()
    print("| tasks | distinct answers | one count matrix | scored from | scores | peak | report tables | peak |")
    print("| --- | --- | --- | --- | --- | --- | --- | --- |")
    for n_tasks in args.tasks:
        measure(n_tasks)


if __name__ == "__main__":
    main()
