"""An annotation's event standing for a read of its task: written without a read, and checked by the write's answer."""

import time

import pytest

from plugin.keeper import writer as writer_module
from plugin.keeper.monitor import ProjectMonitor
from plugin.keeper.passes import READ_AGAIN, full_pass
from plugin.keeper.recent import RecentTasks, provisional_read
from plugin.keeper.writer import TaskWriter
from plugin.labelstudio.events import SavedAnnotation, parse_event
from plugin.settings import MappingOptions, ScoringOptions
from tests.plugin.fake_label_studio import FakeLabelStudio, annotation


@pytest.fixture
def fake():
    return FakeLabelStudio([{"id": t, "meta": {"keep": t}, "data": {"text": f"task {t}"}, "annotations": []}
                            for t in (1, 2, 3)])


def read(fake):
    monitor = ProjectMonitor(1, mapping=MappingOptions(), scoring=ScoringOptions(n_resamples=20))
    full_pass(fake, monitor)
    return monitor


def events(fake, monitor, *payloads, dry_run=False, ago=0.0):
    """Each payload as the service takes it (held, then a refresh asked for), the writer run until idle.

    ``ago``: seconds since the events came, as the writer is told (a test patches the monitor's clock to match).
    """
    writer = TaskWriter(fake, {1: monitor}, workers=1, coalesce_seconds=0.05, dry_run=dry_run)
    for payload in payloads:
        event = parse_event(payload)
        tasks = set(event.tasks) | {task for a in event.annotations
                                    if (task := monitor.state.task_of_annotation(a)) is not None}
        monitor.hold(event, tasks)
        writer.request(1, tasks, since=time.monotonic() - ago,
                       alone=[task for task in tasks if not monitor.needs_read(task)])
    writer.start()
    try:
        assert writer.wait_idle(10)
    finally:
        writer.stop()
    return writer


def with_one_annotation(fake):
    """The project read, and task 1's first annotation (annotator 1, "pos") written from its event."""
    monitor = read(fake)
    fake.annotate(1, annotation(10, 1, 1, "pos"))
    events(fake, monitor, fake.payload(1, 10))
    return monitor


def reads(fake):
    return fake.calls["tasks_by_id"] + fake.calls["task"]


def as_read_now(fake, task):
    """The agreement block a read of every task gives ``task`` now, without its time."""
    block = read(fake).state.blocks([task], updated_at="now")[task]
    return {key: value for key, value in block.items() if key != "updated_at"}


def written(fake, task):
    return {key: value for key, value in fake.meta(task)["agreement"].items() if key != "updated_at"}


def test_a_first_annotation_is_written_from_its_event_without_a_read(fake):
    monitor = read(fake)
    fake.annotate(1, annotation(10, 1, 1, "pos"))
    before = reads(fake)
    writer = events(fake, monitor, fake.payload(1, 10))
    assert reads(fake) == before and fake.writes == [1]
    assert dict(writer.outcomes) == {"written": 1}
    assert fake.meta(1)["keep"] == 1 and fake.meta(1)["agreement"]["n_annotations"] == 1
    assert full_pass(fake, monitor, incremental=True).n_tasks == 0  # the write's answer confirmed it: no read
    assert monitor.stale_tasks() == []


def test_a_second_annotation_starts_from_the_first_write_s_answer(fake):
    monitor = with_one_annotation(fake)
    fake.annotate(1, annotation(11, 1, 2, "neg"))
    before = reads(fake)
    events(fake, monitor, fake.payload(1, 11))
    assert reads(fake) == before and fake.writes == [1, 1]
    assert fake.meta(1)["agreement"]["n_annotations"] == 2


def test_an_edit_replaces_its_annotation_and_a_skip_counts_as_one(fake):
    monitor = with_one_annotation(fake)
    fake.annotate(1, annotation(11, 1, 2, "pos"))
    fake.annotate(1, {**annotation(12, 1, 3, "pos"), "was_cancelled": True, "result": []})
    fake.annotate(1, annotation(10, 1, 1, "neg", second="30"))
    before = reads(fake)
    events(fake, monitor, fake.payload(1, 11), fake.payload(1, 12), fake.payload(1, 10, "ANNOTATION_UPDATED"))
    assert reads(fake) == before
    assert written(fake, 1) == as_read_now(fake, 1)
    assert written(fake, 1)["n_annotations"] == 2


def test_an_annotation_the_service_never_heard_of_makes_the_event_a_read(fake):
    monitor = with_one_annotation(fake)
    fake.annotate(1, annotation(11, 1, 2, "neg"))  # its event was lost
    fake.annotate(1, annotation(12, 1, 3, "neg"))
    before = reads(fake)
    events(fake, monitor, fake.payload(1, 12))
    assert reads(fake) == before + 1  # the counts do not add up: read
    assert fake.meta(1)["agreement"]["n_annotations"] == 3


