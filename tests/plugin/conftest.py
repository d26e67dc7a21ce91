"""Recorded Label Studio tasks (tests/data/all_tags_tasks.json, made by tests/data/record_tasks.py)."""

import json
from pathlib import Path

import pytest

from plugin.annotations import Skips, collect_submissions
from plugin.labelconfig import parse_label_config

DATA = Path(__file__).resolve().parents[1] / "data"
# Users as recorded: annotators 4, 5 and 6 signed up; the admin (1) posted one ground truth.
FIRST, SECOND, THIRD = "4", "5", "6"


@pytest.fixture(scope="session")
def recorded():
    return json.loads((DATA / "all_tags_tasks.json").read_text())


@pytest.fixture
def controls(recorded):
    return parse_label_config(recorded["label_config"])


@pytest.fixture
def submissions(recorded):
    return collect_submissions(recorded["tasks"], Skips())


def rows_of(mapped, task=None):
    """Mapped rows as a set of (item, annotator, label) tuples, optionally for one task."""
    rows = mapped.rows if task is None else mapped.rows[mapped.rows["task"] == task]
    return {(r.item, r.annotator, r.label) for r in rows.itertuples()}
