"""Recorded Label Studio tasks (tests/data/all_tags_tasks.json, made by tests/data/record_tasks.py)."""

import json
from pathlib import Path

import pytest

from plugin.mapping import map_project
from plugin.mapping.annotations import Skips, collect_submissions
from plugin.mapping.labelconfig import parse_label_config
from plugin.settings import MappingOptions

DATA = Path(__file__).resolve().parents[1] / "data"
# Users as recorded: annotators 2, 3 and 4 signed up; the admin (1) marked the first one's annotation of the first
# task as ground truth, and imported the third task with an annotation.
FIRST, SECOND, THIRD = "2", "3", "4"


@pytest.fixture(scope="session")
def recorded():
    return json.loads((DATA / "all_tags_tasks.json").read_text())


@pytest.fixture
def controls(recorded):
    return parse_label_config(recorded["label_config"])


ADMIN = "1"


@pytest.fixture
def submissions(recorded):
    """The three annotators' submissions; the admin's one-choice ground truth is left out here (see test_annotations)."""
    by_task = collect_submissions(recorded["tasks"], Skips())
    return {task: [s for s in subs if s.annotator != ADMIN] for task, subs in by_task.items()}


@pytest.fixture(scope="session")
def template_configs():
    """The labeling configs Label Studio ships, by file name (tests/data/templates, sources in SOURCES)."""
    return {path.stem: path.read_text() for path in sorted((DATA / "templates").glob("*.xml"))}


def map_one(controls, submissions, name, options=None, skips=None):
    """One control of :func:`plugin.mapping.map_project`."""
    return map_project(controls, submissions, Skips() if skips is None else skips, options or MappingOptions())[name]


def rows_of(mapped, task=None):
    """Mapped rows as a set of (item, annotator, label) tuples, optionally for one task."""
    rows = mapped.rows if task is None else mapped.rows[mapped.rows["task"] == task]
    return {(r.item, r.annotator, r.label) for r in rows.itertuples()}
