"""Labels, HyperTextLabels and ParagraphLabels on text: each span is an item (as in Datasaur's worked alpha).

Spans are aligned across the annotators of a task (``exact``: same start and
end; ``overlap``: greatest Jaccard overlap at or above ``span_jaccard``, for
spans with character offsets). An annotator who submitted the task but marked
nothing at a span gives the label ``"no span"``; with ``absent_span="missing"``
they give nothing, which is how Datasaur's worked example ("Krippendorff's
Alpha Calculation", alpha = 0.56) treats spans only one annotator marked.
Positions are kept as stored (floats are never truncated). Labels on audio and time spans are
intervals (:mod:`plugin.mapping.timeseries`).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

from plugin.mapping.regions import Family, Geometry, positions, span_jaccard
from plugin.settings import MappingOptions

__all__ = ["NO_SPAN", "SPAN", "text_span"]

NO_SPAN = "no span"


def _similarity(a: tuple[Any, tuple[float, float] | None], b: tuple[Any, tuple[float, float] | None]) -> float:
    if a[1] is None or b[1] is None:
        return 1.0 if a[0] == b[0] else 0.0
    return span_jaccard(a[1], b[1])


SPAN = Family("span", "span", _similarity,
              lambda options: None if options.span_alignment == "exact" else options.span_jaccard)


def text_span(value: Mapping[str, Any], options: MappingOptions) -> Geometry | None:
    """A text span's geometry: ``start``/``end`` offsets, or the XPath range of HyperText and Paragraphs."""
    if not isinstance(value.get("start"), str):
        extent = positions(value, ("start", "end"))
        if extent is None or extent[1] < extent[0]:
            return None
        key = tuple(extent)
        return Geometry(SPAN, key, (extent[0], extent[1]), (key, (extent[0], extent[1])))
    key = (value.get("start"), value.get("startOffset"), value.get("end"), value.get("endOffset"))
    if not all(isinstance(part, (str, int, float)) for part in key):  # absent, or a list or object: no position
        return None
    offsets = value.get("globalOffsets")
    if isinstance(offsets, Mapping):
        extent = positions(offsets, ("start", "end"))
        if extent is not None and extent[1] >= extent[0]:
            return Geometry(SPAN, key, (extent[0], extent[1]), (key, (extent[0], extent[1])))
    return Geometry(SPAN, key, (-math.inf, math.inf), (key, None))
