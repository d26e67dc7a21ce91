"""Choices (single and multiple) and Pairwise: the task (or the region, per region) is the item.

Single choice: the chosen label. Multiple choices: the order of the selected
choices gives the primary and secondary label (the augmented kappa of
Rosenberg & Binkowski), and every label of the config is also a yes/no item
of the task, so per-label agreement exists. An annotator who submitted the
task without selecting anything in a multiple-choice control said "no" to
every label (Label Studio stores no result for an empty selection; a result
that holds one is counted as malformed, and read as no selection).
Without a config, the labels are those anyone selected on the item.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import pandas as pd

from plugin.mapping.annotations import Skips
from plugin.mapping.base import MappedControl, SkipResult, Unit, reason, single_labels
from plugin.mapping.item_names import split_item_names
from plugin.mapping.labelconfig import Control

__all__ = ["NO", "NONE", "YES", "chosen_sets", "is_label_set", "map_choices", "map_pairwise", "split_label_items",
           "yes_no_rows"]

YES, NO = "yes", "no"
NONE = "(none)"  # the set of an annotator who submitted without choosing anything


def is_label_set(mapped: MappedControl) -> bool:
    """Whether ``mapped`` is a control where each annotator chooses a set of labels.

    Such controls (multiple Choices, a multi-path Taxonomy) are mapped as one yes/no item per label
    (:func:`yes_no_rows`).
    """
    return mapped.control.multiple and mapped.categories == (NO, YES)


def split_label_items(items: pd.Series, labels: Sequence[str] | None) -> tuple[pd.Series, pd.Series]:
    """Split each yes/no item ``"{item}:{label}"`` into its item and its label.

    Uses :func:`split_item_names`, each distinct item once: a categorical's categories, else the items
    factorized.

    >>> items, labels = split_label_items(pd.Series(["7:r1:Yes: sure", "7:r1:No"]), ["Yes: sure", "No"])
    >>> items.tolist(), labels.tolist()
    (['7:r1', '7:r1'], ['Yes: sure', 'No'])
    """
    if isinstance(items.dtype, pd.CategoricalDtype):
        codes, names = items.cat.codes.to_numpy(), [str(name) for name in items.cat.categories.tolist()]
    else:
        codes, distinct = pd.factorize(items.astype(str), sort=False)  # each item once, not once per annotator
        names = distinct.tolist()
    base, found = split_item_names(names, labels)
    return (pd.Series(base[codes], index=items.index, dtype=object),
            pd.Series(found[codes], index=items.index, dtype=object))


def chosen_sets(rows: pd.DataFrame, labels: Sequence[str] | None, *,
                split: tuple[pd.Series, pd.Series] | None = None) -> pd.DataFrame:
    """Each annotator's set of labels per item, from the yes/no rows of a label-set control.

    The frame has columns ``item``, ``annotator``, ``label``: one row per label chosen, and :data:`NONE` for an
    annotator who chose nothing. ``split`` is :func:`split_label_items` of the rows' items, when the caller has
    it.
    """
    base, label = split_label_items(rows["item"], labels) if split is None else split
    table = pd.DataFrame({"item": base, "annotator": rows["annotator"].to_numpy(), "label": label,
                          "yes": rows["label"].to_numpy() == YES})
    chose = table.groupby(["item", "annotator"], sort=False)["yes"].transform("any")
    empty = table[~chose].drop_duplicates(["item", "annotator"]).assign(label=NONE)
    return pd.concat([table[table["yes"]], empty], ignore_index=True)[["item", "annotator", "label"]]


def _choices(value: Mapping[str, Any]) -> list[str] | None:
    choices = value.get("choices")
    if not isinstance(choices, list) or not all(isinstance(c, str) for c in choices):
        return None
    return list(dict.fromkeys(choices))  # order kept, repeats dropped


def yes_no_rows(answers: Sequence[tuple[int, str, str, list[str]]], labels: Sequence[str] | None
                ) -> list[tuple[Any, ...]]:
    """Yes/no rows, one per label, from rows of chosen label sets.

    Rows ``(task, "{item}:{label}", annotator, yes|no)`` for every label, from ``(task, item, annotator,
    chosen)``.

    With ``labels`` None, the labels of an item are those anyone chose there.
    """
    seen: dict[str, set[str]] = {}
    for _, item, _, chosen in answers:
        seen.setdefault(item, set()).update(chosen)
    return [(task, f"{item}:{label}", annotator, YES if label in chosen else NO)
            for task, item, annotator, chosen in answers
            for label in (labels if labels is not None else sorted(seen[item]))]


def map_choices(control: Control, units: Sequence[Unit], skips: Skips) -> MappedControl:
    """Map a Choices control; see the module notes."""
    allowed = set(control.labels)
    rows, ranked, answers = [], [], []
    for unit in units:
        selections = []
        for result in unit.results:
            choices = _choices(result["value"])
            if choices is None:
                skips.add(reason(control, "malformed value", "choices is not a list of text"))
                continue
            if not choices:  # Label Studio removes the result of an empty selection; one stored is read as none
                skips.add(reason(control, "malformed value", "no choice selected"))
                continue
            unknown = [c for c in choices if allowed and c not in allowed]
            for label in unknown:
                skips.add(reason(control, "label not in the config", repr(label)))
            selections.append([c for c in choices if c not in unknown])
        if len(selections) > 1:
            skips.add(reason(control, "duplicate result", "several choices results at one item; the first by value "
                                                          "counts"), len(selections) - 1)
            selections.sort()
        chosen = selections[0] if selections else None
        if control.multiple:
            answers.append((unit.task, unit.item, unit.annotator, chosen or []))
            for rank, label in enumerate((chosen or [])[:2], start=1):
                ranked.append((unit.task, unit.item, unit.annotator, label, rank))
        elif chosen:
            if len(chosen) > 1:
                skips.add(reason(control, "malformed value", "several choices in a single-choice control"))
                continue
            rows.append((unit.task, unit.item, unit.annotator, chosen[0]))
    if not control.multiple:
        return MappedControl(control, "nominal", tuple(rows), categories=control.labels or None)
    return MappedControl(control, "nominal", tuple(yes_no_rows(answers, control.labels or None)),
                         categories=(NO, YES), ranked_records=tuple(ranked))


def map_pairwise(control: Control, units: Sequence[Unit], skips: Skips) -> MappedControl:
    """Map a Pairwise control: the side selected, ``left`` or ``right``."""
    def parse(value: Mapping[str, Any]) -> str:
        selected = value.get("selected")
        if selected not in ("left", "right"):
            raise SkipResult("malformed value", "selection other than left or right")
        return str(selected)

    return MappedControl(control, "nominal", single_labels(control, units, skips, parse),
                         categories=("left", "right"))
