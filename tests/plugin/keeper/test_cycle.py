"""The project cycle against an in-memory Label Studio: sync's way and serve's way give one answer."""

import pytest

from plugin.keeper.cycle import incremental, run_cycle
from plugin.keeper.monitor import ProjectMonitor
from plugin.keeper.tabs import below_ground_truth
from plugin.settings import MappingOptions, ReviewOptions, ScoringOptions
from plugin.state.saved import StateFiles
from tests.plugin.fake_label_studio import SECRET, FakeLabelStudio, annotation

SCORING = ScoringOptions(n_resamples=50, min_gt_accuracy=0.7, min_gt_items=2)


def _truth(identifier, task, annotator, choice):
    return {**annotation(identifier, task, annotator, choice), "ground_truth": True}


@pytest.fixture
def fake():
    """30 tasks: annotators 1 and 2 on each, 2 often wrong; annotator 3's ground truth on every third task."""
    tasks = []
    for t in range(1, 31):
        entries = [annotation(3 * t, t, 1, "pos"), annotation(3 * t + 1, t, 2, "neg" if t % 2 else "pos")]
        if t % 3 == 0:
            entries.append(_truth(3 * t + 2, t, 3, "pos"))
        tasks.append({"id": t, "meta": {}, "annotations": entries})
    return FakeLabelStudio(tasks)


def _monitor():
    return ProjectMonitor(1, mapping=MappingOptions(), scoring=SCORING, review=ReviewOptions())


def test_sync_s_cycle_and_serve_s_find_the_same_stale_tasks_references_and_blocks(fake):
    written = {}
    as_sync, as_serve = _monitor(), _monitor()
    sync = run_cycle(fake, as_sync, write=lambda stale: written.setdefault("sync", list(stale)), tabs=True,
                     review_tab=True, people=fake.users())
    serve = run_cycle(fake, as_serve, full_pass_every=12, write=lambda stale: written.setdefault("serve", list(stale)),
                      tabs=True, people=fake.users())
    assert written["sync"] == written["serve"] == sync.read.stale == serve.read.stale == list(range(1, 31))
    assert sync.references == serve.references and sync.references["sentiment"]["ground_truth"]["below"] == ["2"]
    assert dict(as_sync.scores().tasks.items()) == dict(as_serve.scores().tasks.items())
    assert below_ground_truth(sync.references) == ["2"]
    assert fake.views[(1, "Below ground truth")]["filters"]["items"][0]["value"] == 2  # the tab lists annotator 2's
    assert (1, "Low agreement") in fake.views


def test_a_cycle_without_people_publishes_nothing_and_writes_nothing_without_a_writer(fake):
    monitor = _monitor()
    cycle = run_cycle(fake, monitor)
    assert cycle.references == {} and monitor.passes == 0 and fake.writes == []
    assert len(cycle.read.stale) == 30 and monitor.state is not None
    assert not hasattr(fake, "views")  # no tab unless asked


def test_a_second_cycle_reads_only_the_changed_tasks_after_a_restore_and_a_failed_save_comes_back(fake, tmp_path):
    files = StateFiles(tmp_path, secret=SECRET, source="http://ls.test")
    first = run_cycle(fake, _monitor(), files=files, people={})
    assert first.restore == "missing" and first.read.kind == "full" and first.errors == []
    fake.annotate(5, annotation(500, 5, 3, "neg"))
    again = _monitor()
    second = run_cycle(fake, again, files=files, people={})
    assert second.restore == "restored" and second.refused is None and second.read.kind == "changed"
    assert again.state is not None and again.state.tasks[5].n_annotations == 3
    (tmp_path / "blocked").mkdir()
    broken = StateFiles(tmp_path / "blocked" / "missing" / "deeper", secret=SECRET, source="http://ls.test")
    (tmp_path / "blocked" / "missing").write_text("a file where a directory should be")
    third = run_cycle(fake, _monitor(), files=broken, people={})
    assert [what for what, _ in third.errors] == ["state not saved"] and third.read.n_tasks == 30


@pytest.mark.parametrize(("passes", "restored", "every", "expected"), [
    (0, False, None, False), (0, True, None, True),  # sync: a restored state is read from
    (0, False, 12, False), (1, False, 12, True), (12, False, 12, False),  # serve: one full pass in twelve
    (0, True, 12, True), (0, True, 1, False), (5, False, 1, False),  # every pass full: a restore is not read from
])
def test_which_cycles_read_only_the_changed_tasks(passes, restored, every, expected):
    class Monitor:
        pass

    monitor = Monitor()
    monitor.passes, monitor.restored = passes, lambda: restored
    assert incremental(monitor, full_pass_every=every) is expected


