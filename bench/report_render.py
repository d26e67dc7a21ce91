"""Benchmark: the admin report of a large project, and its share of the time Label Studio takes to hand it over.

Builds the demo's project (single choice, multiple choices, spans, a rating; five annotators, two or three per
task) with N simulated tasks (10,000 by default), then times each stage of ``ls-agreement report`` offline: the
project state from the tasks (what ``sync`` computes too), the report's tables, and the HTML page; and the page's
size. With ``--serve`` it also imports the tasks into a throwaway Label Studio and times reading them back through
the client this project uses (the live report's read), so our share is printed against Label Studio's.

With ``--references`` the same tasks are timed again carrying the demo's references (two model versions'
predictions on every task, the known answer imported on the first tasks), and the cost of scoring them against the
annotators is printed as a share of the report's compute without them.

    python bench/report_render.py [--tasks 10000] [--serve] [--references] [--repeat 3]
"""

from __future__ import annotations

import argparse
import os
import platform
import tempfile
import time
from pathlib import Path

from plugin.demo import CONFIG, simulated_export
from plugin.mapping.labelconfig import parse_label_config
from plugin.report import build_report, write_report
from plugin.settings import MappingOptions, ScoringOptions
from plugin.state.project import ProjectState


def label_studio_read_seconds(tasks: list[dict]) -> float:
    """Import ``tasks`` with their annotations into a throwaway Label Studio and time reading them back."""
    from label_studio_sdk import LabelStudio

    from plugin.labelstudio import localserver
    from plugin.labelstudio.client import LabelStudioClient
    from plugin.settings import Connection

    with localserver.throwaway("ls-bench-", command=os.environ.get("LABEL_STUDIO_BIN")) as server:
        admin = LabelStudio(base_url=server.url, api_key=server.token, timeout=600)
        project = admin.projects.create(title="report bench", label_config=CONFIG)
        users = [localserver.sign_up(server.url, f"annotator{i}@example.com")[0] for i in range(5)]
        for start in range(0, len(tasks), 1000):
            admin.projects.import_tasks(id=project.id, request=[
                {"data": t["data"], "annotations": [
                    {**a, "completed_by": users[a["completed_by"] - 1], "ground_truth": False}
                    for a in t["annotations"]]} for t in tasks[start:start + 1000]])
        client = LabelStudioClient(Connection(url=server.url, api_key=server.token, page_size=1000, timeout=600))
        started = time.perf_counter()
        read = list(client.tasks(project.id))
        seconds = time.perf_counter() - started
        assert len(read) == len(tasks)
        return seconds


def timed_report(tasks: list[dict]) -> tuple[float, float, float, int]:
    """Seconds to build the state, the tables and the page of ``tasks``, and the page's size in bytes."""
    started = time.perf_counter()
    state = ProjectState(None, parse_label_config(CONFIG), mapping=MappingOptions(), scoring=ScoringOptions())
    state.load(tasks)
    loaded = time.perf_counter()
    report = build_report(state.snapshot(), source="bench", generated_at="now",
                          task_url="http://ls/projects/1/data?task={task}")
    tabled = time.perf_counter()
    with tempfile.TemporaryDirectory() as scratch:
        out = Path(scratch) / "report.html"
        write_report(report, out)
        drawn = time.perf_counter()
        size = out.stat().st_size
    return loaded - started, tabled - loaded, drawn - tabled, size


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tasks", type=int, default=10_000)
    parser.add_argument("--serve", action="store_true", help="also time Label Studio serving the same tasks")
    parser.add_argument("--references", action="store_true",
                        help="also time the same tasks with predictions and ground truth")
    parser.add_argument("--repeat", type=int, default=1,
                        help="time each variant this many times, interleaved, and keep each stage's fastest")
    args = parser.parse_args()
    tasks = simulated_export(args.tasks, seed=1)
    n_annotations = sum(len(t["annotations"]) for t in tasks)
    print(f"{args.tasks:,} tasks, {n_annotations:,} annotations; {platform.processor() or platform.machine()}, "
          f"{os.cpu_count()} cores")
    with_refs = simulated_export(args.tasks, seed=1, references=True) if args.references else []
    plain_runs, ref_runs = [], []
    for _ in range(max(1, args.repeat)):  # interleaved, so a slow spell on a shared machine hits both
        plain_runs.append(timed_report(tasks))
        if args.references:
            ref_runs.append(timed_report(with_refs))
    state, tables, page, size = (min(run[k] for run in plain_runs) for k in range(4))
    ours = state + tables + page
    print(f"state {state:.2f} s, tables {tables:.2f} s, page {page:.2f} s: "
          f"{ours:.2f} s in all; page {size / 1024:.0f} KiB")
    if args.references:
        r_state, r_tables, r_page, _ = (min(run[k] for run in ref_runs) for k in range(4))
        extra = (r_state + r_tables + r_page) - ours
        print(f"with references (2 model versions on every task, ground truth on "
              f"{sum(any(a.get('import_id') for a in t['annotations']) for t in with_refs):,}): state {r_state:.2f} s, "
              f"tables {r_tables:.2f} s, page {r_page:.2f} s; the references cost {extra:.2f} s, "
              f"{extra / ours:.2f} of the report's compute without them (goal: at most 0.20)")
    if args.serve:
        theirs = label_studio_read_seconds(tasks)
        print(f"Label Studio serving the tasks: {theirs:.2f} s; the report's share of the live run "
              f"{ours / (ours + theirs):.2f} (ours / Label Studio's = {ours / theirs:.2f})")


if __name__ == "__main__":
    main()
