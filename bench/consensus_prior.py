"""Benchmark: Dawid-Skene by maximum likelihood and under confusion priors, on simulated projects with known truth.

Each project is simulated as labeling goes: 30 to 400 items of known true label among 2 to 20 labels (priors drawn
from a Dirichlet), 4 to 10 annotators of accuracies between 0.45 and 0.95 whose wrong answers follow an error
distribution of their own, one to three annotations an item. For each prior (pseudo-counts on each annotator's
confusion diagonal and shared off it, :func:`agreement.consensus.dawid_skene`) it prints:

- the consensus labels' accuracy against the truth, its mean over the projects, and on how many projects it beats
  or loses to maximum likelihood;
- how many consensus labels of items nobody touched move when the project is refitted after 5% more annotations (on
  other items), per 1,000 such items: what a pass after a refit rewrites in Label Studio.

    python bench/consensus_prior.py [--projects 60] [--seed 0] [--labels L] [--items N]

``--labels`` and ``--items`` fix the number of labels and of items of every project (a control with many labels on
a young project is where a prior weighs most).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from agreement.consensus import dawid_skene  # noqa: E402 (after the path: runnable from a checkout)

PRIORS = ((0.0, 0.0), (1.0, 1.0), (2.0, 1.0), (4.0, 1.0))


def simulate(rng: np.random.Generator, *, n_labels: int | None = None,
             n_items: int | None = None) -> tuple[np.ndarray, np.ndarray, int, int]:
    """One project: its annotations as rows (item, annotator, label), in the order they were made, and its truth."""
    n_items = n_items or int(rng.choice([30, 60, 150, 400]))
    n_labels = n_labels or int(rng.choice([2, 3, 5, 10, 20]))
    n_annotators = int(rng.choice([4, 6, 10]))
    truth = rng.choice(n_labels, size=n_items, p=rng.dirichlet(np.full(n_labels, 2.0)))
    accuracy = rng.uniform(0.45, 0.95, size=n_annotators)
    errors = rng.dirichlet(np.ones(n_labels), size=(n_annotators, n_labels))
    rows = []
    for item in range(n_items):
        for who in rng.choice(n_annotators, size=int(rng.integers(1, 4)), replace=False):
            wrong = errors[who, truth[item]].copy()
            wrong[truth[item]] = 0
            said = truth[item] if rng.random() < accuracy[who] else rng.choice(n_labels, p=wrong / wrong.sum())
            rows.append((item, int(who), int(said)))
    order = rng.permutation(len(rows))
    return np.array(rows)[order], truth, n_labels, n_annotators


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--projects", type=int, default=60, help="simulated projects (60)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--labels", type=int, default=None, help="every project's number of labels (2 to 20)")
    parser.add_argument("--items", type=int, default=None, help="every project's number of items (30 to 400)")
    args = parser.parse_args()
    rng = np.random.default_rng(args.seed)
    accuracy = {prior: [] for prior in PRIORS}
    moved = {prior: [0, 0] for prior in PRIORS}  # labels moved, untouched items
    for _ in range(args.projects):
        rows, truth, n_labels, n_annotators = simulate(rng, n_labels=args.labels, n_items=args.items)
        before = rows[: int(len(rows) * 0.95)]
        untouched = np.setdiff1d(np.unique(before[:, 0]), rows[len(before):, 0])
        sizes = {"n_items": len(truth), "n_annotators": n_annotators, "n_labels": n_labels}
        for prior in PRIORS:
            fit = dawid_skene(rows[:, 0], rows[:, 1], rows[:, 2], prior=prior, **sizes)
            earlier = dawid_skene(before[:, 0], before[:, 1], before[:, 2], prior=prior, **sizes)
            annotated = np.bincount(rows[:, 0], minlength=len(truth)) > 0
            accuracy[prior].append(float((fit.labels == truth)[annotated].mean()))
            moved[prior][0] += int((fit.labels[untouched] != earlier.labels[untouched]).sum())
            moved[prior][1] += len(untouched)
    plain = np.array(accuracy[PRIORS[0]])
    print(f"{args.projects} simulated projects (seed {args.seed}, {args.labels or '2 to 20'} labels, "
          f"{args.items or '30 to 400'} items)")
    print("prior (diagonal, off)  accuracy  better / worse than maximum likelihood  moved per 1,000 untouched")
    for prior in PRIORS:
        values = np.array(accuracy[prior])
        better, worse = int((values > plain + 1e-12).sum()), int((values < plain - 1e-12).sum())
        print(f"{str(prior):>21}  {values.mean():8.4f}  {better:>5} / {worse:<5}{'':29}"
              f"{1000 * moved[prior][0] / max(moved[prior][1], 1):8.1f}")


if __name__ == "__main__":
    main()
