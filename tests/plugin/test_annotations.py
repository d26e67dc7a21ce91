"""What counts: skipped, ground-truth and repeated annotations."""

from plugin.annotations import Skips, annotator_key, collect_submissions
from tests.plugin.conftest import FIRST, SECOND, THIRD


def test_recorded_tasks(recorded):
    skips = Skips()
    by_task = collect_submissions(recorded["tasks"], skips)
    first, second, third = sorted(by_task)
    assert [s.annotator for s in by_task[first]] == [FIRST, SECOND, THIRD]
    assert [s.annotator for s in by_task[second]] == [FIRST, SECOND, THIRD]
    assert by_task[third] == []  # only a skipped annotation
    assert skips.reasons == {"skipped (cancelled) annotation": 1,
                             "ground-truth annotation (not counted as an annotator)": 1}


def test_ground_truth_counts_when_asked(recorded):
    by_task = collect_submissions(recorded["tasks"], Skips(), include_ground_truth=True)
    first = min(by_task)
    assert [s.annotator for s in by_task[first]] == [FIRST, SECOND, THIRD, "gt:1"]


def test_the_latest_annotation_of_an_annotator_counts():
    task = {"id": 1, "annotations": [
        {"id": 10, "completed_by": 3, "result": [{"from_name": "a"}], "updated_at": "2026-01-02T00:00:00Z"},
        {"id": 11, "completed_by": {"id": 3, "email": "x@example.com"}, "result": [], "updated_at": "2026-01-01T00:00:00Z"},
    ]}
    skips = Skips()
    (submission,) = collect_submissions([task], skips)[1]
    assert submission.annotation == 10
    assert skips.total == 1


def test_broken_tasks_are_counted_not_fatal():
    skips = Skips()
    tasks = [{"annotations": []}, "not a task", {"id": 2, "annotations": "x"},
             {"id": 3, "annotations": [{"completed_by": None, "result": []}, {"completed_by": 4, "result": "?"}, 7]}]
    assert collect_submissions(tasks, skips) == {2: [], 3: []}
    assert skips.total == 6
    assert any("task without an id" in line for line in skips.lines())


def test_completed_by_shapes():
    assert annotator_key(7) == "7"
    assert annotator_key({"id": 7, "email": "a@b"}) == "7"
    assert annotator_key(None) is None and annotator_key(True) is None
