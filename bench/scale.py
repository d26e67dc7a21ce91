"""Scale: a project's state at 10,000 to 1,000,000 tasks, against what a user would otherwise do.

For each size and shape, a fresh process builds :class:`plugin.state.project.ProjectState` from synthetic tasks fed
page by page (a full read: the whole project is never held at once; each page is JSON text parsed with
``json.loads`` as a read receives it, timed apart as "JSON parse", the floor of any read of these tasks), scores every task and the
project, builds the report's tables from those scores (a report scores once, so "report tables" is the tables
alone), computes what a reconcile pass computes once the project is scored (every task's block, diffed with its
meta), then a pass again with nothing changed (the service's pass on a project nobody touched since: the last
answer), and a pass after one annotation of one task was deleted (the pass of a project being labeled: every task's
block again), and reports the times and the resident memory: the peak over all of it and the peak while scoring
(each phase's peak taken apart, by starting the kernel's high-water mark again after each phase), and the steady
memory the state holds once the pages are gone (RSS after a garbage collection, less the process's RSS before the
build), and what the state holds once every task is scored (its span measures too), as ``/status`` counts it
(:func:`plugin.keeper.memory.deep_size`). Last, what ``serve --state-dir`` pays for that state: saving it (pickled,
written and synced to a file) and, once the state is let go, restoring it from the file as a restarted service does.

The peer, in a process of its own, is what a user would write without this project: the same tasks as one export
JSON read with ``json.loads``, flattened with ``pd.json_normalize`` (annotations, then their results), pivoted into
annotator x task tables per choice and rating control, and scored with ``krippendorff.alpha``. It scores two controls
where the project scores every control and every task; its times are a floor of that work, not a like for like.

Shapes:

* ``demo``: the demo's project (single choice, multiple choices, spans, a 5-point rating; 2 to 3 annotations per
  task; :func:`plugin.demo.simulated_export`);
* ``spans``: named entities only, 3 annotators per task, 12 entities of 4 labels per text, each annotator missing,
  mislabelling or shifting some.

Goals (issues "A million tasks on one machine" and "Speed that holds on a busy machine"): at most 2 KiB of steady
memory per task, full scoring of 1,000,000 demo tasks under 30 s with a peak under 4 GiB while scoring. The script
prints the measured values beside them; it never asserts a time.

Usage: ``python bench/scale.py [--sizes 10000 100000] [--shapes demo spans] [--peer]``.
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import platform
import random
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

PAGE = 1000
"""Tasks per page, as a read from Label Studio delivers them."""

SPAN_CONFIG = """<View><Text name="text" value="$text"/>
<Labels name="ner" toName="text"><Label value="PER"/><Label value="ORG"/><Label value="LOC"/><Label value="MISC"/></Labels>
</View>"""
SPAN_LABELS = ("PER", "ORG", "LOC", "MISC")


def rss_bytes() -> int:
    """The process's resident memory now."""
    with open("/proc/self/statm") as statm:
        return int(statm.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


def peak_rss_bytes() -> int:
    """The process's highest resident memory so far (VmHWM)."""
    with open("/proc/self/status") as status:
        for line in status:
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) * 1024
    return 0


def reset_peak() -> None:
    """Start the process's highest resident memory (VmHWM) again from what it holds now (Linux's clear_refs)."""
    try:
        with open("/proc/self/clear_refs", "w") as refs:
            refs.write("5")
    except OSError:  # not Linux, or not allowed: the peaks are then the process's whole
        pass


