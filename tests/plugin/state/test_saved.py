"""A project's state saved to its file and read back is the same state; a file that cannot be trusted is refused."""

import copy
import os
import pickle
import posix
import shutil
import subprocess
import sys
import threading
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path

import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from plugin.demo import CONFIG, simulated_export
from plugin.mapping.labelconfig import parse_label_config
from plugin.settings import MappingOptions, ReviewOptions, ScoringOptions
from plugin.state import saved as saved_state
from plugin.state.project import ProjectState
from plugin.state.saved import MAGIC, SavedStateError, pickled, read_state, state_path, write_state
from tests.profiles import examples

SECRET = "s3cret-for-the-state-file-tests"
SOURCE = "http://label-studio.test:8080"
WATERMARK = datetime(2026, 11, 26, 12, 30, 5, 123456, tzinfo=UTC)
SCORING = ScoringOptions(n_resamples=20)


def demo_state(n=40, seed=3, project=7):
    tasks = simulated_export(n, seed=seed)
    state = ProjectState(project, parse_label_config(CONFIG), mapping=MappingOptions(), scoring=SCORING)
    state.load(copy.deepcopy(tasks))
    return state, tasks


def saved(tmp_path, state, secret=SECRET, source=SOURCE):
    return write_state(pickled(state, watermark=WATERMARK), tmp_path, secret=secret, saved_at="2026-11-26T12:31:00Z",
                       source=source)


def read(directory, project=7, secret=SECRET, source=SOURCE):
    return read_state(directory, project, secret=secret, source=source)


def same_scores(one, other):
    a, b = one.scores(), other.scores()
    assert a.tasks == b.tasks
    assert {n: c.spa for n, c in a.controls.items()} == {n: c.spa for n, c in b.controls.items()}
    pd.testing.assert_frame_equal(one.annotation_times(), other.annotation_times())


def test_a_state_read_back_scores_and_diffs_as_the_state_saved(tmp_path):
    state, _ = demo_state()
    size = saved(tmp_path, state)
    path = state_path(tmp_path, 7)
    assert path.stat().st_size == size and (path.stat().st_mode & 0o777) == 0o600
    assert not [p for p in tmp_path.iterdir() if p != path]  # no temporary file left
    restored = read(tmp_path)
    assert restored.watermark == WATERMARK and restored.saved_at == "2026-11-26T12:31:00Z"
    assert restored.n_bytes == size and len(restored.state.tasks) == 40
    assert restored.state.stale_tasks() == state.stale_tasks()
    same_scores(restored.state, state)
    assert read(tmp_path, 8) is None  # no file: nothing to restore


@settings(max_examples=examples(15), deadline=None)
@given(st.randoms(use_true_random=False), st.booleans())
def test_a_restored_state_goes_on_as_the_state_it_was_saved_from(tmp_path_factory, rnd, scored_first):
    """Whatever the saved state held (its pass memo, its span scores), the same reads after it give the same
    answers as on the state that never left memory."""
    state, tasks = demo_state(n=12, seed=rnd.randrange(100))
    if scored_first:
        state.scores()
        state.stale_tasks()
    directory = tmp_path_factory.mktemp("states")
    saved(directory, state)
    restored = read(directory).state
    review = ReviewOptions(mirror_to_data=rnd.random() < 0.5)
    for _ in range(rnd.randint(1, 6)):
        task = copy.deepcopy(rnd.choice(tasks))
        if rnd.random() < 0.5 and task["annotations"]:
            task["annotations"].pop(rnd.randrange(len(task["annotations"])))
        if rnd.random() < 0.3:
            task["meta"] = {"agreement": {"score": rnd.random()}}
        if rnd.random() < 0.1:
            state.remove_task(task["id"])
            restored.remove_task(task["id"])
        else:
            state.set_task(copy.deepcopy(task))
            restored.set_task(copy.deepcopy(task))
        assert restored.stale_tasks(review=review) == state.stale_tasks(review=review)
    assert restored.changes == state.changes
    same_scores(restored, state)


def _refused(tmp_path, match, secret=SECRET):
    with pytest.raises(SavedStateError, match=match) as raised:
        read(tmp_path, secret=secret)
    assert "\n" not in str(raised.value)


