"""Review inside Label Studio: the "Low agreement" tab of the Data Manager, and "Below ground truth".

Open-source Label Studio's Data Manager shows neither a meta column nor a meta
filter, but its API accepts a tab whose filter is ``filter:tasks:meta``
*contains* ``"flagged": true`` (the JSON text of meta, with default
separators). The tab is created once and updated after, never duplicated. In
a project that has no tab yet, a "Default" tab of every task is created first
(:meth:`plugin.labelstudio.client.LabelStudioClient.ensure_view`), as Label
Studio does when a person first opens the project, so that a tab lists every
task.

A Data Manager column comes from task ``data``, and a tab sorts on one column:
with ``--mirror-to-data`` the task's place in the review queue is merged into
``data["agreement_score"]``, every other key kept
(:func:`plugin.state.blocks.mirrored_score`): its score (its lowest control
value, the value its flag follows) to 3 decimals, its ties broken after them by
the least certain consensus, then the fewest annotations
(:func:`plugin.state.flags.review_keys`). The tab sorts on it as a number, so
its top is the task a review changes the most.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from plugin.labelstudio.client import LabelStudioClient
from plugin.settings import ReviewOptions
from plugin.state.blocks import DATA_KEY

__all__ = ["FLAGGED_FILTER", "HIDDEN_COLUMNS", "below_ground_truth", "ensure_ground_truth_tab", "ensure_review_tab",
           "ground_truth_filter"]

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
    score = f"tasks:data.{DATA_KEY}"
    if not options.mirror_to_data:
        return client.ensure_view(project, title=options.tab_title, filters=FLAGGED_FILTER, ordering=["tasks:id"],
                                  hidden=HIDDEN_COLUMNS)
    return client.ensure_view(project, title=options.tab_title, filters=FLAGGED_FILTER, ordering=[score],
                              hidden=HIDDEN_COLUMNS, numbers=[score])


NO_TASK = {"conjunction": "and", "items": [
    {"filter": "filter:tasks:id", "operator": "equal", "type": "Number", "value": 0}]}


def below_ground_truth(references: Mapping[str, Mapping[str, Any] | None]) -> list[str]:
    """The annotators below ``--min-gt-accuracy`` in any control (each control's ``references`` block)."""
    return sorted({a for block in references.values() for a in ((block or {}).get("ground_truth") or {}).get(
        "below", ())}, key=lambda a: (len(a), a))


def ground_truth_filter(annotators: Sequence[str]) -> dict[str, Any]:
    """A Data Manager filter for the tasks any of the annotators annotated.

    A Data Manager filter for the tasks any of ``annotators`` annotated (Label Studio 1.20-1.23 answer
    ``filter:tasks:annotators`` *contains* a user id); a filter matching no task when there is none.

    >>> ground_truth_filter(["7"])["items"]
    [{'filter': 'filter:tasks:annotators', 'operator': 'contains', 'type': 'List', 'value': 7}]
    >>> ground_truth_filter([]) == NO_TASK
    True
    """
    ids = [int(a) for a in annotators if a.isdigit()]
    if not ids:
        return NO_TASK
    return {"conjunction": "or", "items": [{"filter": "filter:tasks:annotators", "operator": "contains",
                                            "type": "List", "value": i} for i in ids]}


def ensure_ground_truth_tab(client: LabelStudioClient, project: int, options: ReviewOptions,
                            below: Sequence[str]) -> int | None:
    """Keep the "Below ground truth" tab; return its id.

    The "Below ground truth" tab's id, listing the tasks of the annotators ``below`` (created or updated,
    never duplicated; empty when nobody is below); None when no tab is wanted."""
    if not options.tab:
        return None
    return client.ensure_view(project, title=options.ground_truth_tab_title, filters=ground_truth_filter(below),
                              ordering=["tasks:id"], hidden=HIDDEN_COLUMNS)
