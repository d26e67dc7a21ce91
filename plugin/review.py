"""Review inside Label Studio: the "Low agreement" tab of the Data Manager.

Open-source Label Studio's Data Manager shows neither a meta column nor a meta
filter, but its API accepts a tab whose filter is ``filter:tasks:meta``
*contains* ``"flagged": true`` (the JSON text of meta, with default
separators). The tab is created once and updated after, never duplicated.

A Data Manager column comes from task ``data``: with ``--mirror-to-data`` the
task's score (its lowest control agreement, the value its flag follows) is
merged into ``data["agreement_score"]``, every other key kept
(:func:`plugin.writeback.needed_write`), and the tab sorts on it, worst first.
"""

from __future__ import annotations

from plugin.labelstudio import LabelStudioClient
from plugin.settings import ReviewOptions
from plugin.writeback import DATA_KEY

__all__ = ["FLAGGED_FILTER", "HIDDEN_COLUMNS", "ensure_review_tab"]

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
