"""TextArea: the task (or region, per region) is the item, the normalized text the nominal label."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from plugin.mapping.annotations import Skips
from plugin.mapping.base import MappedControl, SkipResult, Unit, single_labels
from plugin.mapping.labelconfig import Control

__all__ = ["MAX_TEXT", "map_textarea", "normalize_text"]

MAX_TEXT = 10_000


def normalize_text(text: str) -> str:
    """Case-folded, with runs of white space made one space and the ends trimmed."""
    return " ".join(text.split()).casefold()


def map_textarea(control: Control, units: Sequence[Unit], skips: Skips) -> MappedControl:
    """Map a TextArea control; several texts form one label, joined by new lines.

    Texts longer than :data:`MAX_TEXT` characters are skipped as payloads, not labels.
    """
    def parse(value: Mapping[str, Any]) -> str:
        texts = value.get("text")
        if isinstance(texts, str):
            texts = [texts]
        if not isinstance(texts, list) or not all(isinstance(t, str) for t in texts):
            raise SkipResult("malformed value", "text is not a list of text")
        label = "\n".join(normalize_text(t) for t in texts if t.strip())
        if not label:
            raise SkipResult("malformed value", "empty text")
        if len(label) > MAX_TEXT:
            raise SkipResult("malformed value", f"text over {MAX_TEXT} characters")
        return label

    return MappedControl(control, "nominal", single_labels(control, units, skips, parse))
