"""Choices (single and multiple) and Pairwise: the task is the item.

Single choice: the chosen label. Multiple choices: the order of the selected
choices gives the primary and secondary label (the augmented kappa of
Rosenberg & Binkowski), and every label of the config is also a yes/no item
of the task, so per-label agreement exists. An annotator who submitted the
task without selecting anything in a multiple-choice control said "no" to
every label (Label Studio stores no result for an empty selection).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from plugin.annotations import Skips, Submission
from plugin.labelconfig import Control
from plugin.mapping.base import MappedControl, SkipResult, control_results, task_labels

__all__ = ["map_choices", "map_pairwise"]

YES, NO = "yes", "no"


def _choices(value: Mapping[str, Any]) -> list[str] | None:
    choices = value.get("choices")
    if not isinstance(choices, list) or not all(isinstance(c, str) for c in choices):
        return None
    return list(dict.fromkeys(choices))  # order kept, repeats dropped


def map_choices(control: Control, submissions: Mapping[int, list[Submission]], skips: Skips) -> MappedControl:
    """Map a Choices control; see the module notes."""
    allowed = set(control.labels)
    rows, ranked, answers = [], [], []
    for task, task_submissions in submissions.items():
        for submission in task_submissions:
            chosen: list[str] | None = None
            for result in control_results(submission, control, skips):
                choices = _choices(result["value"])
                if choices is None:
                    skips.add(f"malformed choices in {control.name!r}")
                    continue
                if chosen is not None:
                    skips.add(f"second result for {control.name!r} in one annotation")
                    continue
                unknown = [c for c in choices if allowed and c not in allowed]
                for label in unknown:
                    skips.add(f"label {label!r} not in the config of {control.name!r}")
                chosen = [c for c in choices if c not in unknown]
            if control.multiple:
                answers.append((task, submission.annotator, chosen or []))
                for rank, label in enumerate((chosen or [])[:2], start=1):
                    ranked.append((task, str(task), submission.annotator, label, rank))
            elif chosen:
                if len(chosen) > 1:
                    skips.add(f"several choices in the single-choice control {control.name!r}")
                    continue
                rows.append((task, str(task), submission.annotator, chosen[0]))
    if not control.multiple:
        return MappedControl(control, "nominal", tuple(rows), categories=control.labels or None)
    labels = control.labels or tuple(sorted({c for _, _, chosen in answers for c in chosen}))
    rows = [(task, f"{task}:{label}", annotator, YES if label in chosen else NO)
            for task, annotator, chosen in answers for label in labels]
    return MappedControl(control, "nominal", tuple(rows), categories=(NO, YES),
                         ranked_records=tuple(ranked))


def map_pairwise(control: Control, submissions: Mapping[int, list[Submission]], skips: Skips) -> MappedControl:
    """Map a Pairwise control: the side selected, ``left`` or ``right``."""
    def parse(value: Mapping[str, Any]) -> str:
        selected = value.get("selected")
        if selected not in ("left", "right"):
            raise SkipResult(f"pairwise selection other than left or right in {control.name!r}")
        return str(selected)

    return MappedControl(control, "nominal", task_labels(control, submissions, skips, parse),
                         categories=("left", "right"))
