"""TextArea: the task is the item, the normalized text the nominal label."""

from __future__ import annotations

from collections.abc import Mapping

from plugin.annotations import Skips, Submission
from plugin.labelconfig import Control
from plugin.mapping.base import MappedControl, control_results

__all__ = ["MAX_TEXT", "map_textarea", "normalize_text"]

MAX_TEXT = 10_000


def normalize_text(text: str) -> str:
    """Case-folded, with runs of white space made one space and the ends trimmed."""
    return " ".join(text.split()).casefold()


def map_textarea(control: Control, submissions: Mapping[int, list[Submission]], skips: Skips) -> MappedControl:
    """Map a TextArea control; several texts form one label, joined by new lines.

    Texts longer than :data:`MAX_TEXT` characters are skipped as payloads, not labels.
    """
    rows = []
    for task, task_submissions in submissions.items():
        for submission in task_submissions:
            for result in control_results(submission, control, skips):
                texts = result["value"].get("text")
                if isinstance(texts, str):
                    texts = [texts]
                if not isinstance(texts, list) or not all(isinstance(t, str) for t in texts):
                    skips.add(f"malformed text in {control.name!r}")
                    continue
                label = "\n".join(normalize_text(t) for t in texts if t.strip())
                if not label:
                    skips.add(f"empty text in {control.name!r}")
                    continue
                if len(label) > MAX_TEXT:
                    skips.add(f"text over {MAX_TEXT} characters in {control.name!r}")
                    continue
                rows.append((task, str(task), submission.annotator, label))
                break
    return MappedControl(control, "nominal", tuple(rows))
