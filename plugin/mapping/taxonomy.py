"""Taxonomy: one yes/no item per path selected by anyone on the item, like multiple Choices.

Real projects select several paths per task; an exact match of whole sets
would call every partial agreement a disagreement. So each path anyone
selected on the task (or region) is a yes/no item ``{item}:{Root / Child}``,
and an annotator who submitted without selecting it said "no". With
``maxUsages="1"`` (one path per annotator) the path itself is the label.
Paths not in the config are skipped.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from plugin.mapping.annotations import Skips
from plugin.mapping.base import MappedControl, SkipResult, Unit, reason, single_labels
from plugin.mapping.choices import NO, YES, yes_no_rows
from plugin.mapping.labelconfig import Control

__all__ = ["map_taxonomy"]


def _paths(control: Control, value: Mapping[str, Any]) -> list[str]:
    paths = value.get("taxonomy")
    if not isinstance(paths, list) or not paths or not all(
            isinstance(p, list) and p and all(isinstance(n, str) for n in p) for p in paths):
        raise SkipResult("malformed value", "taxonomy is not a list of paths")
    return sorted({" / ".join(path) for path in paths})


def map_taxonomy(control: Control, units: Sequence[Unit], skips: Skips) -> MappedControl:
    """Map a Taxonomy control; see the module notes."""
    allowed = set(control.labels)

    def known(paths: list[str]) -> list[str]:
        for path in paths:
            if allowed and path not in allowed:
                skips.add(reason(control, "label not in the config", repr(path)))
        return [p for p in paths if not allowed or p in allowed]

    if not control.multiple:
        def parse(value: Mapping[str, Any]) -> str:
            paths = known(_paths(control, value))
            if len(paths) != 1:
                raise SkipResult("malformed value", "not one path in a maxUsages=1 taxonomy")
            return paths[0]

        return MappedControl(control, "nominal", single_labels(control, units, skips, parse),
                             categories=control.labels or None)
    answers = []
    for unit in units:
        chosen: set[str] = set()
        for result in unit.results:
            try:
                chosen.update(known(_paths(control, result["value"])))
            except SkipResult as error:
                skips.add(reason(control, error.what, error.detail))
        answers.append((unit.task, unit.item, unit.annotator, sorted(chosen)))
    return MappedControl(control, "nominal", tuple(yes_no_rows(answers, None)), categories=(NO, YES))
