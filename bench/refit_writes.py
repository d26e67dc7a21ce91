"""Benchmark: meta writes an annotation on the demo's annotations, replayed in process, and what each pass rewrites.

The demo's project (:func:`plugin.demo.simulated_export`: 300 tasks, five simulated annotators, the model versions'
predictions and the ground truth on the first tasks) is replayed as ``ls-agreement serve`` sees it with the demo's
options (``--mirror-to-data``, ``--min-gt-accuracy 0.7 --min-gt-items 3``), with Label Studio replaced by a dict
of tasks: each annotation, in the order it was made, is an event (the task as read applied to the state, its block
computed with the consensus fit held since the last pass, and written when :func:`plugin.state.blocks.needed_write`
says so); every ``--per-pass`` annotations a pass fits the project again and writes every task it finds stale, and
one more pass follows the last annotation. Printed: the event writes, the passes' writes (per pass), meta writes an
annotation, how many of the passes' writes changed a consensus label (and of those, on a task with one annotation),
and what the passes' writes changed, by key of the agreement block (a write counts once per key it changes). The
demo itself, against Label Studio, gives the same count within a few writes (BENCHMARKS.md).

    python bench/refit_writes.py [--per-pass 44] [--consensus-prior 2,1]

44 annotations a pass: the demo's pace (2.2 annotations a second) over its pass interval (20 s). The consensus prior
is the service's default (``--consensus-prior``); ``0,0`` replays Dawid-Skene by maximum likelihood.
"""

from __future__ import annotations

import argparse
import copy
import sys
from collections import Counter
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from plugin.clock import now_iso  # noqa: E402 (after the path: runnable from a checkout)
from plugin.demo import CONFIG, simulated_export  # noqa: E402
from plugin.mapping.labelconfig import parse_label_config  # noqa: E402
from plugin.settings import MappingOptions, ReviewOptions, ScoringOptions  # noqa: E402
from plugin.state.blocks import TaskAsRead, needed_write  # noqa: E402
from plugin.state.project import ProjectState  # noqa: E402

REVIEW = ReviewOptions(mirror_to_data=True)


DRIFTING = ("alpha", "gamma", "posterior")
"""Values the diff compares only for being defined (:mod:`plugin.state.blocks`)."""


def changed_keys(old: Any, new: Any, prefix: str = "") -> set[str]:
    """The keys of a block whose values differ as the diff sees them, nested keys joined by dots."""
    if not (isinstance(old, dict) and isinstance(new, dict)):
        drifting = prefix.rstrip(".").rsplit(".", 1)[-1] in DRIFTING and None not in (old, new)
        return {prefix.rstrip(".")} if old != new and not drifting else set()
    out: set[str] = set()
    for key in (set(old) | set(new)) - {"updated_at"}:
        if key not in old or key not in new:
            out.add(prefix + key)
        else:
            out |= changed_keys(old[key], new[key], prefix + key + ".")
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--per-pass", type=int, default=44, help="annotations between two passes (44)")
    parser.add_argument("--consensus-prior", default=None, metavar="A,B",
                        help="Dawid-Skene's pseudo-counts on the confusion diagonal and shared off it (the "
                             "service's default)")
    args = parser.parse_args()
    prior = ScoringOptions().consensus_prior if args.consensus_prior is None else tuple(
        float(value) for value in args.consensus_prior.split(","))

    controls = parse_label_config(CONFIG)
    export = simulated_export(300, references=True)
    annotators = 5
    events = sorted(((a["id"], t["id"], a) for t in export for a in t["annotations"]
                     if a["completed_by"] <= annotators), key=lambda event: event[0])
    held = {t["id"]: {**copy.deepcopy(t), "annotations": [a for a in t["annotations"]
                                                          if a["completed_by"] > annotators]} for t in export}
    state = ProjectState.from_tasks([copy.deepcopy(t) for t in held.values()], controls, mapping=MappingOptions(),
                                    scoring=ScoringOptions(min_gt_accuracy=0.7, min_gt_items=3,
                                                           consensus_prior=prior))
    why: Counter[str] = Counter()
    labels: Counter[str] = Counter()  # the passes' writes that changed a consensus label

    def write(task_id: int, *, count: bool) -> bool:
        block = state.blocks([task_id], updated_at=now_iso())[task_id]
        task = held[task_id]
        wanted = needed_write(TaskAsRead.of(task), block, review=REVIEW, controls=controls)
        if wanted is None:
            return False
        if count:
            old = (task.get("meta") or {}).get("agreement") or {}
            keys = changed_keys(old, block) if wanted.meta is not None else set()
            why.update(keys or {"data.agreement_score (the mirrored score alone)"})
            if any(key.endswith("consensus.label") for key in keys):
                labels["a consensus label"] += 1
                labels["a consensus label, on a task with one annotation"] += block.get("n_annotations") == 1
        if wanted.meta is not None:
            task["meta"] = wanted.meta
        if wanted.mirror:
            task["data"] = wanted.data(task.get("data"))
        state.set_task(copy.deepcopy(task))  # Label Studio's answer to the write, taken as a read
        return True

    state.stale_tasks(review=REVIEW)  # the first pass: the fit events use until the next
    event_writes, per_pass = 0, []
    for done, (_, task_id, annotation) in enumerate(events, 1):
        held[task_id]["annotations"].append(annotation)
        state.set_task(copy.deepcopy(held[task_id]))
        event_writes += write(task_id, count=False)
        if done % args.per_pass == 0:
            per_pass.append(sum(write(task, count=True) for task in state.stale_tasks(review=REVIEW)))
    per_pass.append(sum(write(task, count=True) for task in state.stale_tasks(review=REVIEW)))
    print(f"consensus prior {prior}; {len(events)} annotations, a pass every {args.per_pass}: "
          f"{event_writes} event writes, "
          f"{sum(per_pass)} pass writes ({', '.join(map(str, per_pass))}); "
          f"{(event_writes + sum(per_pass)) / len(events):.3f} meta writes an annotation")
    print("passes' writes that changed " + "; ".join(f"{what}: {n}" for what, n in labels.items()))
    print("what the passes' writes changed (a write counts once per key):")
    for key, n in why.most_common():
        print(f"  {n:4d}  {key}")


if __name__ == "__main__":
    main()
