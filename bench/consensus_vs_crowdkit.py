"""Dawid-Skene and majority vote here against crowd-kit 1.4.2 on the same simulated projects: time and answers.

    python bench/consensus_vs_crowdkit.py [--crowdkit-python .venv-peers/crowdkit/bin/python] [--tasks 100000]

A project of ``--tasks`` tasks, each labeled by all 5 annotators (accuracies 0.9 down to 0.5, wrong answers drawn
from each one's own error distribution) with 5 labels. crowd-kit runs in its own venv (it installs transformers
and nltk; see tests/data/crowdkit_reference.py) through a subprocess that reads the annotations from a file and
times its fit alone. Printed: each one's seconds (best of ``--repeat``), the ratio, whether the labels are equal and
the largest difference of a posterior; then the cost of a live refit (a few EM steps from the held fit) after one
annotation changes.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import tempfile
import time
from pathlib import Path

import numpy as np

from agreement.consensus import dawid_skene, majority_vote

ROOT = Path(__file__).resolve().parents[1]

# Runs inside crowd-kit's venv: fits DawidSkene(n_iter=100, tol=1e-5) and MajorityVote, best of `repeat`.
CROWDKIT = """
import json, sys, time
import numpy as np, pandas as pd
from crowdkit.aggregation import DawidSkene, MajorityVote
source, target, repeat = sys.argv[1], sys.argv[2], int(sys.argv[3])
arrays = np.load(source)
data = pd.DataFrame({"task": arrays["items"], "worker": arrays["annotators"], "label": arrays["labels"]})
best = {}
for _ in range(repeat):
    started = time.perf_counter(); ds = DawidSkene(n_iter=100, tol=1e-5).fit(data)
    best["ds"] = min(best.get("ds", 1e9), time.perf_counter() - started)
    started = time.perf_counter(); mv = MajorityVote().fit(data)
    best["mv"] = min(best.get("mv", 1e9), time.perf_counter() - started)
tasks = np.arange(int(arrays["n_tasks"]))
probas = ds.probas_.reindex(index=tasks, columns=range(int(arrays["n_labels"])), fill_value=0.0).to_numpy()
np.save(target + ".npy", probas)
json.dump({"seconds": best, "iterations": len(ds.loss_history_)}, open(target, "w"))
"""


def simulate(n_tasks: int, *, n_labels: int = 5, seed: int = 0) -> dict[str, np.ndarray]:
    rng = np.random.default_rng(seed)
    accuracies = np.array([0.9, 0.8, 0.7, 0.6, 0.5])
    truth = rng.integers(n_labels, size=n_tasks)
    items = np.repeat(np.arange(n_tasks), len(accuracies))
    annotators = np.tile(np.arange(len(accuracies)), n_tasks)
    errors = rng.dirichlet(np.ones(n_labels - 1), size=(len(accuracies), n_labels))
    right = rng.random(len(items)) < accuracies[annotators]
    offsets = np.array([rng.choice(n_labels - 1, p=errors[w, k]) for w, k in zip(annotators, truth[items],
                                                                                  strict=True)]) + 1
    labels = np.where(right, truth[items], (truth[items] + offsets) % n_labels)
    return {"items": items, "annotators": annotators, "labels": labels, "n_tasks": np.array(n_tasks),
            "n_labels": np.array(n_labels)}


def best_of(repeat: int, run) -> tuple[float, object]:
    times, out = [], None
    for _ in range(repeat):
        started = time.perf_counter()
        out = run()
        times.append(time.perf_counter() - started)
    return min(times), out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--crowdkit-python", default=str(ROOT / ".venv-peers" / "crowdkit" / "bin" / "python"))
    parser.add_argument("--tasks", type=int, default=100_000)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    data = simulate(args.tasks)
    codes = (data["items"], data["annotators"], data["labels"])
    ours, fit = best_of(args.repeat, lambda: dawid_skene(*codes, n_labels=5))
    vote_time, _ = best_of(args.repeat, lambda: majority_vote(data["items"], data["labels"], n_labels=5))
    with tempfile.TemporaryDirectory() as folder:
        source, target = Path(folder) / "annotations.npz", Path(folder) / "crowdkit.json"
        np.savez(source, **data)
        subprocess.run([args.crowdkit_python, "-c", CROWDKIT, str(source), str(target), str(args.repeat)],
                       check=True, timeout=3600)
        theirs = json.loads(target.read_text())
        probas = np.load(str(target) + ".npy")
    print(f"{args.tasks:,} tasks x 5 annotators x 5 labels ({len(data['items']):,} annotations), best of "
          f"{args.repeat}:")
    print("| | here | crowd-kit 1.4.2 | ratio | same labels | largest posterior difference |")
    print("| --- | --- | --- | --- | --- | --- |")
    same = bool((fit.labels == probas.argmax(axis=1)).all())
    print(f"| Dawid-Skene ({fit.iterations} and {theirs['iterations']} steps) | {ours:.3f} s | "
          f"{theirs['seconds']['ds']:.2f} s | {theirs['seconds']['ds'] / ours:.0f}x | {same} | "
          f"{np.abs(fit.posterior - probas).max():.1e} |")
    print(f"| majority vote | {vote_time:.3f} s | {theirs['seconds']['mv']:.2f} s | "
          f"{theirs['seconds']['mv'] / vote_time:.0f}x | | |")
    changed = data["labels"].copy()
    changed[0] = (changed[0] + 1) % 5
    live, _ = best_of(args.repeat, lambda: dawid_skene(data["items"], data["annotators"], changed, n_labels=5,
                                                       start=fit, n_iter=3))
    print(f"A live refit after one annotation changed (3 EM steps from the held fit): {live * 1000:.0f} ms, against "
          f"{ours * 1000:.0f} ms from scratch.")


if __name__ == "__main__":
    main()