def test_an_idle_project_s_passes_read_no_task_once_the_margin_below_its_last_change_is_read():
    # before, each pass read again every task changed in the minute before the watermark, however idle the project:
    # with the writes of a pass a second apart, all of them, every pass
    from plugin.keeper.passes import refresh_tasks

    fake = FakeLabelStudio([{"id": t, "meta": {}, "annotations": [annotation(3 * t, t, 1, "pos"),
                                                                  annotation(3 * t + 1, t, 2, "neg")]}
                            for t in range(1, 31)])
    fake.step = 1  # a second between two changes: a pass's writes all fall within the margin
    monitor = _monitor()

    def write(stale):
        refresh_tasks(fake, monitor, list(stale))

    reads = []
    for _ in range(6):
        fake.reads.clear()
        run_cycle(fake, monitor, full_pass_every=100, write=write, people={})
        reads.append(fake.reads[0])
    assert reads[0] == ("all", 30) and all(kind == "changed" for kind, _ in reads[1:])
    # the pass after the writes reads them (they moved updated_at), the next looks once below that watermark,
    # and then the project is idle: nothing is read
    assert reads[1][1] == 30 and [n for _, n in reads[3:]] == [0, 0, 0], reads
    fake.annotate(5, annotation(900, 5, 3, "neu"))
    fake.reads.clear()
    run_cycle(fake, monitor, full_pass_every=100, write=write, people={})
    assert fake.reads[0] == ("changed", 1) and "3" in monitor.state.tasks[5].annotators


def test_an_idle_pass_asks_label_studio_for_the_config_and_one_page_only(monkeypatch):
    # each request a pass of an idle project makes: its config (a changed one is re-mapped) and one page of the
    # tasks newest first (none newer than the last read), which also gives the task count (a lost deletion). Before,
    # also the count on its own and the "Below ground truth" tab, unchanged, set again (views listed, one updated).
    from plugin.keeper.passes import refresh_tasks

    fake = FakeLabelStudio([{"id": t, "meta": {}, "annotations": [annotation(3 * t, t, 1, "pos"),
                                                                  annotation(3 * t + 1, t, 2, "neg")]}
                            for t in range(1, 31)])
    fake.step = 1
    monitor = _monitor()

    def cycle():
        fake.calls.clear()
        fake.reads.clear()
        return run_cycle(fake, monitor, full_pass_every=100, write=lambda stale: refresh_tasks(fake, monitor, stale),
                         tabs=True, people={})

    first = cycle()
    assert first.read.kind == "full" and fake.calls["ensure_view"] == 1  # the tab, set once
    for _ in range(3):  # the writes read back, the margin below them looked into
        cycle()
    for _ in range(3):
        idle = cycle()
        assert idle.read.kind == "changed" and idle.read.n_tasks == 0 and idle.read.stale == []
        assert dict(fake.calls) == {"label_config": 1, "tasks": 1}, fake.calls
    # what an idle pass still notices: a task deleted unheard of (the page's count), a changed config, and who is
    # below ground truth (the tab, set again)
    with fake.lock:
        del fake.store[30]
    assert cycle().read.kind == "full" and len(monitor.state.tasks) == 29
    fake.configs[1] = fake.configs[1].replace('<Choice value="neu"/>', '<Choice value="neu"/><Choice value="mixed"/>')
    assert cycle().read.kind == "full" and "mixed" in str(monitor.controls()["sentiment"])
    for t in range(1, 30):
        fake.annotate(t, _truth(1000 + t, t, 3, "pos"))
    cycle()  # within TAB_SETTLE of the last update: the tab waits (who is below flaps while annotation goes on)
    assert fake.calls["ensure_view"] == 0 and fake.views[(1, "Below ground truth")]["filters"]["items"][0][
        "value"] == 0
    monkeypatch.setattr("plugin.keeper.cycle.TAB_SETTLE", 0.0)  # as TAB_SETTLE seconds later
    cycle()
    assert fake.calls["ensure_view"] == 1
    assert fake.views[(1, "Below ground truth")]["filters"]["items"][0]["value"] == 2
