"""The writer on an in-memory Label Studio: coalesced requests, retries, failures left to the pass, dry runs."""

import pytest

from plugin.keeper.monitor import ProjectMonitor
from plugin.keeper.passes import full_pass
from plugin.keeper.writer import TaskWriter
from plugin.settings import MappingOptions, ScoringOptions
from tests.plugin.fake_label_studio import FakeLabelStudio, annotation


@pytest.fixture
def fake():
    return FakeLabelStudio([{"id": t, "meta": {"keep": t}, "annotations": [annotation(10 * t, t, 1, "pos")]}
                            for t in (1, 2, 3)])


def read(fake):
    monitor = ProjectMonitor(1, mapping=MappingOptions(), scoring=ScoringOptions(n_resamples=20))
    full_pass(fake, monitor)
    return monitor


def run(fake, monitor, requests, **options):
    writer = TaskWriter(fake, {1: monitor}, workers=2, coalesce_seconds=0.05, **options)
    writer.start()
    try:
        for tasks in requests:
            writer.request(1, tasks)
        assert writer.wait_idle(10)
    finally:
        writer.stop()
    return writer


def test_requests_for_one_task_coalesce_into_one_write():
    fake = FakeLabelStudio([{"id": 1, "meta": {"keep": 1}, "annotations": [annotation(10, 1, 1, "pos")]}])
    monitor = read(fake)
    writer = run(fake, monitor, [[1], [1], [1]])
    assert fake.writes == [1]
    assert dict(writer.outcomes) == {"written": 1}
    assert monitor.counted("written") == 1 and monitor.failed() == []
    assert fake.meta(1)["keep"] == 1 and fake.meta(1)["agreement"]["n_annotations"] == 1


def test_a_second_request_after_the_write_finds_nothing_to_write(fake):
    monitor = read(fake)
    run(fake, monitor, [[1, 2, 3]])
    writer = run(fake, monitor, [[1, 2, 3]])
    assert sorted(fake.writes) == [1, 2, 3]
    assert dict(writer.outcomes) == {"unchanged": 3}
    assert (monitor.counted("written"), monitor.counted("unchanged")) == (3, 3)


def test_a_write_that_keeps_failing_is_retried_then_left_to_the_pass(fake):
    monitor = read(fake)
    fake.fail["update_meta"] = lambda: RuntimeError("boom")
    writer = run(fake, monitor, [[2]], retry_delays=(0.01, 0.01))
    assert writer.outcomes["failed"] == 3
    assert monitor.counted("refresh failed (will retry)") == 2 and monitor.counted("refresh failed") == 1
    assert monitor.failed() == [(2, "RuntimeError: boom")]
    assert 2 in monitor.stale_tasks()  # the next pass writes it
    del fake.fail["update_meta"]
    run(fake, monitor, [[2]])
    assert monitor.failed() == [] and fake.writes == [2]


def test_a_write_that_fails_once_succeeds_on_its_retry(fake):
    monitor = read(fake)
    errors = iter([RuntimeError("once")])
    fake.fail["update_meta"] = lambda: next(errors, None)
    writer = run(fake, monitor, [[3]], retry_delays=(0.01,))
    assert dict(writer.outcomes) == {"failed": 1, "written": 1}
    assert monitor.counted("refresh failed (will retry)") == 1 and monitor.failed() == []


def test_a_dry_run_counts_what_it_would_write_and_writes_nothing(fake):
    monitor = read(fake)
    writer = run(fake, monitor, [[1, 2, 3]], dry_run=True)
    assert fake.writes == [] and dict(writer.outcomes) == {"written": 3}


def test_requests_before_the_first_pass_are_deferred_to_it(fake):
    monitor = ProjectMonitor(1, mapping=MappingOptions(), scoring=ScoringOptions(n_resamples=20))
    writer = run(fake, monitor, [[1, 2]])
    assert dict(writer.outcomes) == {"deferred": 2} and fake.writes == []
    report = full_pass(fake, monitor)
    assert report.rechecked == 2 and report.stale == [1, 2, 3]


def test_a_deleted_task_is_gone_and_an_unknown_one_is_not_of_this_project(fake):
    monitor = read(fake)
    del fake.store[1]
    writer = run(fake, monitor, [[1, 99]])
    assert dict(writer.outcomes) == {"gone": 1, "not a task of this project": 1}
    assert 1 not in monitor.scores().tasks


def test_progress_moves_task_by_task_within_one_batch():
    # One batch of 30 tasks is read in one request; its progress must not sit at 0 until the batch ends.
    import threading
    import time

    fake = FakeLabelStudio([{"id": t, "meta": {}, "annotations": [annotation(10 * t, t, 1, "pos")]}
                            for t in range(1, 31)])
    monitor = read(fake)
    fake.fail["update_meta"] = lambda: time.sleep(0.02)  # a slow Label Studio, which never fails
    writer = TaskWriter(fake, {1: monitor}, workers=1, coalesce_seconds=0.0, batch=30)
    seen, done = set(), threading.Event()

    def watch():
        while not done.is_set():
            seen.add(writer.written_so_far)
            time.sleep(0.005)

    watcher = threading.Thread(target=watch)
    writer.start()
    watcher.start()
    try:
        writer.request(1, range(1, 31))
        assert writer.wait_idle(10)
    finally:
        done.set()
        watcher.join()
        writer.stop()
    assert writer.outcomes["written"] == 30 and writer.written_so_far == 30
    assert len({n for n in seen if 0 < n < 30}) >= 10  # intermediate values, not one jump