def span_page(first: int, n: int, rnd: random.Random) -> list[dict[str, Any]]:
    """``n`` span-heavy tasks from id ``first``: 12 entities a text, 3 annotators who miss, relabel or shift some."""
    tasks = []
    for offset in range(n):
        task = first + offset
        words = [f"w{rnd.randrange(10_000)}" for _ in range(60)]
        text = " ".join(words)
        starts = [sum(len(w) + 1 for w in words[:k]) for k in range(len(words))]
        picks = sorted(rnd.sample(range(60), 12))
        truth = [(starts[k], starts[k] + len(words[k]), rnd.choice(SPAN_LABELS)) for k in picks]
        annotations = []
        for who in range(3):
            result = []
            for start, end, label in truth:
                if rnd.random() < 0.1:
                    continue
                if rnd.random() < 0.1:
                    label = rnd.choice(SPAN_LABELS)
                if rnd.random() < 0.05:
                    end = min(len(text), end + 2)
                result.append({"from_name": "ner", "to_name": "text", "type": "labels",
                               "value": {"start": start, "end": end, "text": text[start:end], "labels": [label]}})
            annotations.append({"id": task * 3 + who, "completed_by": who + 1, "result": result,
                                "was_cancelled": False, "ground_truth": False,
                                "created_at": "2026-01-05T09:00:00Z", "updated_at": "2026-01-05T09:00:00Z"})
        tasks.append({"id": task, "data": {"text": text}, "meta": {}, "annotations": annotations})
    return tasks


def demo_page(first: int, n: int, seed: int) -> list[dict[str, Any]]:
    """``n`` tasks of the demo's shape from id ``first`` (ids of tasks and annotations made unique)."""
    from plugin.demo import simulated_export

    tasks = simulated_export(n, seed=seed)
    for task in tasks:
        task["id"] += first - 1
        for annotation in task["annotations"]:
            annotation["id"] += 10 * (first - 1)
    return tasks


def page(shape: str, size: int, number: int) -> list[dict[str, Any]]:
    """Page ``number`` (from 0) of the project's tasks (the same tasks for the same shape and size)."""
    first = 1 + number * PAGE
    n = min(PAGE, size + 1 - first)
    return demo_page(first, n, number) if shape == "demo" else span_page(first, n, random.Random(number))


