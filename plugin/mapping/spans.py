"""Labels, HyperTextLabels and ParagraphLabels: each span is an item (seed 001).

Spans are aligned across the annotators of a task (``exact``: same start and
end; ``overlap``: greatest Jaccard overlap above a threshold, for spans with
character offsets). An annotator who submitted the task but marked nothing at
a span gives the label ``"no span"``; with ``absent_span="missing"`` they give
nothing, which is how Datasaur's worked example (seed 001, alpha = 0.56)
treats spans only one annotator marked.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from plugin.annotations import Skips, Submission
from plugin.labelconfig import Control
from plugin.mapping.base import MappedControl
from plugin.mapping.regions import map_regions, span_jaccard
from plugin.settings import MappingOptions

__all__ = ["NO_SPAN", "map_spans"]

NO_SPAN = "no span"


def _number(value: Any) -> float | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, (int, float)):
        return float(value)
    return None


def _position(control: Control, value: Mapping[str, Any]) -> tuple[tuple[Any, ...], tuple[float, float] | None] | None:
    """The span's exact key and numeric extent, or None when malformed."""
    if control.tag == "labels":
        start, end = _number(value.get("start")), _number(value.get("end"))
        if start is None or end is None or end < start:
            return None
        return (int(start), int(end)), (start, end)
    key = (value.get("start"), value.get("startOffset"), value.get("end"), value.get("endOffset"))
    if any(part is None for part in key):
        return None
    offsets = value.get("globalOffsets")
    if isinstance(offsets, Mapping):
        start, end = _number(offsets.get("start")), _number(offsets.get("end"))
        if start is not None and end is not None and end >= start:
            return key, (start, end)
    return key, None


def map_spans(control: Control, submissions: Mapping[int, list[Submission]], skips: Skips,
              options: MappingOptions) -> MappedControl:
    """Map a span control; see the module notes."""
    return map_regions(control, submissions, skips, position=lambda value: _position(control, value), what="span",
                       similarity=span_jaccard if options.span_alignment == "overlap" else None,
                       threshold=options.span_jaccard, absent=NO_SPAN if options.absent_span == "label" else None)
