"""The report's "Against references" tables.

They show annotators against the ground truth, and model versions against them.

From each control's ``references`` block (:func:`plugin.state.references.reference_block`), flattened into tables the
page draws and the CSV and JSON formats write.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

import pandas as pd

from plugin.state.scoring import ControlScore, name_of

__all__ = ["MODEL_COLUMNS", "MODEL_CONFUSION_COLUMNS", "REFERENCE_TABLE_COLUMNS", "reference_tables"]

REFERENCE_TABLE_COLUMNS = ("control", "reference", "annotator", "name", "n_items", "accuracy", "accuracy_low",
                           "accuracy_high", "agreement", "kappa", "kappa_low", "kappa_high", "with_others",
                           "below_min")
MODEL_COLUMNS = ("control", "model", "n_tasks", "kappa_mean", "human_kappa_mean", "ratio", "majority_items",
                 "majority_accuracy", "majority_kappa")
MODEL_CONFUSION_COLUMNS = ("control", "model", "model_label", "majority_label", "n_items")


def _nan(value: Any) -> float:
    return math.nan if value is None else float(value)


def reference_tables(controls: Mapping[str, ControlScore], people: Mapping[str, str]) -> dict[str, pd.DataFrame]:
    """The tables ``references``, ``models`` and ``model_confusion``.

    - ``references``: per control, reference and annotator.
    - ``models``: per control and model version, its mean kappa against the annotators beside theirs among
      themselves, and agreement with their majority.
    - ``model_confusion``: each model version's labels against the annotators' majority.
    """
    rows, models, confusion = [], [], []
    for control, score in controls.items():
        block = score.references or {}
        truth = block.get("ground_truth")
        blocks = ([("ground truth", truth)] if truth else []) + [
            (f"model {version}", model) for version, model in sorted((block.get("models") or {}).items())]
        for reference, part in blocks:
            below = set(part.get("below", ()))
            for row in part["annotators"]:
                rows.append({"control": control, "reference": reference, "annotator": row["annotator"],
                             "name": name_of(row["annotator"], people), "n_items": row["n_items"],
                             **{key: _nan(row.get(key)) for key in REFERENCE_TABLE_COLUMNS[5:13]},
                             "below_min": row["annotator"] in below})
        for version, model in sorted((block.get("models") or {}).items()):
            majority = model.get("majority") or {}
            models.append({"control": control, "model": version, "n_tasks": model["n_tasks"],
                           "kappa_mean": _nan(model["kappa_mean"]), "human_kappa_mean": _nan(model["human_kappa_mean"]),
                           "ratio": _nan(model["ratio"]), "majority_items": int(majority.get("n_items", 0)),
                           "majority_accuracy": _nan(majority.get("accuracy")),
                           "majority_kappa": _nan(majority.get("kappa"))})
            confusion.extend({"control": control, "model": version, "model_label": cell["model"],
                              "majority_label": cell["majority"], "n_items": cell["n_items"]}
                             for cell in model["confusion"])
    return {"references": pd.DataFrame(rows, columns=list(REFERENCE_TABLE_COLUMNS)),
            "models": pd.DataFrame(models, columns=list(MODEL_COLUMNS)),
            "model_confusion": pd.DataFrame(confusion, columns=list(MODEL_CONFUSION_COLUMNS))}
