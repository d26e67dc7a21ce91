"""The live state of a monitored project: annotations as events arrive, scores from running sums.

Not a second implementation of the scores: an event changes one task, whose
submissions go through the same mapping as a batch sync
(:func:`plugin.mapping.map_control` on that one task), and the task's items
replace their old counts in the project's running sums
(:class:`agreement.RunningAgreement`, O(categories^2) per item). Task scores
come from the same :func:`plugin.scoring.task_terms` and
:func:`plugin.scoring.summarize_task` as a batch sync, so live equals batch.

Events may arrive twice or out of order: an annotation keeps the newest
``updated_at`` seen, an older version is ignored, and a deleted annotation
stays deleted.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from agreement import RunningAgreement, UndefinedMeasureWarning, bootstrap_ci
from plugin.annotations import Skips, Submission, latest_per_annotator, submission_of, task_id
from plugin.labelconfig import Control
from plugin.mapping import map_control
from plugin.scoring import TaskScore, number, summarize_task, task_terms
from plugin.settings import MappingOptions, ScoringOptions

__all__ = ["LiveControl", "LiveProject"]


@dataclass
class LiveControl:
    """One control's items and running sums.

    Attributes
    ----------
    control : Control
    level : str
    fixed : bool
        Whether the categories are the config's (else they grow as labels appear).
    columns : dict
        Label -> column of the running sums.
    sums : RunningAgreement
    items_of_task : dict of int to list of str
    """

    control: Control
    level: str
    fixed: bool
    columns: dict[Any, int]
    sums: RunningAgreement
    items_of_task: dict[int, list[str]] = field(default_factory=dict)

    @classmethod
    def create(cls, control: Control, options: MappingOptions) -> LiveControl:
        """An empty live control, its level and categories as the mapping gives them."""
        probe = map_control(control, {}, Skips(), options)
        categories = probe.categories or ()
        return cls(control=control, level=probe.level, fixed=probe.categories is not None,
                   columns={c: i for i, c in enumerate(categories)}, sums=RunningAgreement(len(categories)))

    def update_task(self, task: int, submissions: list[Submission], options: MappingOptions) -> None:
        """Re-map one task and replace its items in the running sums."""
        mapped = map_control(self.control, {task: submissions}, Skips(), options)
        new: dict[str, dict[int, float]] = {}
        for _, item, _, label in mapped.records:
            column = self.columns.get(label)
            if column is None:
                column = self.columns.setdefault(label, len(self.columns))
            counts = new.setdefault(item, {})
            counts[column] = counts.get(column, 0.0) + 1.0
        for old in self.items_of_task.pop(task, []):
            if old not in new:
                self.sums.remove_item(old)
        for item, counts in new.items():
            vector = np.zeros(len(self.columns))
            vector[list(counts)] = list(counts.values())
            self.sums.set_item(item, vector)
        if new:
            self.items_of_task[task] = list(new)

    def values(self) -> np.ndarray | None:
        """Numeric value of each column for ordinal and interval levels."""
        if self.level == "nominal":
            return None
        labels = sorted(self.columns, key=self.columns.__getitem__)
        return np.array([float(label) for label in labels])

    def _expected(self) -> float:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", UndefinedMeasureWarning)
            return self.sums.expected_disagreement(level=self.level, values=self.values())  # type: ignore[arg-type]

    def task_scores(self, tasks: Iterable[int]) -> dict[int, dict[str, Any]]:
        """``spa``, ``alpha`` and ``n_items`` of this control for each of ``tasks`` that has items.

        One vectorized :func:`plugin.scoring.task_terms` over all their items,
        as a batch sync computes them.
        """
        items, owners = [], []
        for task in tasks:
            for item in self.items_of_task.get(task, ()):
                items.append(item)
                owners.append(task)
        if not items:
            return {}
        counts = np.array([self.sums.item(item) for item in items]).reshape(len(items), self.sums.n_categories)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", UndefinedMeasureWarning)
            table = task_terms(counts, np.array(owners), level=self.level, values=self.values(),
                               expected=self._expected(), marginals=self.sums.pairable_totals)
        columns = (table.index, table["spa"].to_numpy(), table["alpha"].to_numpy(), table["n_items"].to_numpy())
        return {int(task): {"spa": number(spa), "alpha": number(alpha), "n_items": int(n_items)}
                for task, spa, alpha, n_items in zip(*columns, strict=True)}

    def summary(self, scoring: ScoringOptions) -> dict[str, Any]:
        """Project-level SPA (with its bootstrap interval) and alpha from the running sums."""
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", UndefinedMeasureWarning)
            spa = self.sums.spa()
            alpha = self.sums.alpha(level=self.level, values=self.values())  # type: ignore[arg-type]
            interval = None
            if not math.isnan(spa):
                _, matrix = self.sums.count_matrix()
                ci = bootstrap_ci(matrix, "spa", n_resamples=scoring.n_resamples, confidence=scoring.confidence,
                                  seed=scoring.seed)
                interval = [number(ci.low), number(ci.high)]
        return {"tag": self.control.tag, "level": self.level, "spa": number(spa), "ci": interval,
                "alpha": number(alpha), "n_items": self.sums.n_items, "n_annotations": int(self.sums.n_annotations)}


class LiveProject:
    """A monitored project's annotations, items and running sums.

    Parameters
    ----------
    project : int
    controls : mapping of str to Control
    mapping, scoring : MappingOptions, ScoringOptions
    """

    def __init__(self, project: int, controls: Mapping[str, Control], *, mapping: MappingOptions,
                 scoring: ScoringOptions) -> None:
        self.project = project
        self.mapping = mapping
        self.scoring = scoring
        self.controls = {name: LiveControl.create(control, mapping) for name, control in sorted(controls.items())}
        self.skips = Skips()
        self._counted: dict[int, dict[int, Submission]] = {}  # task -> annotation id -> counted submission
        self._task_of: dict[int, int] = {}  # annotation id -> task
        self._version: dict[int, str] = {}  # annotation id -> newest updated_at seen
        self._deleted: set[int] = set()
        self.meta: dict[int, Any] = {}

    @property
    def tasks(self) -> list[int]:
        """Every task known to this project's state."""
        return sorted(self.meta)

    def load(self, tasks: Iterable[Mapping[str, Any]]) -> None:
        """Replace the whole state with a full reading of the project (the reconcile at start-up)."""
        for live in self.controls.values():
            live.sums = RunningAgreement(len(live.columns))
            live.items_of_task.clear()
        self._counted.clear()
        self._task_of.clear()
        self._version.clear()
        self.meta.clear()
        for task in tasks:
            identifier = task_id(task)
            if identifier is None:
                self.skips.add("task without an id")
                continue
            self.meta[identifier] = task.get("meta")
            for annotation in task.get("annotations") or []:
                self._record(annotation, identifier)
            self._recompute(identifier)

    def _record(self, annotation: Any, task: int) -> int | None:
        """Store one annotation's newest version; return the task it moved from, if it moved."""
        identifier = task_id(annotation)
        if identifier is None:
            self.skips.add("annotation without an id")
            return None
        updated = str(annotation.get("updated_at") or annotation.get("created_at") or "")
        if identifier in self._deleted or updated < self._version.get(identifier, ""):
            return None
        self._version[identifier] = updated
        previous = self._task_of.pop(identifier, None)
        if previous is not None:
            self._counted.get(previous, {}).pop(identifier, None)
        submission = submission_of(annotation, task, self.skips, include_ground_truth=self.mapping.include_ground_truth)
        self.meta.setdefault(task, None)
        if submission is not None:
            self._counted.setdefault(task, {})[identifier] = submission
            self._task_of[identifier] = task
        return previous if previous is not None and previous != task else None

    def _submissions(self, task: int) -> list[Submission]:
        return latest_per_annotator(self._counted.get(task, {}).values(), Skips())

    def _recompute(self, task: int) -> None:
        submissions = self._submissions(task)
        for live in self.controls.values():
            live.update_task(task, submissions, self.mapping)

    def apply_annotation(self, annotation: Mapping[str, Any], task: int, *, task_meta: Any = None) -> set[int]:
        """An annotation was created or updated; return the tasks whose scores may have changed."""
        if isinstance(task_meta, Mapping):
            self.meta[task] = dict(task_meta)
        moved = self._record(annotation, task)
        changed = {task} | ({moved} if moved is not None else set())
        for identifier in changed:
            self._recompute(identifier)
        return changed

    def delete_annotations(self, identifiers: Iterable[int]) -> set[int]:
        """Annotations were deleted (the event carries their ids only); return the changed tasks."""
        changed = set()
        for identifier in identifiers:
            self._deleted.add(identifier)
            task = self._task_of.pop(identifier, None)
            if task is not None:
                self._counted.get(task, {}).pop(identifier, None)
                changed.add(task)
        for task in changed:
            self._recompute(task)
        return changed

    def delete_tasks(self, identifiers: Iterable[int]) -> None:
        """Tasks were deleted: forget them and their items."""
        for task in identifiers:
            for identifier in list(self._counted.pop(task, {})):
                self._task_of.pop(identifier, None)
            for live in self.controls.values():
                live.update_task(task, [], self.mapping)
            self.meta.pop(task, None)

    def task_scores(self, tasks: Iterable[int]) -> dict[int, TaskScore]:
        """The scores of ``tasks``, as a batch sync would compute them (one vectorized pass per control)."""
        tasks = list(tasks)
        by_task: dict[int, dict[str, dict[str, Any]]] = {task: {} for task in tasks}
        for name, live in self.controls.items():
            for task, score in live.task_scores(tasks).items():
                by_task[task][name] = score
        return {task: summarize_task(task, len(self._submissions(task)), by_task[task], self.scoring)
                for task in tasks}

    def task_score(self, task: int) -> TaskScore:
        """One task's scores."""
        return self.task_scores([task])[task]

    def status(self) -> dict[str, Any]:
        """Project-level scores per control."""
        return {name: live.summary(self.scoring) for name, live in self.controls.items()}