def test_a_write_whose_answer_holds_other_annotations_is_read_and_written_again(fake):
    monitor = with_one_annotation(fake)
    fake.annotate(1, annotation(11, 1, 2, "neg"))
    said = fake.payload(1, 11)
    fake.annotate(1, annotation(10, 1, 1, "neg", second="40"))  # edited after the event, its own event lost
    writer = events(fake, monitor, said)
    assert writer.outcomes[READ_AGAIN] == 1 and writer.outcomes["written"] == 1
    assert monitor.counted(READ_AGAIN) == 1
    assert written(fake, 1) == as_read_now(fake, 1)
    assert monitor.stale_tasks() == [] and full_pass(fake, monitor, incremental=True).stale == []


def test_an_event_that_asks_for_no_write_is_confirmed_by_a_read(fake):
    monitor = with_one_annotation(fake)
    fake.annotate(1, annotation(10, 1, 1, "pos", second="09"))  # saved again as it was
    before = reads(fake)
    writer = events(fake, monitor, fake.payload(1, 10, "ANNOTATION_UPDATED"))
    assert dict(writer.outcomes) == {"unchanged": 1} and reads(fake) == before + 1 and fake.writes == [1]


def test_a_deletion_among_a_task_s_events_makes_its_refresh_a_read(fake):
    monitor = with_one_annotation(fake)
    fake.annotate(1, annotation(11, 1, 2, "neg"))
    said = fake.payload(1, 11)  # adds up with annotation 10 as kept: without the deletion, it would stand for a read
    fake.delete_annotation(10)
    before = reads(fake)
    events(fake, monitor, said, {"action": "ANNOTATIONS_DELETED", "project": {"id": 1}, "annotations": [{"id": 10}]})
    assert reads(fake) == before + 1  # one read, before the write: no write from the events to be read again
    assert fake.meta(1)["agreement"]["n_annotations"] == 1 and fake.writes == [1, 1]


def test_a_dry_run_reads_what_it_would_write(fake):
    monitor = read(fake)
    fake.annotate(1, annotation(10, 1, 1, "pos"))
    before = reads(fake)
    writer = events(fake, monitor, fake.payload(1, 10), dry_run=True)
    assert reads(fake) == before + 1 and fake.writes == [] and dict(writer.outcomes) == {"written": 1}


def test_a_task_with_predictions_is_written_from_its_event_once_a_pass_kept_them_and_read_otherwise(fake):
    for task in (2, 3):
        fake.store[task]["predictions"] = [{"id": task, "model_version": "m", "result": []}]
    monitor = read(fake)  # keeps the unannotated tasks with predictions, while there is room
    monitor._recent.drop(3)  # as if there had been none left for it
    fake.annotate(2, annotation(20, 2, 1, "pos"))
    fake.annotate(3, annotation(30, 3, 1, "pos"))
    before = reads(fake)
    events(fake, monitor, fake.payload(2, 20))
    assert reads(fake) == before and fake.meta(2)["agreement"]["n_annotations"] == 1
    events(fake, monitor, fake.payload(3, 30))
    assert reads(fake) == before + 1 and fake.meta(3)["agreement"]["n_annotations"] == 1


def test_the_project_s_token_is_never_kept():
    fake = FakeLabelStudio([{"id": 1, "meta": {}, "annotations": [annotation(10, 1, 1, "pos")]}])
    event = parse_event(fake.payload(1, 10))
    assert "project-token-never-kept" not in repr(event) and "project-token-never-kept" not in repr(event.saved)
    assert [(s.task, s.annotation["id"]) for s in event.saved] == [(1, 10)]


@pytest.mark.parametrize("change", [
    {"task": None}, {"annotation": None}, {"task": {"id": 2}},
    {"task": {"id": 1, "updated_at": "2026-01-01T00:00:00Z", "total_annotations": -1, "cancelled_annotations": 0,
              "total_predictions": 0}},
    {"task": {"id": 1, "updated_at": "2026-01-01T00:00:00Z", "total_annotations": True, "cancelled_annotations": 0,
              "total_predictions": 0}}])
def test_a_payload_out_of_label_studio_s_shape_says_nothing_and_its_task_is_read(change):
    fake = FakeLabelStudio([{"id": 1, "meta": {}, "annotations": [annotation(10, 1, 1, "pos")]}])
    payload = {**fake.payload(1, 10), **change}
    if change.get("annotation", 0) is None:
        payload["annotation"] = {"id": 10, "task": 1}
    event = parse_event(payload)
    assert event.tasks == (1,) and event.saved == ()


