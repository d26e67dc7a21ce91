"""Benchmark: a full sync of a large project against a local Label Studio, and where the time goes.

Starts a throwaway Label Studio (SQLite, loopback), signs up three
annotators, imports N tasks with three annotations each (a single choice and
a rating, from annotators of different reliability), then runs
``sync_project`` twice: the first run writes every task's scores, the second
finds nothing changed and writes nothing. Prints fetch, compute and write
time for each run. Label Studio's own time (reading pages, answering PATCHes)
is the fetch and write columns; this project's share is the compute column.

    python bench/sync_project.py [--tasks 10000] [--writers 4]
"""

from __future__ import annotations

import argparse
import os
import time

import numpy as np
from label_studio_sdk import LabelStudio

from plugin.keeper.sync import sync_project
from plugin.labelstudio.client import LabelStudioClient
from plugin.labelstudio.localserver import sign_up, throwaway
from plugin.settings import Connection, MappingOptions, ScoringOptions

CONFIG = """<View><Text name="text" value="$text"/>
<Choices name="sentiment" toName="text"><Choice value="positive"/><Choice value="negative"/><Choice value="neutral"/></Choices>
<Rating name="quality" toName="text" maxRating="5"/></View>"""
SENTIMENTS = ("positive", "negative", "neutral")


def make_tasks(n_tasks: int, annotators: list[int], seed: int) -> list[dict]:
    rng = np.random.default_rng(seed)
    truth = rng.integers(0, 3, size=n_tasks)
    quality = rng.integers(1, 6, size=n_tasks)
    reliability = (0.9, 0.75, 0.5)
    tasks = []
    for i in range(n_tasks):
        annotations = []
        for user, accuracy in zip(annotators, reliability, strict=True):
            label = truth[i] if rng.random() < accuracy else rng.integers(0, 3)
            rating = int(np.clip(quality[i] + rng.integers(-1, 2), 1, 5))
            # Label Studio marks imported annotations as ground truth unless told otherwise.
            annotations.append({"completed_by": user, "ground_truth": False, "result": [
                {"from_name": "sentiment", "to_name": "text", "type": "choices",
                 "value": {"choices": [SENTIMENTS[label]]}},
                {"from_name": "quality", "to_name": "text", "type": "rating", "value": {"rating": rating}}]})
        tasks.append({"data": {"text": f"Item {i}"}, "meta": {"source": "bench"}, "annotations": annotations})
    return tasks


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tasks", type=int, default=10_000)
    parser.add_argument("--writers", type=int, default=4)
    parser.add_argument("--page-size", type=int, default=1000)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()

    started = time.perf_counter()
    with throwaway("ls-bench-", command=os.environ.get("LABEL_STUDIO_BIN")) as server:
        print(f"Label Studio up in {time.perf_counter() - started:.1f} s at {server.url}")
        annotators = [sign_up(server.url, f"bench{i}@example.com")[0] for i in range(3)]
        admin = LabelStudio(base_url=server.url, api_key=server.token, timeout=600)
        project = admin.projects.create(title="bench", label_config=CONFIG)
        started = time.perf_counter()
        tasks = make_tasks(args.tasks, annotators, args.seed)
        for start_at in range(0, len(tasks), 2000):
            admin.projects.import_tasks(id=project.id, request=tasks[start_at:start_at + 2000])
        print(f"imported {args.tasks} tasks with {3 * args.tasks} annotations in "
              f"{time.perf_counter() - started:.1f} s")
        client = LabelStudioClient(Connection(url=server.url, api_key=server.token, page_size=args.page_size,
                                              writers=args.writers, timeout=120))
        print(f"{'run':8s} {'fetch s':>8s} {'compute s':>10s} {'write s':>8s} {'written':>8s} {'ms/write':>9s}")
        for run in ("first", "second"):
            report = sync_project(client, project.id, None, mapping=MappingOptions(), scoring=ScoringOptions())
            seconds = report.seconds
            per_write = 1000 * seconds["write"] / report.tasks_written if report.tasks_written else 0.0
            print(f"{run:8s} {seconds['fetch']:8.1f} {seconds['compute']:10.2f} {seconds['write']:8.1f} "
                  f"{report.tasks_written:8d} {per_write:9.1f}")
            assert not report.failures, report.failures[:3]
        sentiment = report.scores.controls["sentiment"]
        print(f"sentiment: SPA {sentiment.spa} {sentiment.spa_ci}, alpha {sentiment.alpha}; "
              f"flagged {report.flagged} tasks")


if __name__ == "__main__":
    main()
