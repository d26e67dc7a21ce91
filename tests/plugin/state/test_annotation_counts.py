"""``n_annotations`` means one thing everywhere: the task and annotator pairs (annotations, as Label Studio counts
them), in ``/status``, ``sync --json``, the report's JSON and the tasks' meta; labels and regions have keys of their
own (``n_labels``, ``n_regions``)."""

import pytest

from plugin.demo import CONFIG, simulated_export
from plugin.mapping.labelconfig import parse_label_config
from plugin.report import build_report, report_json
from plugin.settings import MappingOptions, ScoringOptions
from plugin.state.project import ProjectState
from plugin.summary import sync_summary


@pytest.fixture(scope="module")
def state():
    tasks = simulated_export(60, seed=4)
    tasks[0]["annotations"] = tasks[0]["annotations"][:1]  # a task annotated once
    return ProjectState.from_tasks(tasks, parse_label_config(CONFIG), mapping=MappingOptions(),
                                   scoring=ScoringOptions(n_resamples=20))


def test_status_and_sync_json_count_one_projects_annotations_alike(state):
    # before, a span control's n_annotations was its task-annotator pairs in /status (360 on a test project) and
    # its labels over aligned items in sync --json (690 there)
    scoring = ScoringOptions(n_resamples=20)
    status = {"n_annotations": state.n_annotations(), "controls": state.live_summary()}  # what /status shows
    summary = sync_summary("test", state.scores(), scoring, dry_run=True, to_write=0)
    tasks = state.task_scores()
    assert summary["n_annotations"] == status["n_annotations"] == sum(tasks[t].n_annotations for t in tasks)
    entities = state.controls["entities"]
    pairs = {(task, row[2]) for task in entities.records for row in entities.task_records(task)}
    for name, control in summary["controls"].items():
        live = status["controls"][name]
        assert control["n_annotations"] == live["n_annotations"], name
        assert control["n_labels"] == live["n_labels"], name
    assert summary["controls"]["entities"]["n_annotations"] == len(pairs) < summary["controls"]["entities"]["n_labels"]
    assert summary["controls"]["topics"]["n_labels"] == 4 * summary["controls"]["topics"]["n_annotations"]
    # regions apart, and only for a span control
    assert summary["controls"]["entities"]["n_regions"] == status["controls"]["entities"]["n_regions"] == sum(
        len(entities.spans.task_spans(task)[0]) for task in entities.spans.tasks)
    assert all("n_regions" not in summary["controls"][name] for name in ("sentiment", "topics", "helpfulness"))


def test_the_reports_json_and_the_tasks_meta_count_annotations_as_the_summary(state):
    scores = state.scores()
    summary = sync_summary("test", scores, ScoringOptions(n_resamples=20), dry_run=True, to_write=0)
    data = report_json(build_report(state.snapshot(), source="test", generated_at="now", scores=scores))
    assert data["meta"]["n_annotations"] == summary["n_annotations"]
    for row in data["headline"]:
        control = summary["controls"][row["control"]]
        assert (row["n_annotations"], row["n_labels"], row["n_regions"]) == (
            control["n_annotations"], control["n_labels"], control.get("n_regions")), row["control"]
    assert all("n_annotations" not in row and row["n_labels"] > 0 for row in data["timeline"])
    tasks = state.task_scores()  # each task's meta: agreement.n_annotations
    assert sum(tasks[t].n_annotations for t in tasks) == summary["n_annotations"]
    assert sorted({row["n_annotations"] for row in data["tasks"]}) == [1, 2, 3]
