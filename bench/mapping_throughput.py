"""Benchmark: mapping throughput per tag family, against the time Label Studio takes to serve the same tasks.

Makes a project of N tasks (10,000 by default) for each of four families:
boxes (RectangleLabels), polygons (PolygonLabels), spans (Labels on text) and
per-region OCR (Labels + Rectangle + a per-region TextArea, Label Studio's OCR
template). Each task has three annotators who each drew five regions
(``--regions``), near each other's (jittered), one in five with another label. Times
``plugin.mapping.map_project`` on every task (best of ``--repeat``) and prints
results per second.

With ``--serve`` it also starts a throwaway Label Studio (SQLite, loopback),
imports each project with its annotations, and times reading every task back
through the client this project uses (``LabelStudioClient.tasks``, pages of
1,000): Label Studio's time to serve the same tasks. The goal: mapping costs
less than a fifth of that.

    python bench/mapping_throughput.py [--tasks 10000] [--repeat 3] [--regions 5] [--serve]
"""

from __future__ import annotations

import argparse
import os
import time
from typing import Any

import numpy as np

from plugin.mapping import map_project
from plugin.mapping.annotations import Skips, collect_submissions
from plugin.mapping.labelconfig import parse_label_config
from plugin.settings import MappingOptions

CONFIGS = {
    "boxes": """<View><Image name="image" value="$image"/><RectangleLabels name="objects" toName="image">
      <Label value="car"/><Label value="person"/></RectangleLabels></View>""",
    "polygons": """<View><Image name="image" value="$image"/><PolygonLabels name="shapes" toName="image">
      <Label value="car"/><Label value="person"/></PolygonLabels></View>""",
    "spans": """<View><Text name="text" value="$text"/><Labels name="ner" toName="text">
      <Label value="PER"/><Label value="ORG"/></Labels></View>""",
    "ocr": """<View><Image name="image" value="$image"/><Labels name="label" toName="image">
      <Label value="Text"/><Label value="Handwriting"/></Labels><Rectangle name="bbox" toName="image"/>
      <TextArea name="transcription" toName="image" perRegion="true"/></View>""",
}
REGIONS, ANNOTATORS = 5, 3
"""Regions each annotator draws in a task (by default: ``--regions``), and annotators per task."""


def _results(family: str, rng: np.random.Generator, who: int, task: int, regions: int) -> list[dict[str, Any]]:
    out = []
    for index in range(regions):
        label = ("car", "person")[int(rng.random() < 0.2)]
        rid = f"r{task}-{who}-{index}"
        x, y = 5 + 18 * index + rng.normal(0, 0.5), 20 + rng.normal(0, 0.5)
        if family == "boxes":
            out.append({"id": rid, "from_name": "objects", "to_name": "image", "type": "rectanglelabels",
                        "value": {"x": x, "y": y, "width": 12, "height": 15, "rotation": 0,
                                  "rectanglelabels": [label]}, "original_width": 800, "original_height": 600})
        elif family == "polygons":
            out.append({"id": rid, "from_name": "shapes", "to_name": "image", "type": "polygonlabels",
                        "value": {"points": [[x, y], [x + 12, y + 1], [x + 11, y + 14], [x + 1, y + 12]],
                                  "closed": True, "polygonlabels": [label]},
                        "original_width": 800, "original_height": 600})
        elif family == "spans":
            start = 20 * index + int(rng.random() < 0.1)
            out.append({"id": rid, "from_name": "ner", "to_name": "text", "type": "labels",
                        "value": {"start": start, "end": start + 8, "text": "word",
                                  "labels": [("PER", "ORG")[label == "person"]]}})
        else:
            box = {"x": x, "y": y, "width": 12, "height": 4, "rotation": 0}
            text = "invoice total" if rng.random() < 0.8 else "invoice tota1"
            out.extend([
                {"id": rid, "from_name": "bbox", "to_name": "image", "type": "rectangle", "value": dict(box)},
                {"id": rid, "from_name": "label", "to_name": "image", "type": "labels",
                 "value": {**box, "labels": [("Text", "Handwriting")[label == "person"]]}},
                {"id": rid, "from_name": "transcription", "to_name": "image", "type": "textarea",
                 "value": {**box, "text": [text]}}])
    return out


