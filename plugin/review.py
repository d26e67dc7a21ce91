"""Review inside Label Studio: the "Low agreement" tab, and the score mirrored into task data.

Open-source Label Studio's Data Manager shows neither a meta column nor a meta
filter, but its API accepts a tab whose filter is ``filter:tasks:meta``
*contains* ``"flagged": true`` (the JSON text of meta, with default
separators). The tab is created once and updated after, never duplicated.

A Data Manager column comes from task ``data``: with ``--mirror-to-data`` the
task's score (its lowest control agreement, the value its flag follows) is
merged into ``data["agreement_score"]``, every other key kept, and the tab
sorts on it, worst first.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from plugin.labelstudio import LabelStudioClient
from plugin.scoring import task_score_of
from plugin.settings import ReviewOptions

__all__ = ["DATA_KEY", "FLAGGED_FILTER", "HIDDEN_COLUMNS", "ensure_review_tab", "escalated_overlap", "mirrored_data",
           "task_score"]

DATA_KEY = "agreement_score"
FLAGGED_FILTER = {"conjunction": "and", "items": [
    {"filter": "filter:tasks:meta", "operator": "contains", "type": "String", "value": '"flagged": true'}]}


HIDDEN_COLUMNS = tuple(f"tasks:{name}" for name in (
    "inner_id", "annotations_results", "annotations_ids", "predictions_score", "predictions_model_versions",
    "predictions_results", "total_predictions", "file_upload", "storage_filename", "created_at", "updated_at",
    "updated_by", "avg_lead_time", "draft_exists"))
"""Columns the tab hides, so that the task's id, annotators and data (with the score) fit on a screen."""


def ensure_review_tab(client: LabelStudioClient, project: int, options: ReviewOptions) -> int | None:
    """The tab's id, created or updated as ``options`` says; None when no tab is wanted."""
    if not options.tab:
        return None
    ordering = [f"tasks:data.{DATA_KEY}"] if options.mirror_to_data else ["tasks:id"]
    return client.ensure_view(project, title=options.tab_title, filters=FLAGGED_FILTER, ordering=ordering,
                              hidden=HIDDEN_COLUMNS)


def escalated_overlap(task: Mapping[str, Any], block: Mapping[str, Any], *, cap: int) -> int | None:
    """The overlap a task should ask for so one more annotator labels it, or None when it should not change.

    A flagged task whose annotations are all in (at least as many as its
    ``overlap``) asks for one more than it has, up to ``cap``. The decision
    reads only the task as Label Studio holds it, so it is the same on every
    pass, and a task already waiting for its extra annotator is left alone.

    Examples
    --------
    >>> escalated_overlap({"overlap": 2}, {"flagged": True, "n_annotations": 2}, cap=5)
    3
    >>> escalated_overlap({"overlap": 3}, {"flagged": True, "n_annotations": 2}, cap=5) is None  # waiting
    True
    >>> escalated_overlap({"overlap": 5}, {"flagged": True, "n_annotations": 5}, cap=5) is None  # at the cap
    True
    """
    overlap = task.get("overlap")
    annotations = block.get("n_annotations")
    if not block.get("flagged") or not isinstance(overlap, int) or not isinstance(annotations, int):
        return None
    wanted = min(cap, max(overlap, annotations) + 1)
    return wanted if annotations >= overlap and wanted > overlap else None


def task_score(block: Mapping[str, Any]) -> float | None:
    """A task's score for the grid: its lowest control agreement (weighted for ordered controls), or None."""
    controls = {name: c for name, c in (block.get("controls") or {}).items() if isinstance(c, Mapping)}
    score = task_score_of(controls)
    return round(score, 3) if score is not None else None


def mirrored_data(existing: Any, block: Mapping[str, Any]) -> dict[str, Any] | None:
    """The task's data with its score merged in, or None when it holds that score already."""
    data = dict(existing) if isinstance(existing, Mapping) else {}
    score = task_score(block)
    if data.get(DATA_KEY) == score or (score is None and DATA_KEY not in data):
        return None
    if score is None:
        data.pop(DATA_KEY, None)
    else:
        data[DATA_KEY] = score
    return data
