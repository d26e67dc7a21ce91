"""A pass reads in full only the tasks whose version the state has not seen (plugin.state.stamps)."""

import pickle

from plugin.keeper.cycle import run_cycle
from plugin.keeper.monitor import ProjectMonitor
from plugin.keeper.passes import refresh_tasks
from plugin.state.stamps import Stamps, answer_holds_read
from plugin.mapping.labelconfig import parse_label_config
from plugin.settings import MappingOptions, ReviewOptions, ScoringOptions
from plugin.state.project import ProjectState
from tests.plugin.fake_label_studio import FakeLabelStudio, annotation

STAMP = "2026-01-01T00:00:00Z"
CHOICES = ('<View><Text name="t" value="$text"/><Choices name="sentiment" toName="t">'
           '<Choice value="pos"/><Choice value="neg"/></Choices></View>')


def _task(identifier, *annotations, updated_at=STAMP):
    return {"id": identifier, "updated_at": updated_at, "annotations": list(annotations)}


def test_a_write_s_answer_with_the_annotations_read_is_seen_and_one_with_another_is_not():
    first = {"id": 5, "updated_at": "2026-01-01T00:00:01Z"}
    read = _task(1, first)
    stamps = Stamps()
    stamps.saw(read)
    assert stamps.unseen([{"id": 1, "updated_at": STAMP}]) == []
    answer = _task(1, first, updated_at="2026-01-01T00:01:00Z")
    assert answer_holds_read(answer, read)
    stamps.saw(answer)
    assert stamps.unseen([{"id": 1, "updated_at": "2026-01-01T00:01:00.000000Z"}]) == []
    # an annotation saved between the read and the write: the write's stamp would hide it
    late = {"id": 6, "updated_at": "2026-01-01T00:00:30Z"}
    assert not answer_holds_read(_task(1, first, late, updated_at="2026-01-01T00:02:00Z"), read)
    # an annotation edited in between (same id, a later updated_at) is a change too
    edited = {"id": 5, "updated_at": "2026-01-01T00:00:40Z"}
    assert not answer_holds_read(_task(1, edited, updated_at="2026-01-01T00:03:00Z"), read)


def test_an_answer_without_annotations_or_a_stamp_never_holds_the_read():
    read = _task(1)
    assert not answer_holds_read({"id": 1, "updated_at": STAMP}, read)
    assert not answer_holds_read({"id": 1, "annotations": []}, read)
    assert not answer_holds_read({"id": "1", "annotations": [], "updated_at": STAMP}, read)
    stamps = Stamps()
    stamps.saw({"id": 1})  # a read without a stamp is never seen
    assert stamps.unseen([{"id": 1, "updated_at": STAMP}]) == [1] and len(stamps) == 0


def test_a_state_keeps_the_stamp_of_each_task_it_holds_and_saves_them_with_it():
    state = ProjectState(1, parse_label_config(CHOICES), mapping=MappingOptions(), scoring=ScoringOptions())
    state.set_task(_task(1, annotation(5, 1, 1, "pos"), updated_at="2026-01-01T00:00:00Z"))
    state.set_task(_task(2, updated_at="2026-01-01T00:00:00Z"))
    state.set_task({"id": 3, "project": 2, "updated_at": STAMP})  # another project's: refused, no stamp
    listed = [{"id": t, "updated_at": STAMP} for t in (1, 2, 3)]
    assert state.stamps.unseen(listed) == [3]
    state.remove_task(2)
    assert state.stamps.unseen(listed) == [2, 3]
    restored = pickle.loads(pickle.dumps(state))
    assert restored.stamps.unseen(listed) == [2, 3]
    assert restored.stamps.unseen([{"id": 1, "updated_at": "2026-01-01T00:00:01Z"}]) == [1]


def _fake():
    return FakeLabelStudio([{"id": t, "meta": {}, "annotations": [
        annotation(2 * t, t, 1, "pos"), annotation(2 * t + 1, t, 2, "neg" if t % 3 else "pos")]} for t in range(1, 21)])


def _monitor():
    return ProjectMonitor(1, mapping=MappingOptions(), scoring=ScoringOptions(n_resamples=20), review=ReviewOptions())


def _write_all(fake, monitor):
    return lambda stale: refresh_tasks(fake, monitor, list(stale))


def _serve_s_pass(fake, monitor):
    """A pass of serve after its first: a read of the changed tasks, its stale tasks written."""
    monitor.passes += 1
    return run_cycle(fake, monitor, full_pass_every=12, write=_write_all(fake, monitor))


def test_a_pass_after_its_own_writes_lists_them_and_reads_none_in_full():
    fake, monitor = _fake(), _monitor()
    first = run_cycle(fake, monitor, write=_write_all(fake, monitor))
    assert len(first.read.stale) == 20 and len(fake.writes) == 20
    fake.calls.clear()
    again = _serve_s_pass(fake, monitor)
    # every task was written since the first read, so each is listed; the state holds each as written
    assert again.read.kind == "changed" and again.read.n_listed == 20 and again.read.n_tasks == 0
    assert again.read.stale == [] and fake.calls["tasks_by_id"] == 0 and len(fake.writes) == 20


def test_an_annotation_is_read_in_full_at_the_next_pass_and_only_its_task():
    fake, monitor = _fake(), _monitor()
    run_cycle(fake, monitor, write=_write_all(fake, monitor))
    _serve_s_pass(fake, monitor)
    fake.annotate(7, annotation(99, 7, 3, "neu"))  # no event: the pass alone finds it
    fake.calls.clear()
    third = _serve_s_pass(fake, monitor)
    # one task read in full by the pass (the others' alphas drift in a project this small: they are rewritten)
    assert third.read.n_tasks == 1 and 7 in third.read.stale
    assert fake.meta(7)["agreement"]["n_annotations"] == 3


def test_an_annotation_saved_between_a_read_and_its_write_is_read_at_the_next_pass():
    fake, monitor = _fake(), _monitor()
    run_cycle(fake, monitor)  # read, nothing written yet
    original = fake.update_meta

    def update_meta_after_an_annotation(task, meta, **options):
        if task == 4:  # an annotator submits while the write is on its way: Label Studio's answer holds it
            fake.annotate(4, annotation(98, 4, 3, "neu"))
        return original(task, meta, **options)

    fake.update_meta = update_meta_after_an_annotation
    refresh_tasks(fake, monitor, [4])
    fake.update_meta = original
    assert fake.meta(4)["agreement"]["n_annotations"] == 2  # written from the read before the annotation
    second = _serve_s_pass(fake, monitor)
    assert second.read.n_tasks == 1 and 4 in second.read.stale
    assert fake.meta(4)["agreement"]["n_annotations"] == 3