def test_a_file_signed_with_another_secret_or_altered_is_refused_before_anything_is_unpickled(tmp_path, monkeypatch):
    state, _ = demo_state(n=5)
    saved(tmp_path, state)
    path = state_path(tmp_path, 7)
    data = path.read_bytes()
    monkeypatch.setattr(pickle, "loads", lambda *_: pytest.fail("an unsigned body was unpickled"))
    _refused(tmp_path, "not signed with this service's secret", secret="another-secret-of-the-service")
    for at in (len(data) - 1, len(data) // 2, len(MAGIC) + 3):  # the body, the middle, the header
        altered = bytearray(data)
        altered[at] ^= 0x01
        path.write_bytes(bytes(altered))
        _refused(tmp_path, "not signed with this service's secret, or was altered")
    path.write_bytes(data[:-100])
    _refused(tmp_path, "altered or cut short")
    path.write_bytes(data[:len(MAGIC) + 10])
    _refused(tmp_path, "cut short")
    path.write_bytes(b"\x80\x05garbage")
    _refused(tmp_path, "is not a saved project state")


def test_a_file_of_other_code_or_of_another_project_is_refused(tmp_path, monkeypatch):
    state, _ = demo_state(n=5)
    real = saved_state.code_digest()
    monkeypatch.setattr(saved_state, "code_digest", lambda: "0" * 64)
    saved(tmp_path, state)
    monkeypatch.setattr(saved_state, "code_digest", lambda: real)
    _refused(tmp_path, "saved by another version of ls-agreement")
    saved(tmp_path, state)
    os.replace(state_path(tmp_path, 7), state_path(tmp_path, 9))
    with pytest.raises(SavedStateError, match="holds project 7, not 9"):
        read(tmp_path, 9)


def test_the_code_digest_follows_the_source(tmp_path):
    installed = saved_state.code_digest()
    root = Path(saved_state.__file__).resolve().parents[2]
    for package in ("plugin", "agreement"):
        shutil.copytree(root / package, tmp_path / package, ignore=shutil.ignore_patterns("__pycache__"))
    assert saved_state.code_digest(tmp_path) == installed
    mapping = tmp_path / "plugin" / "mapping" / "choices.py"
    mapping.write_text(mapping.read_text() + "\n# a change\n")
    assert saved_state.code_digest(tmp_path) != installed


def test_a_file_of_another_label_studio_is_refused(tmp_path):
    state, _ = demo_state(n=3)
    saved(tmp_path, state, source="http://another-label-studio:8080")
    _refused(tmp_path, r"read from another Label Studio \(http://another-label-studio:8080\)")


class Planted:
    """What a file signed by someone who learnt the secret could hold: a call of anything on unpickling."""

    def __reduce__(self):
        return (os.system, ("echo planted",))


def test_a_signed_file_that_names_anything_but_a_state_s_classes_is_refused(tmp_path, monkeypatch):
    state, _ = demo_state(n=3)
    monkeypatch.setattr(state, "refused", Planted(), raising=False)
    saved(tmp_path, state)  # signed with the service's secret
    calls = []
    monkeypatch.setattr(posix, "system", calls.append)  # what a plain pickle.loads would call
    _refused(tmp_path, "cannot be read back .*posix.system is not part of a project state")
    assert calls == []


def test_a_save_that_fails_leaves_the_previous_file_and_no_part(tmp_path, monkeypatch):
    state, tasks = demo_state(n=5)
    saved(tmp_path, state)
    before = state_path(tmp_path, 7).read_bytes()
    state.remove_task(tasks[0]["id"])

    def full_disk(_):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "fsync", full_disk)
    with pytest.raises(OSError, match="No space left"):
        saved(tmp_path, state)
    assert state_path(tmp_path, 7).read_bytes() == before
    assert [p.name for p in tmp_path.iterdir()] == ["project-7.state"]


def test_a_killed_save_s_leftover_is_removed_by_the_next_save(tmp_path):
    state, _ = demo_state(n=3)
    leftover = tmp_path / ".project-7.state.k1ll3d.part"
    leftover.write_bytes(b"half a state")
    other = tmp_path / ".project-70.state.x.part"  # another project's save, perhaps under way
    other.write_bytes(b"")
    saved(tmp_path, state)
    assert sorted(p.name for p in tmp_path.iterdir()) == [other.name, "project-7.state"]


@contextmanager
def another_save_under_way(directory):
    """Another process holding the directory's lock, as a save under way does; it lets go when told, or is killed."""
    script = (f"import fcntl, os, sys; fd = os.open({str(directory)!r}, os.O_RDONLY); "
              "fcntl.flock(fd, fcntl.LOCK_EX); print('locked', flush=True); sys.stdin.readline()")
    other = subprocess.Popen([sys.executable, "-c", script], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        assert other.stdout.readline().strip() == "locked"
        yield other
    finally:
        other.kill()
        other.wait()


def test_a_save_waits_for_another_process_s_save_under_way_and_never_removes_its_file(tmp_path):
    """``serve``, ``sync`` and ``report`` may share a directory: a save under way in another process (here, the lock
    it holds and its file) is waited for, then the leftover of a save that died is removed."""
    state, _ = demo_state(n=3)
    under_way = tmp_path / ".project-7.state.0th3r.part"
    under_way.write_bytes(b"half a state")
    with another_save_under_way(tmp_path) as other:
        saving = threading.Thread(target=saved, args=(tmp_path, state))
        saving.start()
        saving.join(0.5)
        assert saving.is_alive() and under_way.exists()  # waits: the other's file is left alone
        other.stdin.write("done\n")
        other.stdin.flush()
        assert other.wait(10) == 0
        saving.join(10)
        assert not saving.is_alive()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["project-7.state"]  # the other died: its file goes
    same_scores(read(tmp_path).state, state)


def test_a_save_gives_up_on_a_directory_another_save_holds_too_long(tmp_path):
    state, _ = demo_state(n=3)
    saved(tmp_path, state)
    before = state_path(tmp_path, 7).read_bytes()
    gave_up = r"^Another save has held the state directory for 0 s; this one gave up \(the previous file stays\)\.$"
    # a process stopped while it saves: this one fails in one line
    with another_save_under_way(tmp_path), pytest.raises(OSError, match=gave_up):
        write_state(pickled(state, watermark=WATERMARK), tmp_path, secret=SECRET, saved_at="now", source=SOURCE,
                    lock_wait=0.2)
    assert state_path(tmp_path, 7).read_bytes() == before and not list(tmp_path.glob(".*.part"))


def test_only_a_label_studio_project_s_state_is_saved():
    state, _ = demo_state(n=3, project=None)
    with pytest.raises(ValueError, match="read from an export"):
        pickled(state, watermark=None)


def test_a_watermark_of_none_reads_back_as_none(tmp_path):
    state, _ = demo_state(n=3)
    write_state(pickled(state, watermark=None), tmp_path, secret=SECRET, saved_at="now", source=SOURCE)
    assert read(tmp_path).watermark is None
