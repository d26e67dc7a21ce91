"""What counts: skipped, ground-truth and repeated annotations."""

from plugin.mapping.annotations import GROUND_TRUTH_SKIP, Skips, annotator_key, collect_submissions, is_imported
from tests.plugin.conftest import ADMIN, FIRST, SECOND, THIRD


def test_recorded_tasks(recorded):
    skips = Skips()
    by_task = collect_submissions(recorded["tasks"], skips)
    first, second, third = sorted(by_task)
    assert [s.annotator for s in by_task[second]] == [FIRST, SECOND, THIRD]
    assert by_task[third] == []  # only a skipped annotation
    # FIRST's annotation of the first task was marked ground truth by the admin: it stays FIRST's judgement.
    assert [s.annotator for s in by_task[first]] == [FIRST, SECOND, THIRD]
    ground_truth = [a for a in recorded["tasks"][0]["annotations"] if a["ground_truth"]]
    assert [str(a["completed_by"]) for a in ground_truth] == [FIRST]
    # The third task was imported with an annotation: Label Studio marked it ground truth, with no updated_by.
    assert skips.reasons == {"skipped (cancelled) annotation": 1, GROUND_TRUTH_SKIP: 1}
    with_imported = collect_submissions(recorded["tasks"], Skips(), include_ground_truth=True)
    assert [s.annotator for s in with_imported[third]] == [f"gt:{ADMIN}"]


def annotation(identifier, user, **fields):
    return {"id": identifier, "completed_by": user, "result": [], "updated_at": "2026-01-01T00:00:00Z", **fields}


def test_ground_truth_marked_by_a_reviewer_counts_as_its_annotator():
    task = {"id": 1, "annotations": [annotation(1, 7, ground_truth=True, updated_by=7, import_id=None),
                                     annotation(2, 8, ground_truth=False, updated_by=8)]}
    skips = Skips()
    assert [s.annotator for s in collect_submissions([task], skips)[1]] == ["7", "8"]
    assert skips.total == 0


def test_imported_ground_truth_is_a_reference_not_an_annotators_work():
    # Label Studio 1.23.2 tasks/serializers.py: imported annotations get ground_truth=True unless the import says
    # false, import_id the id they had in the file, and no updated_by.
    imported = annotation(3, 1, ground_truth=True, updated_by=None, import_id=None)
    with_id = annotation(4, 5, ground_truth=True, import_id=55)
    migrated = annotation(5, 9, ground_truth=False, updated_by=None, import_id=77)  # the import said: not a reference
    task = {"id": 1, "annotations": [imported, with_id, migrated, annotation(2, 8, ground_truth=False, updated_by=8)]}
    skips = Skips()
    assert [s.annotator for s in collect_submissions([task], skips)[1]] == ["8", "9"]
    assert skips.as_dict() == {GROUND_TRUTH_SKIP: 2}
    assert is_imported(imported) and is_imported(with_id) and is_imported(migrated)
    counted = collect_submissions([task], Skips(), include_ground_truth=True)[1]
    assert [s.annotator for s in counted] == ["8", "9", "gt:1", "gt:5"]


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
