"""What every mapping module produces, and the result filtering they share."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from functools import cached_property
from typing import Any, Literal

import pandas as pd

from plugin.annotations import Skips, Submission
from plugin.labelconfig import Control

__all__ = ["ROW_COLUMNS", "MappedControl", "SkipResult", "control_results", "frame", "task_labels"]

ROW_COLUMNS = ("task", "item", "annotator", "label")
Level = Literal["nominal", "ordinal", "interval"]


@dataclass(frozen=True)
class MappedControl:
    """One control's annotations as items with one label per annotator.

    Attributes
    ----------
    control : Control
    level : {"nominal", "ordinal", "interval"}
        The level of measurement its labels imply.
    records : tuple of tuple
        ``(task, item, annotator, label)``: one per annotator and item. The
        live path reads these directly; :attr:`rows` is the same as a table.
    categories : tuple, optional
        Every possible label in order (from the config), or None when the
        labels observed are the categories.
    ranked_records : tuple of tuple, optional
        Multiple choices only: ``(task, item, annotator, label, rank)`` with
        rank 1 primary and 2 secondary, for the augmented kappa.
    """

    control: Control
    level: Level
    records: tuple[tuple[Any, ...], ...]
    categories: tuple[Any, ...] | None = None
    ranked_records: tuple[tuple[Any, ...], ...] | None = None

    @cached_property
    def rows(self) -> pd.DataFrame:
        """:attr:`records` as a table with the columns ``task``, ``item``, ``annotator``, ``label``."""
        return frame(self.records)

    @cached_property
    def ranked(self) -> pd.DataFrame | None:
        """:attr:`ranked_records` as a table, or None."""
        if self.ranked_records is None:
            return None
        return frame(self.ranked_records, ("task", "item", "annotator", "label", "rank"))


def frame(rows: Sequence[tuple[Any, ...]], columns: Sequence[str] = ROW_COLUMNS) -> pd.DataFrame:
    """A DataFrame of ``rows`` with ``columns``, typed even when empty."""
    table = pd.DataFrame(list(rows), columns=list(columns))
    table["task"] = table["task"].astype("int64")
    table["item"] = table["item"].astype(str)
    table["annotator"] = table["annotator"].astype(str)
    return table


def control_results(submission: Submission, control: Control, skips: Skips) -> Iterator[Mapping[str, Any]]:
    """The result items of ``submission`` that belong to ``control``, with a ``value`` object.

    Items of another ``type`` than the control's are skipped and counted.
    """
    for result in submission.results:
        if result.get("from_name") != control.name:
            continue
        kind = str(result.get("type", "")).lower()
        if kind and kind != control.result_type:
            skips.add(f"result of type {kind!r} for the {control.tag} control {control.name!r}")
            continue
        if not isinstance(result.get("value"), Mapping):
            skips.add(f"result without a value object for {control.name!r}")
            continue
        yield result


class SkipResult(ValueError):
    """A result value a mapping cannot use; the message is the reason counted in the skip report."""


def task_labels(control: Control, submissions: Mapping[int, list[Submission]], skips: Skips,
                parse: Callable[[Mapping[str, Any]], Any]) -> tuple[tuple[Any, ...], ...]:
    """Rows for controls whose item is the task: each annotator's first usable result, as ``parse`` reads it.

    ``parse(value)`` returns the label, or raises :class:`SkipResult` with the
    reason, which is counted; the annotator's next result for the control is
    then tried.
    """
    rows = []
    for task, task_submissions in submissions.items():
        for submission in task_submissions:
            for result in control_results(submission, control, skips):
                try:
                    label = parse(result["value"])
                except SkipResult as reason:
                    skips.add(str(reason))
                    continue
                rows.append((task, str(task), submission.annotator, label))
                break
    return tuple(rows)
