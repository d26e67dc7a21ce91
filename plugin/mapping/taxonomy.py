"""Taxonomy: the task is the item, the full selected path(s) the nominal label."""

from __future__ import annotations

from collections.abc import Mapping

from plugin.annotations import Skips, Submission
from plugin.labelconfig import Control
from plugin.mapping.base import MappedControl, control_results

__all__ = ["map_taxonomy"]


def map_taxonomy(control: Control, submissions: Mapping[int, list[Submission]], skips: Skips) -> MappedControl:
    """Map a Taxonomy control.

    Each selected path is written ``Root / Child``; several selected paths
    form one label, sorted and joined with ``" | "``. Paths not in the config
    are skipped.
    """
    allowed = set(control.labels)
    rows = []
    for task, task_submissions in submissions.items():
        for submission in task_submissions:
            for result in control_results(submission, control, skips):
                paths = result["value"].get("taxonomy")
                if not isinstance(paths, list) or not paths or not all(
                        isinstance(p, list) and p and all(isinstance(n, str) for n in p) for p in paths):
                    skips.add(f"malformed taxonomy in {control.name!r}")
                    continue
                joined = sorted({" / ".join(path) for path in paths})
                unknown = [p for p in joined if allowed and p not in allowed]
                if unknown:
                    skips.add(f"taxonomy path {unknown[0]!r} not in the config of {control.name!r}")
                    continue
                rows.append((task, str(task), submission.annotator, " | ".join(joined)))
                break
    return MappedControl(control, "nominal", tuple(rows))