def make_tasks(family: str, n_tasks: int, users: list[int], seed: int = 0, *, regions: int = REGIONS
               ) -> list[dict[str, Any]]:
    """N tasks of one family, each with three annotators' results of ``regions`` regions each (see the module
    notes)."""
    rng = np.random.default_rng(seed)
    data = {"image": "/static/images/logo.png", "text": "word " * max(40, 4 * regions)}  # every span within it
    return [{"id": task + 1, "data": data, "annotations": [
        {"id": task * ANNOTATORS + who + 1, "completed_by": user, "ground_truth": False,
         "result": _results(family, rng, who, task, regions)} for who, user in enumerate(users)]}
        for task in range(n_tasks)]


def time_mapping(family: str, tasks: list[dict[str, Any]], repeat: int) -> tuple[float, int, int]:
    """Best seconds of ``map_project`` over all tasks, the results read, and the rows made."""
    controls = parse_label_config(CONFIGS[family])
    submissions = collect_submissions(tasks, Skips())
    results = sum(len(s.results) for subs in submissions.values() for s in subs)
    best, rows = float("inf"), 0
    for _ in range(repeat):
        skips = Skips()
        started = time.perf_counter()
        mapped = map_project(controls, submissions, skips, MappingOptions())
        best = min(best, time.perf_counter() - started)
        rows = sum(len(m.records) for m in mapped.values())
        assert skips.total == 0, skips.as_dict()
    return best, results, rows


def time_serving(families: list[str], n_tasks: int, *, regions: int = REGIONS) -> dict[str, float]:
    """Seconds Label Studio takes to serve each family's project (tasks.list pages of 1,000)."""
    from label_studio_sdk import LabelStudio

    from plugin.labelstudio.client import LabelStudioClient
    from plugin.labelstudio.localserver import sign_up, throwaway
    from plugin.settings import Connection

    out = {}
    with throwaway("ls-bench-", command=os.environ.get("LABEL_STUDIO_BIN")) as server:
        admin = LabelStudio(base_url=server.url, api_key=server.token, timeout=600)
        users = [sign_up(server.url, f"bench{i}@example.com")[0] for i in range(ANNOTATORS)]
        client = LabelStudioClient(Connection(url=server.url, api_key=server.token, timeout=600, page_size=1000))
        for family in families:
            project = admin.projects.create(title=family, label_config=CONFIGS[family])
            made = make_tasks(family, n_tasks, users, regions=regions)
            tasks = [{k: v for k, v in t.items() if k != "id"} for t in made]
            for task in tasks:
                for annotation in task["annotations"]:
                    annotation.pop("id")
            for first in range(0, n_tasks, 2000):
                admin.projects.import_tasks(id=project.id, request=tasks[first:first + 2000])
            started = time.perf_counter()
            read = sum(1 for _ in client.tasks(project.id))
            out[family] = time.perf_counter() - started
            assert read == n_tasks, (family, read)
            print(f"  Label Studio served {family}: {read} tasks in {out[family]:.1f} s", flush=True)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tasks", type=int, default=10_000)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--serve", action="store_true", help="also time Label Studio serving the same tasks")
    parser.add_argument("--families", nargs="+", default=list(CONFIGS), choices=list(CONFIGS))
    parser.add_argument("--regions", type=int, default=REGIONS,
                        help="regions each annotator draws in a task, side by side (spans: the text grows with them)")
    args = parser.parse_args()
    served = time_serving(args.families, args.tasks, regions=args.regions) if args.serve else {}
    print(f"{args.tasks} tasks x {ANNOTATORS} annotators x {args.regions} regions; best of {args.repeat}")
    print("| family | results | rows | mapping s | results per s | Label Studio serving s | mapping / serving |")
    print("| --- | --- | --- | --- | --- | --- | --- |")
    for family in args.families:
        seconds, results, rows = time_mapping(family, make_tasks(family, args.tasks, [1, 2, 3], regions=args.regions),
                                               args.repeat)
        serving = served.get(family)
        ratio = f"{seconds / serving:.3f}" if serving else "-"
        print(f"| {family} | {results:,} | {rows:,} | {seconds:.2f} | {results / seconds:,.0f} | "
              f"{f'{serving:.1f}' if serving else '-'} | {ratio} |", flush=True)


if __name__ == "__main__":
    main()
