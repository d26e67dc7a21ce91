"""The report's consensus tables: whom to trust per control, and each task's consensus label.

Per categorical control, each annotator's accuracy as Dawid-Skene estimates it without ground truth, beside their
accuracy on the items ground truth covers; the confusion matrices of the annotators it trusts least; and each
task's consensus label and its posterior (:mod:`plugin.state.consensus`).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np
import pandas as pd

from plugin.state.scoring import ControlScore
from plugin.state.task_scores import TaskScores

__all__ = ["CONSENSUS_COLUMNS", "CONSENSUS_CONFUSION_COLUMNS", "WORST_SHOWN", "consensus_tables",
           "task_consensus_columns"]

CONSENSUS_COLUMNS = ("control", "annotator", "name", "method", "n_answers", "accuracy", "ground_truth_accuracy",
                     "n_ground_truth")
CONSENSUS_CONFUSION_COLUMNS = ("control", "name", "true_label", "said_label", "probability")
WORST_SHOWN = 3
"""Annotators whose confusion matrix the report draws, per control: those with the least estimated accuracy."""


def consensus_tables(controls: Mapping[str, ControlScore], people: Mapping[str, str]) -> dict[str, pd.DataFrame]:
    """``consensus`` (per control and annotator) and ``consensus_confusion`` (the least trusted's matrices)."""
    rows: list[dict[str, Any]] = []
    cells: list[dict[str, Any]] = []
    for control, score in controls.items():
        if score.consensus is None:
            continue
        summary = score.consensus.summary(people, ground_truth=(score.references or {}).get("ground_truth"))
        labels = summary["labels"]
        mine = [{"control": control, "annotator": key, "name": row["name"], "method": summary["method"],
                 "n_answers": row.get("n_answers", 0), "accuracy": row.get("accuracy", np.nan),
                 "ground_truth_accuracy": row.get("ground_truth_accuracy", np.nan),
                 "n_ground_truth": row.get("n_ground_truth", 0)} for key, row in summary["annotators"].items()]
        mine.sort(key=lambda r: (np.nan_to_num(r["accuracy"], nan=2.0), r["name"]))
        rows += mine
        for row in mine[:WORST_SHOWN]:
            confusion = summary["annotators"][row["annotator"]].get("confusion")
            if confusion is None:
                continue
            cells += [{"control": control, "name": row["name"], "true_label": labels[k], "said_label": labels[j],
                       "probability": value}
                      for k, line in enumerate(confusion) for j, value in enumerate(line)]
    return {"consensus": pd.DataFrame(rows, columns=list(CONSENSUS_COLUMNS)),
            "consensus_confusion": pd.DataFrame(cells, columns=list(CONSENSUS_CONFUSION_COLUMNS))}


def task_consensus_columns(tasks: TaskScores) -> dict[str, np.ndarray]:
    """Each task's ``consensus`` and ``posterior`` (``consensus:<control>`` with several controls).

    The consensus in words (:meth:`plugin.state.consensus.TaskConsensus.texts`): a label set's labels each with its
    probability, or why none applies; a span control's labels each with its span's position.
    """
    having = {name: columns for name, columns in tasks.controls.items() if columns.consensus is not None}
    out: dict[str, np.ndarray] = {}
    for name, columns in having.items():
        suffix = "" if len(having) == 1 else f":{name}"
        assert columns.consensus is not None
        texts = columns.consensus.texts(positions=columns.spans is not None)
        out[f"consensus{suffix}"] = np.where(columns.has_items, texts, "")
        out[f"posterior{suffix}"] = columns.posterior()
    return out