def _slow_writes(fake, seconds):
    """Label Studio taking ``seconds`` for each meta write; returns the most writes it served at once."""
    import threading
    import time

    original, lock, state = fake.update_meta, threading.Lock(), {"now": 0, "most": 0}

    def update_meta(task, meta, **options):
        with lock:
            state["now"] += 1
            state["most"] = max(state["most"], state["now"])
        try:
            time.sleep(seconds)
            return original(task, meta, **options)
        finally:
            with lock:
                state["now"] -= 1

    fake.update_meta = update_meta
    return state


def _many(n):
    return FakeLabelStudio([{"id": t, "meta": {}, "annotations": [annotation(10 * t, t, 1, "pos")]}
                            for t in range(1, n + 1)])


def _slow_writer(n, write_seconds):
    """``n`` tasks read, Label Studio taking ``write_seconds`` for each write, and a writer of one worker started."""
    fake = _many(n)
    monitor = read(fake)
    _slow_writes(fake, write_seconds)
    writer = TaskWriter(fake, {1: monitor}, workers=1, coalesce_seconds=0.0)
    writer.start()
    return fake, monitor, writer


def test_an_event_s_write_goes_before_the_rest_of_a_pass_s_batch():
    import time

    fake, monitor, writer = _slow_writer(12, 0.05)
    try:
        writer.request(1, range(1, 12), background=True)
        while len(fake.writes) < 2:  # the pass's first batch is being written
            time.sleep(0.005)
        writer.request(1, [12], since=time.monotonic())
        assert writer.wait_idle(10)
    finally:
        writer.stop()
    # the batch stopped before its next write: the event's task came within a write or two, not after the batch
    assert fake.writes.index(12) <= 4 and sorted(fake.writes) == list(range(1, 13))
    assert writer.outcomes == {"written": 12} and monitor.counted("written") == 12
    assert monitor.counted("left for events") == 0


def _pass_s_work(n, *, workers, write_seconds, after_an_event=True):
    """``n`` tasks written as a pass's work, each write taking ``write_seconds``; the fake, and most writes at once.

    ``after_an_event``: an event was served just before (annotation goes on), else none ever came (a lull).
    """
    import time

    fake = _many(n + 1)
    monitor = read(fake)
    writer = TaskWriter(fake, {1: monitor}, workers=workers, coalesce_seconds=0.0)
    writer.start()
    try:
        if after_an_event:
            writer.request(1, [n + 1], since=time.monotonic())
            assert writer.wait_idle(10)
        served = _slow_writes(fake, write_seconds)
        writer.request(1, range(1, n + 1), background=True)
        assert writer.wait_idle(30)
    finally:
        writer.stop()
    assert sorted(fake.writes) == list(range(1, n + 1 + after_an_event))
    return fake, served["most"]


def test_a_pass_s_work_takes_every_worker_but_one_while_events_come_and_every_worker_in_a_lull():
    assert _pass_s_work(40, workers=3, write_seconds=0.02)[1] == 2  # 0.8 s of writes, well within LULL
    assert _pass_s_work(40, workers=1, write_seconds=0.02)[1] == 1
    assert _pass_s_work(40, workers=3, write_seconds=0.02, after_an_event=False)[1] == 3


def test_a_pass_s_batches_shrink_when_label_studio_writes_slowly():
    # five or six writes fill FRESH_FOR: after a first batch of one, batches no longer, none read again before a write
    fake, _ = _pass_s_work(9, workers=1, write_seconds=0.5, after_an_event=False)
    assert fake.calls["task"] == 0


def test_events_batches_shrink_when_label_studio_writes_slowly():
    # a queue of events is read in batches Label Studio writes within FRESH_FOR (3 s: five writes of a little over
    # 0.5 s), so that none of its tasks is read a second time before its write, as a batch of all eight would
    import time

    fake, _, writer = _slow_writer(9, 0.5)
    try:
        writer.request(1, [1], since=time.monotonic())  # the first write tells the writer Label Studio's pace
        assert writer.wait_idle(10)
        writer.request(1, range(2, 10), since=time.monotonic())
        assert writer.wait_idle(20)
    finally:
        writer.stop()
    assert sorted(fake.writes) == list(range(1, 10)) and writer.outcomes == {"written": 9}
    assert fake.calls["task"] == 0  # no task read again before its write
    assert fake.calls["tasks_by_id"] == 3  # batches of 1, then 5 and 3