def test_bulk_creates_say_nothing():
    fake = FakeLabelStudio([{"id": 1, "meta": {}, "annotations": [annotation(10, 1, 1, "pos")]}])
    payload = fake.payload(1, 10)
    event = parse_event({**payload, "action": "ANNOTATIONS_CREATED", "annotation": [payload["annotation"]]})
    assert event.tasks == (1,) and event.saved == ()


def _saved(annotation_id, second, *, total=1, task_second="50"):
    fields = {"id": 1, "updated_at": f"2026-01-01T00:00:{task_second}Z", "meta": {"from": "event"}, "data": {},
              "total_annotations": total, "cancelled_annotations": 0, "total_predictions": 0}
    return SavedAnnotation(1, {"id": annotation_id, "updated_at": f"2026-01-01T00:00:{second}Z", "result": []},
                           fields)


def test_an_older_event_never_replaces_a_newer_read_of_its_annotation():
    last = {"annotations": [{"id": 7, "updated_at": "2026-01-01T00:00:30Z", "result": ["newer"]}],
            "predictions": [], "meta": None, "updated_at": None}
    assert provisional_read([_saved(7, "10")], last)["annotations"][0]["result"] == ["newer"]
    assert provisional_read([_saved(7, "40")], last)["annotations"][0]["result"] == []


def test_the_meta_is_the_newer_of_the_event_s_and_the_last_read_s():
    last = {"annotations": [], "predictions": [], "meta": {"from": "write"}, "updated_at": "2026-01-01T00:00:55Z"}
    assert provisional_read([_saved(7, "10")], last)["meta"] == {"from": "write"}
    assert provisional_read([_saved(7, "10", task_second="59")], last)["meta"] == {"from": "event"}


def test_the_newest_event_s_counts_decide():
    last = {"annotations": [], "predictions": [], "meta": None, "updated_at": None}
    assert provisional_read([_saved(7, "10", total=1, task_second="20"), _saved(8, "11", total=2)], last) is not None
    assert provisional_read([_saved(8, "11", total=2), _saved(7, "10", total=1, task_second="20")], last) is not None
    assert provisional_read([_saved(7, "10", total=2)], last) is None
    assert provisional_read([], last) is None


def test_recent_tasks_stay_within_their_bound_dropping_the_oldest():
    recent = RecentTasks(most_bytes=400)
    for task in range(1, 11):
        recent.keep({"id": task, "annotations": [{"id": task, "result": ["x" * 20]}], "predictions": [],
                     "meta": {}, "updated_at": "2026-01-01T00:00:00Z"})
    assert 0 < recent.bytes <= 400 and recent.last_read(10) is not None and recent.last_read(1) is None
    recent.keep({"id": 10, "annotations": None})  # a task of no shape is dropped
    assert recent.last_read(10) is None
    recent.keep({"id": 11, "annotations": [], "predictions": [], "meta": {"x": "y" * 1000}})  # over the bound alone
    assert recent.last_read(11) is None
    kept = len(recent)
    recent.keep({"id": 12, "annotations": [], "predictions": [], "meta": {"x": "y" * 300}}, if_room=True)  # no room
    assert 12 not in recent and len(recent) == kept


def test_a_forged_event_with_a_real_annotation_s_stamp_is_read_over(fake):
    # what the write's answer holds is compared whole, not by id and updated_at alone
    monitor = read(fake)
    fake.annotate(1, annotation(10, 1, 1, "pos"))
    forged = fake.payload(1, 10)
    forged["annotation"]["result"][0]["value"]["choices"] = ["neg"]
    writer = events(fake, monitor, forged)
    assert dict(writer.outcomes) == {READ_AGAIN: 1, "written": 1}
    assert written(fake, 1) == as_read_now(fake, 1)
    assert written(fake, 1)["controls"]["sentiment"]["consensus"]["label"] == "pos"


def test_a_prediction_changed_since_its_task_was_kept_makes_the_write_read_again(fake):
    fake.store[2]["predictions"] = [{"id": 5, "model_version": "m", "result": [], "created_at": "2026-01-01"}]
    monitor = read(fake)
    fake.store[2]["predictions"][0]["result"] = [
        {"from_name": "sentiment", "type": "choices", "value": {"choices": ["neg"]}}]  # no event tells of it
    fake.annotate(2, annotation(20, 2, 1, "pos"))
    writer = events(fake, monitor, fake.payload(2, 20))
    assert dict(writer.outcomes) == {READ_AGAIN: 1, "written": 1}
    assert written(fake, 2) == as_read_now(fake, 2) and monitor.stale_tasks() == []


