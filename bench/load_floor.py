"""The floor of a full load in a Python process: parsing the tasks' JSON and reading every result once.

Issue "A million tasks on one machine" asks for a full load of 1,000,000 tasks in under 60 s: 60 µs a task for
everything a read does in this process once Label Studio has served the page. This script measures, on the pages
``bench/scale.py`` feeds its build (the demo's shape and the span shape, 1,000 tasks a page, the process's startup
objects frozen out of the garbage collector's passes as ``ls-agreement`` does), three costs per task:

* **parse**: the page's JSON text made into Python objects, by ``json.loads`` (what a read uses) and by ``ujson``
  and ``orjson`` where they are installed; best of ``--repeat``, each page dropped once parsed, as a read drops it.
  With msgspec installed, also a decode into typed structs that declare only the fields these two shapes' mapping
  reads (a task's id, annotations and meta; an annotation's id, author and flags; a result's name, type, id and the
  value's offsets, labels, choices and rating) and skip every other field unread, the task's data and each span's
  text among them: a lower bound of any parse, since a real read needs more (the data's text for a continuum's
  length, every family's geometry);
* **touch**: one pass that reads every task's id, every annotation's id and author, and every result's
  ``from_name``, ``type``, ``id`` and value, and does nothing else: the least a mapper written in Python does;
* **build**: :meth:`plugin.state.project.ProjectState.load` of the same pages, once, each page parsed (untimed) and held
  alone, the state made before the freeze: what ``bench/scale.py`` times as "build".

The fastest full parse (not the lower bound) plus touch is what any Python build pays before it checks a single
value; the script prints it against the goal's 60 µs. It never asserts a time.

Usage: ``python bench/load_floor.py [--tasks 10000] [--repeat 3] [--shapes demo spans]``.
"""

from __future__ import annotations

import argparse
import importlib
import json
import os
import platform
import time
from collections.abc import Callable
from typing import Any

from scale import PAGE, config, pages

from plugin.keeper.memory import freeze_startup_objects
from plugin.mapping.labelconfig import parse_label_config
from plugin.settings import MappingOptions, ScoringOptions
from plugin.state.project import ProjectState

GOAL_US = 60.0
"""The issue's goal per task: a million tasks loaded in 60 s."""


def parsers() -> dict[str, Callable[[str], Any]]:
    """``json.loads`` and the faster parsers that are installed, by the name and version printed."""
    found: dict[str, Callable[[str], Any]] = {"json (standard library)": json.loads}
    for name in ("ujson", "orjson"):
        try:
            module = importlib.import_module(name)
        except ImportError:
            continue
        found[f"{name} {getattr(module, '__version__', '')}".strip()] = module.loads
    try:
        import msgspec
    except ImportError:
        return found
    found[f"msgspec {msgspec.__version__}, typed, unread fields skipped (a lower bound)"] = _typed_decoder(msgspec)
    return found


def _typed_decoder(msgspec: Any) -> Callable[[str], Any]:
    """A msgspec decoder of a page into structs of only the fields mapping these shapes reads (module notes)."""
    number = int | float | str | None
    empty = msgspec.field(default_factory=list)
    value = msgspec.defstruct("Value", [("start", number, None), ("end", number, None),
                                        ("labels", list[str] | None, None), ("choices", list[str] | None, None),
                                        ("rating", int | float | None, None)])
    result = msgspec.defstruct("Result", [("from_name", str | None, None), ("to_name", str | None, None),
                                          ("type", str | None, None), ("id", str | None, None),
                                          ("value", value | None, None)])
    annotation = msgspec.defstruct("Annotation", [("id", int), ("completed_by", Any, None),
                                                  ("result", list[result], empty), ("was_cancelled", bool, False),
                                                  ("ground_truth", bool, False), ("updated_at", str | None, None)])
    task = msgspec.defstruct("Task", [("id", int), ("annotations", list[annotation], empty),
                                      ("meta", dict[str, Any], msgspec.field(default_factory=dict))])
    return msgspec.json.Decoder(list[task]).decode


def touch(page: list[dict[str, Any]]) -> int:
    """Read every task's id, annotation's id and author and result's fields once; return the results read."""
    read = 0
    for task in page:
        task.get("id")
        for annotation in task.get("annotations") or ():
            annotation.get("id")
            annotation.get("completed_by")
            for result in annotation.get("result") or ():
                result.get("from_name")
                result.get("type")
                result.get("id")
                value = result.get("value")
                if isinstance(value, dict):
                    read += len(value) > 0
    return read


def parse_each(texts: list[str], loads: Callable[[str], Any]) -> None:
    """Parse every page, dropping each once parsed (a read holds one page at a time)."""
    for text in texts:
        loads(text)


def best_of(repeat: int, run: Callable[[], Any]) -> float:
    """The least wall time of ``repeat`` runs of ``run``."""
    times = []
    for _ in range(repeat):
        started = time.perf_counter()
        run()
        times.append(time.perf_counter() - started)
    return min(times)


def measure(shape: str, tasks: int, repeat: int) -> list[tuple[str, float]]:
    """Microseconds a task of each cost, for ``tasks`` tasks of ``shape``."""
    texts = [json.dumps(read) for read in pages(shape, tasks)]
    state = ProjectState(1, parse_label_config(config(shape)), mapping=MappingOptions(), scoring=ScoringOptions())
    freeze_startup_objects()  # after the state is made, as bench/scale.py does
    rows = []
    for name, loads in parsers().items():
        rows.append((f"parse: {name}", best_of(repeat, lambda loads=loads: parse_each(texts, loads)) / tasks))
    built = 0.0
    for text in texts:  # one page held at a time, as a read holds it
        read = json.loads(text)
        started = time.perf_counter()
        state.load(read)
        built += time.perf_counter() - started
    parsed = [json.loads(text) for text in texts]
    rows.append(("touch: every result's fields read once", best_of(repeat, lambda: sum(map(touch, parsed))) / tasks))
    rows.append(("build: ProjectState.load", built / tasks))
    return [(name, seconds * 1e6) for name, seconds in rows]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tasks", type=int, default=10_000, help=f"tasks per shape, in pages of {PAGE}")
    parser.add_argument("--repeat", type=int, default=3, help="parses and touches per parser (best kept)")
    parser.add_argument("--shapes", nargs="+", default=["demo", "spans"], choices=["demo", "spans"])
    args = parser.parse_args()
    print(f"{platform.processor() or platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}; "
          f"{args.tasks:,} tasks a shape, best of {args.repeat}; the goal: {GOAL_US:.0f} µs a task")
    for shape in args.shapes:
        rows = measure(shape, args.tasks, args.repeat)
        print(f"\n{shape}\n| cost | µs a task | share of the goal |\n| --- | --- | --- |")
        for name, micros in rows:
            print(f"| {name} | {micros:.1f} | {micros / GOAL_US:.0%} |")
        full = [m for n, m in rows if n.startswith("parse") and "lower bound" not in n]
        floor = min(full) + next(m for n, m in rows if n.startswith("touch"))
        print(f"| floor: the fastest full parse and the touch | {floor:.1f} | {floor / GOAL_US:.0%} |")


if __name__ == "__main__":
    main()
