"""Benchmark: the project scores of a free-text control with thousands of distinct answers.

N tasks (2,000 by default), three annotators who each type an answer; two of them always agree, so there are
2N distinct answers. Prints the time and the peak memory (tracemalloc) of the project scores (`sync`'s and the
report's), against the size of one items x answers count matrix: the memory should stay within a few of those,
never grow with answers x answers.

    python bench/free_text.py [--tasks 2000]
"""

from __future__ import annotations

import argparse
import time
import tracemalloc
import warnings

from plugin.labelconfig import parse_label_config
from plugin.settings import MappingOptions, ScoringOptions
from plugin.state import ProjectState

CONFIG = '<View><Text name="text" value="$text"/><TextArea name="answer" toName="text"/></View>'


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tasks", type=int, default=2000)
    args = parser.parse_args()
    tasks = [{"id": i, "data": {"text": "x"}, "annotations": [
        {"id": 10 * i + who, "completed_by": who, "result": [
            {"from_name": "answer", "to_name": "text", "type": "textarea",
             "value": {"text": [f"answer {i} {who % 2}"]}}]} for who in (1, 2, 3)]} for i in range(args.tasks)]
    state = ProjectState(None, parse_label_config(CONFIG), mapping=MappingOptions(), scoring=ScoringOptions())
    state.load(tasks)
    warnings.simplefilter("ignore")
    tracemalloc.start()
    started = time.perf_counter()
    state.scores()
    seconds = time.perf_counter() - started
    peak = tracemalloc.get_traced_memory()[1]
    matrix = args.tasks * 2 * args.tasks * 8
    print(f"{args.tasks:,} tasks, {2 * args.tasks:,} distinct answers: scores in {seconds:.2f} s, peak "
          f"{peak / 2**20:.0f} MiB = {peak / matrix:.1f} count matrices ({matrix / 2**20:.0f} MiB each)")


if __name__ == "__main__":
    main()