def test_a_forged_event_that_leaves_out_a_field_is_read_over(fake):
    # updated_by left out says "imported", given as null says "made in the app": told apart
    monitor = read(fake)
    fake.annotate(1, {**annotation(10, 1, 1, "pos"), "updated_by": 1})
    forged = fake.payload(1, 10)
    del forged["annotation"]["updated_by"]
    writer = events(fake, monitor, forged)
    assert writer.outcomes[READ_AGAIN] == 1 and written(fake, 1) == as_read_now(fake, 1)


def test_an_event_naming_another_project_s_task_fields_is_read_not_taken(fake):
    monitor = read(fake)
    fake.annotate(1, annotation(10, 1, 1, "pos"))
    forged = fake.payload(1, 10)
    forged["task"]["project"] = 999
    before = reads(fake)
    writer = events(fake, monitor, forged)
    assert dict(writer.outcomes) == {"written": 1} and reads(fake) == before + 1
    assert 1 in monitor.state.tasks and written(fake, 1) == as_read_now(fake, 1)


def test_a_failed_write_from_an_event_is_retried_from_a_read(fake):
    monitor = read(fake)
    fake.annotate(1, annotation(10, 1, 1, "pos"))
    errors = iter([RuntimeError("once")])
    fake.fail["update_meta"] = lambda: next(errors, None)
    before = reads(fake)
    writer = TaskWriter(fake, {1: monitor}, workers=1, coalesce_seconds=0.01, retry_delays=(0.01,))
    event = parse_event(fake.payload(1, 10))
    monitor.hold(event, {1})
    writer.request(1, {1}, since=0.0)
    writer.start()
    try:
        assert writer.wait_idle(10)
    finally:
        writer.stop()
    assert dict(writer.outcomes) == {"failed": 1, "written": 1} and reads(fake) == before + 1
    assert written(fake, 1) == as_read_now(fake, 1)


def test_events_older_than_fresh_for_are_read_in_one_request_before_their_writes(fake, monkeypatch):
    import plugin.keeper.event_path as event_path

    class TenSecondsAgo:
        @staticmethod
        def monotonic():
            return time.monotonic() - 10.0

    monitor = read(fake)
    for task in (1, 2, 3):
        fake.annotate(task, annotation(10 * task, task, 1, "pos"))
    monkeypatch.setattr(event_path, "time", TenSecondsAgo)  # each event came 10 s ago: its meta too old to merge into
    before = fake.calls["tasks_by_id"], fake.calls["task"]
    events(fake, monitor, *(fake.payload(task, 10 * task) for task in (1, 2, 3)), ago=10.0)
    assert (fake.calls["tasks_by_id"], fake.calls["task"]) == (before[0] + 1, before[1])  # the three in one request
    assert all(written(fake, task) == as_read_now(fake, task) for task in (1, 2, 3))


def test_too_many_events_on_one_task_or_an_unread_project_make_a_read(fake):
    monitor = read(fake)
    for n in range(9):
        fake.annotate(1, annotation(10, 1, 1, "pos", second=f"{n:02d}"))
    payloads = [fake.payload(1, 10, "ANNOTATION_UPDATED")] * 9
    before = reads(fake)
    events(fake, monitor, *payloads)
    assert reads(fake) == before + 1
    unread = ProjectMonitor(1, mapping=MappingOptions(), scoring=ScoringOptions(n_resamples=20))
    unread.hold(parse_event(fake.payload(1, 10)), {1})
    assert unread._said == {1: None}


def test_an_event_that_needs_no_read_is_refreshed_alone_and_those_that_need_one_share_it(monkeypatch):
    fake = FakeLabelStudio([{"id": t, "meta": {}, "annotations": []} for t in (1, 2, 3, 4)])
    monitor = read(fake)
    for task in (1, 2, 3, 4):
        fake.annotate(task, annotation(10 * task, task, 1, "pos"))
    batches = []
    refresh = writer_module.refresh_tasks

    def recorded(client, monitor, tasks, **options):
        batches.append(sorted(tasks))
        return refresh(client, monitor, tasks, **options)

    monkeypatch.setattr(writer_module, "refresh_tasks", recorded)
    for task in (1, 2):
        monitor.hold(parse_event(fake.payload(task, 10 * task)), {task})
    assert [monitor.needs_read(task) for task in (1, 2, 3, 4)] == [False, False, True, True]
    before = reads(fake)
    writer = TaskWriter(fake, {1: monitor}, workers=1, coalesce_seconds=0.05)
    writer.request(1, [1, 2, 3, 4], since=time.monotonic(), alone=[1, 2])
    writer.start()
    try:
        assert writer.wait_idle(10)
    finally:
        writer.stop()
    assert sorted(batches) == [[1], [2], [3, 4]] and reads(fake) == before + 1
    assert dict(writer.outcomes) == {"written": 4} and sorted(fake.writes) == [1, 2, 3, 4]
