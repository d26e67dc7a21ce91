"""Taxonomy: the task is the item, the full selected path(s) the nominal label."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from plugin.annotations import Skips, Submission
from plugin.labelconfig import Control
from plugin.mapping.base import MappedControl, SkipResult, task_labels

__all__ = ["map_taxonomy"]


def map_taxonomy(control: Control, submissions: Mapping[int, list[Submission]], skips: Skips) -> MappedControl:
    """Map a Taxonomy control.

    Each selected path is written ``Root / Child``; several selected paths
    form one label, sorted and joined with ``" | "``. Paths not in the config
    are skipped.
    """
    allowed = set(control.labels)

    def parse(value: Mapping[str, Any]) -> str:
        paths = value.get("taxonomy")
        if not isinstance(paths, list) or not paths or not all(
                isinstance(p, list) and p and all(isinstance(n, str) for n in p) for p in paths):
            raise SkipResult(f"malformed taxonomy in {control.name!r}")
        joined = sorted({" / ".join(path) for path in paths})
        unknown = [p for p in joined if allowed and p not in allowed]
        if unknown:
            raise SkipResult(f"taxonomy path {unknown[0]!r} not in the config of {control.name!r}")
        return " | ".join(joined)

    return MappedControl(control, "nominal", task_labels(control, submissions, skips, parse))
