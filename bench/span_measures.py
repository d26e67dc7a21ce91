"""Benchmark: pairwise span F1 and Krippendorff's unitizing alphas on a synthetic project of spans.

N tasks (10,000 by default) of a text of 400 characters; three annotators who each mark about ten spans of one of
four labels near a shared truth (boundaries jittered by up to 2 characters, one span in ten dropped, one in twenty
relabelled). Prints the best seconds (of ``--repeat``) of

- ``span_f1`` with ``match="exact"`` and ``match="overlap"`` (Jaccard 0.5), and the per-label, per-task and total
  tables from its counts;
- ``unitizing_alpha`` (Krippendorff 1995/2004) and ``u_alpha`` (2016: uα, |uα, cuα);
- ``task_f1`` of one task: from that task's units alone (what a live event costs) and from the whole project's.

With ``--serve``, the same measures on bench/mapping_throughput.py's span project (N tasks of Labels on text, three
annotators with five jittered spans each), mapped by the plugin into units, beside the time a throwaway Label Studio
takes to serve that project through the client this project uses: the goal is under a fifth of it.

    python bench/span_measures.py [--tasks 10000] [--repeat 3] [--serve]
"""

from __future__ import annotations

import argparse
import time
import warnings
from collections.abc import Callable

import numpy as np

from agreement.span_f1 import span_f1, task_f1
from agreement.unitizing import u_alpha, unitizing_alpha
from agreement.units import Units

LENGTH, SPANS, ANNOTATORS, LABELS = 400, 10, 3, ("PER", "ORG", "LOC", "MISC")


def make_units(n_tasks: int, seed: int = 0) -> Units:
    """The synthetic project described in the module notes, as a Units table."""
    rng = np.random.default_rng(seed)
    slot = LENGTH // SPANS
    truth_start = (np.arange(SPANS) * slot)[None, :] + rng.integers(2, slot // 2, size=(n_tasks, SPANS))
    truth_end = truth_start + rng.integers(3, slot // 2, size=(n_tasks, SPANS))
    truth_label = rng.integers(0, len(LABELS), size=(n_tasks, SPANS))
    shape = (n_tasks, ANNOTATORS, SPANS)
    start = np.broadcast_to(truth_start[:, None, :], shape) + rng.integers(-2, 3, size=shape)
    end = np.maximum(np.broadcast_to(truth_end[:, None, :], shape) + rng.integers(-2, 3, size=shape), start + 1)
    label = np.where(rng.random(shape) < 0.05, rng.integers(0, len(LABELS), size=shape), truth_label[:, None, :])
    keep = rng.random(shape) >= 0.1
    doc = np.broadcast_to(np.arange(n_tasks)[:, None, None], shape)[keep]
    ann = np.broadcast_to(np.arange(ANNOTATORS)[None, :, None], shape)[keep]
    return Units(doc.astype(np.intp), ann.astype(np.intp), label[keep].astype(np.intp),
                 np.clip(start[keep], 0, LENGTH - 1).astype(float), np.clip(end[keep], 1, LENGTH).astype(float),
                 tuple(range(n_tasks)), tuple(f"annotator{i}" for i in range(ANNOTATORS)), LABELS,
                 np.ones((n_tasks, ANNOTATORS), dtype=bool), np.full(n_tasks, float(LENGTH)))


def project_units(n_tasks: int) -> Units:
    """bench/mapping_throughput.py's span project, mapped through the plugin into units."""
    from mapping_throughput import CONFIGS, make_tasks

    from plugin.mapping import map_project
    from plugin.mapping.annotations import Skips, collect_submissions
    from plugin.mapping.labelconfig import parse_label_config
    from plugin.mapping.span_units import span_units
    from plugin.settings import MappingOptions

    tasks = make_tasks("spans", n_tasks, [1, 2, 3])
    mapped = map_project(parse_label_config(CONFIGS["spans"]), collect_submissions(tasks, Skips()), Skips(),
                         MappingOptions())
    return span_units(mapped["ner"], lengths={(t["id"], ()): float(len(t["data"]["text"])) for t in tasks})


def against_label_studio(n_tasks: int, repeat: int) -> None:
    """F1 (exact and overlap) and unitizing alpha on the span project beside Label Studio serving it."""
    from mapping_throughput import time_serving

    units = project_units(n_tasks)
    ours = best(lambda: (span_f1(units, match="exact").per_label(), span_f1(units, match="overlap").per_label(),
                         unitizing_alpha(units)), repeat)
    served = time_serving(["spans"], n_tasks)["spans"]
    print(f"span project: {n_tasks} tasks, {units.n_units} spans; F1 exact + overlap + unitizing alpha {ours:.2f} s; "
          f"Label Studio serving it {served:.1f} s; ratio {ours / served:.3f} (goal: under 0.2)")


def best(function: Callable[[], object], repeat: int) -> float:
    seconds = float("inf")
    for _ in range(repeat):
        started = time.perf_counter()
        function()
        seconds = min(seconds, time.perf_counter() - started)
    return seconds


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tasks", type=int, default=10_000)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--serve", action="store_true", help="also the plugin's span project against Label Studio")
    args = parser.parse_args()
    warnings.simplefilter("ignore")
    if args.serve:
        against_label_studio(args.tasks, args.repeat)
    units = make_units(args.tasks)
    one_task = units.select(units.doc == 0)
    one_task = Units(one_task.doc, one_task.annotator, one_task.label, one_task.start, one_task.end, (0,),
                     units.annotators, units.labels, units.present[:1], units.lengths[:1])
    print(f"{args.tasks} tasks x {ANNOTATORS} annotators, {units.n_units} spans, {len(LABELS)} labels")

    def all_tables(match: str) -> None:
        result = span_f1(units, match=match)
        result.per_label(), result.per_doc(), result.total(), result.pair_table()

    rows = [
        ("span_f1 exact (counts)", lambda: span_f1(units, match="exact")),
        ("span_f1 exact + per label, per task, total, pairs", lambda: all_tables("exact")),
        ("span_f1 overlap 0.5 (counts)", lambda: span_f1(units, match="overlap", jaccard=0.5)),
        ("span_f1 overlap 0.5 + all tables", lambda: all_tables("overlap")),
        ("unitizing_alpha (1995/2004)", lambda: unitizing_alpha(units)),
        ("u_alpha (2016: u, |u, cu)", lambda: u_alpha(units)),
        ("task_f1, one task's units", lambda: task_f1(one_task, doc=0)),
        ("task_f1, one task from the whole project", lambda: task_f1(units, doc=0)),
    ]
    for name, function in rows:
        seconds = best(function, args.repeat)
        shown = f"{seconds * 1000:9.2f} ms" if seconds < 1 else f"{seconds:9.3f} s "
        print(f"{name:52s} {shown}")
    exact, overlap = span_f1(units).total(), span_f1(units, match="overlap").total()
    alpha, u = unitizing_alpha(units), u_alpha(units)
    print(f"values: F1 exact {exact[0]:.3f} (sd {exact[1]:.3f}), overlap {overlap[0]:.3f} (sd {overlap[1]:.3f}); "
          f"unitizing alpha {alpha.value:.3f}; u-alpha {u.value:.3f}, |u-alpha {u.binary:.3f}, cu-alpha {u.coding:.3f}")


if __name__ == "__main__":
    main()