def pages(shape: str, size: int) -> Iterator[list[dict[str, Any]]]:
    """The project's tasks, a page at a time."""
    for number in range((size + PAGE - 1) // PAGE):
        yield page(shape, size, number)


def config(shape: str) -> str:
    from plugin.demo import CONFIG

    return CONFIG if shape == "demo" else SPAN_CONFIG


def measure_ours(shape: str, size: int) -> dict[str, float]:
    """Build, score and tabulate one project in this process (run in a child of its own)."""
    from plugin.keeper.memory import deep_size, freeze_startup_objects
    from plugin.mapping.labelconfig import parse_label_config
    from plugin.report import build_report
    from plugin.settings import MappingOptions, ScoringOptions
    from plugin.state.project import ProjectState

    state = ProjectState(1, parse_label_config(config(shape)), mapping=MappingOptions(), scoring=ScoringOptions())
    freeze_startup_objects()  # as ls-agreement does once its modules are imported
    before = rss_bytes()
    generating = parsing = 0.0
    source = pages(shape, size)
    started = time.perf_counter()
    while True:
        made = time.perf_counter()
        read = next(source, None)
        text = json.dumps(read) if read is not None else ""
        generating += time.perf_counter() - made  # making the synthetic page and its JSON is not the build
        if read is None:
            break
        made = time.perf_counter()
        read = json.loads(text)  # the page as a read receives it: JSON text, parsed before anything is mapped
        parsing += time.perf_counter() - made
        del text
        state.load(read)
    built = time.perf_counter() - started - generating - parsing
    gc.collect()
    steady = rss_bytes() - before
    build_peak = peak_rss_bytes() - before
    reset_peak()  # each phase's peak apart: the build's, the scoring's, the report's (with the scores) and the passes'
    started = time.perf_counter()
    snapshot = state.snapshot()
    scores = snapshot.scores()
    scored = time.perf_counter() - started
    score_peak = peak_rss_bytes() - before
    reset_peak()
    started = time.perf_counter()
    build_report(snapshot, source="bench", generated_at="now", task_url="http://ls/projects/1/data?task={task}",
                 scores=scores)  # the scores just measured: a report computes them once
    tabled = time.perf_counter() - started
    tables_peak = peak_rss_bytes() - before
    n_scored = len(scores.tasks)
    del snapshot, scores  # a service's pass holds no report: its peak is the pass's own
    gc.collect()
    reset_peak()
    started = time.perf_counter()
    stale = state.stale_tasks()  # what each reconcile pass computes: every task's block, diffed with its meta
    passed = time.perf_counter() - started
    started = time.perf_counter()
    again = state.stale_tasks()  # the service's next pass on a project nobody touched meanwhile
    passed_again = time.perf_counter() - started
    changed = page(shape, size, (size - 1) // PAGE)[-1]  # the project's last task
    changed["annotations"] = changed["annotations"][:-1]  # one annotation deleted
    state.set_task(changed)
    started = time.perf_counter()
    state.stale_tasks()  # the next pass of a project being labeled: one task changed since the last
    passed_changed = time.perf_counter() - started
    pass_peak = peak_rss_bytes() - before
    assert n_scored == size == len(stale) == len(again)
    gc.collect()
    measured = {"build_s": built, "parse_s": parsing, "score_s": scored, "tables_s": tabled, "pass_s": passed,
                "pass_again_s": passed_again, "pass_changed_s": passed_changed, "steady_bytes": steady,
                "peak_bytes": max(build_peak, score_peak, tables_peak, pass_peak), "score_peak_bytes": score_peak,
                "tables_peak_bytes": tables_peak, "pass_peak_bytes": pass_peak,
                "n_annotations": state.n_annotations(),
                "scored_bytes": deep_size(state)}
    answer = state.stale_tasks()
    with tempfile.TemporaryDirectory() as directory:
        measured.update(measure_save(state, Path(directory)))
        del state  # a restarted service holds only the state it restores
        gc.collect()
        measured.update(measure_restore(Path(directory), answer))
    return measured


def measure_save(state: Any, directory: Path) -> dict[str, float]:
    """What ``serve --state-dir`` pays after a pass that changed the state: pickling it (under the project's lock),
    then writing and syncing the file; and the file's size."""
    from plugin.state.saved import pickled, write_state

    started = time.perf_counter()
    unsaved = pickled(state, watermark=None)
    pickling = time.perf_counter() - started
    size = write_state(unsaved, directory, secret="bench-secret", saved_at="now", source="bench")
    return {"pickle_s": pickling, "save_s": time.perf_counter() - started, "file_bytes": size}


def measure_restore(directory: Path, answer: list[int]) -> dict[str, float]:
    """What a restarted ``serve --state-dir`` pays before its first pass: reading the file, checking its signature,
    unpickling the state; the state restored must give the pass's answer it was saved with."""
    from plugin.state.saved import read_state

    started = time.perf_counter()
    restored = read_state(directory, 1, secret="bench-secret", source="bench")
    restoring = time.perf_counter() - started
    assert restored is not None and restored.state.stale_tasks() == answer
    return {"restore_s": restoring}


def measure_peer(shape: str, size: int) -> dict[str, float]:
    """The same project as one export, read with json and pandas and scored with krippendorff (a child of its own)."""
    import krippendorff
    import numpy as np
    import pandas as pd

    text = json.dumps([task for page in pages(shape, size) for task in page])
    gc.collect()
    before = rss_bytes()
    started = time.perf_counter()
    tasks = json.loads(text)
    del text
    annotations = pd.json_normalize(tasks, record_path="annotations", meta=["id"], meta_prefix="task_")
    results = annotations[["task_id", "completed_by", "result"]].explode("result").dropna(subset=["result"])
    flat = pd.json_normalize(results["result"].tolist())
    flat["task"] = results["task_id"].to_numpy()
    flat["annotator"] = results["completed_by"].to_numpy()
    loaded = time.perf_counter() - started
    started = time.perf_counter()
    alphas = {}
    controls = (("sentiment", "value.choices", "nominal"), ("helpfulness", "value.rating", "ordinal")) \
        if shape == "demo" else (("ner", "value.labels", "nominal"),)
    for name, column, level in controls:
        rows = flat[flat["from_name"] == name]
        if shape == "spans":  # the user's simplest unit: a span by its offsets
            rows = rows.assign(task=rows["task"].astype(str) + ":" + rows["value.start"].astype(str) + "-"
                               + rows["value.end"].astype(str))
        values = rows[column].map(lambda v: v[0] if isinstance(v, list) else v)
        codes, _ = pd.factorize(values)
        table = pd.DataFrame({"task": rows["task"].to_numpy(), "annotator": rows["annotator"].to_numpy(),
                              "code": codes.astype(float)}).pivot_table(index="annotator", columns="task",
                                                                         values="code", aggfunc="first")
        alphas[name] = krippendorff.alpha(reliability_data=table.to_numpy(dtype=float),
                                          level_of_measurement=level, value_domain=np.arange(codes.max() + 1))
    scored = time.perf_counter() - started
    gc.collect()
    return {"build_s": loaded, "score_s": scored, "steady_bytes": rss_bytes() - before,
            "peak_bytes": peak_rss_bytes() - before, "alphas": alphas}


def child(kind: str, shape: str, size: int) -> dict[str, Any]:
    """Run one measurement in a fresh interpreter, so that memory is its own."""
    command = [sys.executable, __file__, "--child", kind, "--shapes", shape, "--sizes", str(size)]
    done = subprocess.run(command, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        return {"error": (done.stderr.strip().splitlines() or [f"exit {done.returncode}"])[-1]}
    return json.loads(done.stdout.strip().splitlines()[-1])


def mib(value: float) -> str:
    return f"{value / 2**20:,.0f} MiB"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[10_000, 100_000])
    parser.add_argument("--shapes", nargs="+", choices=("demo", "spans"), default=["demo", "spans"])
    parser.add_argument("--peer", action="store_true", help="also measure json + pandas + krippendorff")
    parser.add_argument("--child", choices=("ours", "peer"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        measure = measure_ours if args.child == "ours" else measure_peer
        print(json.dumps(measure(args.shapes[0], args.sizes[0])))
        return
    print(f"{platform.processor() or platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}")
    print("| shape | tasks | annotations | JSON parse | build | per task | full scoring | report tables | a pass | "
          "a pass, nothing changed | a pass, one task changed | steady memory | per task | "
          "held after scoring, per task | peak memory | peak: scoring / report / pass | saved state: save (pickle) | "
          "file per task | restore | "
          "peer: json + pandas | peer: krippendorff | peer steady / peak |")
    print("|" + " --- |" * 22)
    for shape in args.shapes:
        for size in args.sizes:
            ours = child("ours", shape, size)
            if "error" in ours:
                print(f"| {shape} | {size:,} | | failed: {ours['error']} |")
                continue
            peer = child("peer", shape, size) if args.peer else {}
            peer_cells = ("failed: " + peer["error"], "", "") if "error" in peer else (
                (f"{peer['build_s']:.1f} s", f"{peer['score_s']:.2f} s",
                 f"{mib(peer['steady_bytes'])} / {mib(peer['peak_bytes'])}") if peer else ("", "", ""))
            print(f"| {shape} | {size:,} | {ours['n_annotations']:,} | {ours['parse_s']:.1f} s | {ours['build_s']:.1f} s | "
                  f"{1e6 * ours['build_s'] / size:.0f} µs | {ours['score_s']:.1f} s | {ours['tables_s']:.1f} s | "
                  f"{ours['pass_s']:.1f} s | {ours['pass_again_s']:.3f} s | {ours['pass_changed_s']:.1f} s | "
                  f"{mib(ours['steady_bytes'])} | {ours['steady_bytes'] / size / 1024:.1f} KiB | "
                  f"{ours['scored_bytes'] / size / 1024:.1f} KiB | "
                  f"{mib(ours['peak_bytes'])} | {mib(ours['score_peak_bytes'])} / {mib(ours['tables_peak_bytes'])} / "
                  f"{mib(ours['pass_peak_bytes'])} | "
                  f"{ours['save_s']:.2f} s ({ours['pickle_s']:.2f} s) | "
                  f"{ours['file_bytes'] / size:,.0f} B | {ours['restore_s']:.2f} s | " + " | ".join(peer_cells) + " |",
                  flush=True)
    print("Goals: steady memory at most 2 KiB a task; 1,000,000 tasks loaded in under 60 s and scored in under 30 s, "
          "with a peak while scoring under 4 GiB. Each peak is net of the process before the build; 'peak memory' is "
          "the highest of the build, the scoring, the report's tables (the scores held) and the passes (alone). "
          "JSON parse is json.loads of the same pages, which every read pays before the build. A restarted "
          "`serve --state-dir` restores the state in place of the parse and the build (and of reading every task).")


if __name__ == "__main__":
    main()
