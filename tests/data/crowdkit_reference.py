"""Record tests/data/crowdkit_reference.json: Dawid-Skene and majority vote as crowd-kit 1.4.2 computes them.

crowd-kit installs transformers and nltk, so it has an environment of its own and its values are recorded here,
with the command that made them:

    python3 -m venv .venv-peers/crowdkit && .venv-peers/crowdkit/bin/pip install crowd-kit==1.4.2
    .venv-peers/crowdkit/bin/python tests/data/crowdkit_reference.py > tests/data/crowdkit_reference.json

Each project is simulated with known confusion: every annotator says the true label with their accuracy, and
otherwise a label drawn from their own error distribution (so a confusion is not uniform); tasks get 3 or 4
annotations from annotators drawn at random.
"""

import json

import numpy as np
import pandas as pd
from crowdkit.aggregation import DawidSkene, MajorityVote


def simulate(seed, *, n_tasks, priors, accuracies, per_task=(3, 4), known_share=0.0):
    rng = np.random.default_rng(seed)
    n_labels, n_workers = len(priors), len(accuracies)
    truth = rng.choice(n_labels, size=n_tasks, p=priors)
    errors = rng.dirichlet(np.ones(n_labels), size=(n_workers, n_labels))  # [w, true k] -> label when wrong
    rows = []
    for task in range(n_tasks):
        for worker in rng.choice(n_workers, size=rng.choice(per_task), replace=False):
            k = truth[task]
            if rng.random() < accuracies[worker]:
                label = k
            else:
                wrong = errors[worker, k].copy()
                wrong[k] = 0
                label = rng.choice(n_labels, p=wrong / wrong.sum())
            rows.append((task, int(worker), int(label)))
    known = {int(t): int(truth[t]) for t in range(n_tasks) if rng.random() < known_share}
    return rows, truth, known, n_labels, n_workers


def record(name, seed, **options):
    rows, truth, known, n_labels, n_workers = simulate(seed, **options)
    data = pd.DataFrame(rows, columns=["task", "worker", "label"])
    true_labels = pd.Series(known, dtype="int64") if known else None
    ds = DawidSkene(n_iter=100, tol=1e-5).fit(data, true_labels=true_labels)
    mv = MajorityVote().fit(data)
    tasks = sorted(data["task"].unique())
    labels = sorted(data["label"].unique())
    probas = ds.probas_.reindex(index=tasks, columns=labels, fill_value=0.0)
    errors = np.zeros((n_workers, n_labels, n_labels))  # ours: [worker, true, said]
    for (worker, said), row in ds.errors_.iterrows():
        for true, value in row.items():
            errors[worker, true, said] = value
    return {
        "name": name, "rows": rows, "truth": truth.tolist(), "known": known, "n_labels": n_labels,
        "n_workers": n_workers, "tasks": [int(t) for t in tasks], "labels": [int(x) for x in labels],
        "ds_labels": [int(ds.labels_[t]) for t in tasks], "ds_probas": probas.to_numpy().tolist(),
        "ds_priors": [float(ds.priors_.get(x, 0.0)) for x in range(n_labels)], "ds_errors": errors.tolist(),
        "ds_iterations": len(ds.loss_history_),
        "mv_labels": [int(mv.labels_[t]) for t in tasks],
        "mv_probas": mv.probas_.reindex(index=tasks, columns=labels, fill_value=0.0).to_numpy().tolist(),
    }


PROJECTS = [
    ("annotator qualities", 1,
     {"n_tasks": 300, "priors": [0.5, 0.3, 0.2], "accuracies": [0.95, 0.9, 0.8, 0.6, 0.45, 0.35]}),
    ("a rare label", 2, {"n_tasks": 400, "priors": [0.9, 0.08, 0.02], "accuracies": [0.9, 0.85, 0.8, 0.7, 0.6]}),
    ("many labels", 3,
     {"n_tasks": 250, "priors": list(np.full(12, 1 / 12)), "accuracies": [0.9, 0.85, 0.8, 0.75, 0.7, 0.6, 0.5, 0.4]}),
    ("two annotations a task", 4,
     {"n_tasks": 200, "priors": [0.6, 0.4], "accuracies": [0.9, 0.7, 0.55], "per_task": (2,)}),
    ("ground truth on a tenth", 5,
     {"n_tasks": 300, "priors": [0.4, 0.35, 0.25], "accuracies": [0.9, 0.8, 0.65, 0.5, 0.4], "known_share": 0.1}),
]

if __name__ == "__main__":
    print(json.dumps({"crowd-kit": "1.4.2", "projects": [record(name, seed, **options)
                                                        for name, seed, options in PROJECTS]}, indent=None))
