"""The project state, updated one task at a time in any order, equals a batch read of the final tasks."""

import copy
import random
import warnings
from unittest import mock

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from agreement import UndefinedMeasureWarning
from plugin.mapping.labelconfig import parse_label_config
from plugin.settings import MappingOptions, ScoringOptions
from plugin.state import stale
from plugin.state.project import ProjectState
from tests.plugin.fake_label_studio import CONTROLS
from tests.profiles import examples

SCORING = ScoringOptions(n_resamples=20)
SPANS = ((0, 5), (6, 10), (3, 8))


def annotation(rnd, identifier, task, annotator, version):
    result = []
    if rnd.random() < 0.9:
        result.append({"from_name": "sentiment", "type": "choices", "value": {"choices": [rnd.choice(["pos", "neg", "neu"])]}})
    result.append({"from_name": "topics", "type": "choices",
                   "value": {"choices": rnd.sample(["a", "b"], rnd.randint(0, 2))}})
    for start, end in SPANS:
        if rnd.random() < 0.5:
            result.append({"from_name": "ner", "type": "labels",
                           "value": {"start": start, "end": end, "labels": [rnd.choice(["PER", "ORG"])]}})
    result.append({"from_name": "quality", "type": "rating", "value": {"rating": rnd.randint(1, 4)}})
    result.append({"from_name": "score", "type": "number", "value": {"number": float(rnd.randint(0, 3))}})
    return {"id": identifier, "task": task, "completed_by": annotator, "result": result,
            "was_cancelled": rnd.random() < 0.1, "ground_truth": False, "updated_at": f"2026-01-01T00:00:{version:02d}Z"}


def snapshot(task, annotations, meta=None):
    return {"id": task, "project": 1, "meta": meta if meta is not None else {},
            "annotations": [copy.deepcopy(a) for a in annotations.values() if a["task"] == task]}


@settings(max_examples=examples(40), deadline=None)
@given(st.randoms(use_true_random=False), st.integers(5, 40))
def test_state_updated_task_by_task_equals_a_batch_read(rnd, n_events):
    """Each change is followed, sooner or later, by a read of its task; reads may repeat and come in any order."""
    tasks = [1, 2, 3, 4]
    truth, reads = {}, []
    for version in range(n_events):
        if rnd.random() < 0.75 or not truth:  # create or update an annotation
            identifier = rnd.randint(1, 12)
            old = truth.get(identifier)
            task = old["task"] if old else rnd.choice(tasks)
            annotator = old["completed_by"] if old else rnd.randint(1, 4)
            truth[identifier] = annotation(rnd, identifier, task, annotator, version)
        else:  # delete one
            task = truth.pop(rnd.choice(sorted(truth)))["task"]
        reads.append(snapshot(task, truth))
    rnd.shuffle(reads)
    reads += [snapshot(t, truth) for t in tasks]  # the last read of every task is of the final truth
    live = ProjectState(1, CONTROLS, mapping=MappingOptions(), scoring=SCORING)
    live.load([snapshot(t, {}) for t in tasks])
    for read in reads + reads[: len(reads) // 3]:
        live.set_task(read)
    for read in reversed([snapshot(t, truth) for t in tasks]):
        live.set_task(read)

    final = [snapshot(t, truth) for t in tasks]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UndefinedMeasureWarning)
        batch = ProjectState.from_tasks(final, CONTROLS, mapping=MappingOptions(), scoring=SCORING).scores()
        summary = live.live_summary()
    assert live.task_scores() == batch.tasks
    assert live.skips().reasons == batch.skips.reasons
    for name, control in batch.controls.items():
        assert summary[name]["spa"] == pytest.approx(control.spa, abs=1e-6)
        assert summary[name]["alpha"] == pytest.approx(control.alpha, abs=1e-6)
        assert summary[name]["n_items"] == control.n_items
        if control.gwet is not None:  # AC1 from the running sums, AC2 from the few ordered categories
            assert summary[name]["gwet"]["value"] == pytest.approx(control.gwet["value"], abs=1e-6), name
        if control.spa_ci is not None:
            assert summary[name]["ci"] == pytest.approx(list(control.spa_ci), abs=1e-6)


def pos(identifier, annotator, choice="pos"):
    return {"id": identifier, "completed_by": annotator, "updated_at": "2026-01-01T00:00:02Z",
            "result": [{"from_name": "sentiment", "type": "choices", "value": {"choices": [choice]}}]}


def test_a_task_of_another_project_is_refused_and_counted():
    state = ProjectState(1, CONTROLS, mapping=MappingOptions(), scoring=SCORING)
    assert state.set_task({"id": 5, "project": 2, "annotations": [pos(1, 1)]}) is None
    assert state.set_task({"id": "x", "annotations": []}) is None
    assert 5 not in state.tasks and state.task_of_annotation(1) is None
    assert state.refused == {"task of another project (ignored)": 1, "task without an id": 1}


def test_ids_beyond_64_bits_are_refused_or_left_out_of_the_index():
    """A state holds ids as int64: a task whose id is larger is refused and counted, an annotation's is not
    indexed (its task is scored all the same)."""
    state = ProjectState(1, CONTROLS, mapping=MappingOptions(), scoring=SCORING)
    assert state.set_task({"id": 2**70, "annotations": [pos(1, 1)]}) is None
    assert state.refused == {"task without an id": 1} and state.task_of_annotation(1) is None
    assert state.set_task({"id": 6, "annotations": [pos(2**70, 1), pos(7, 2)]}) == 6
    assert state.task_of_annotation(7) == 6 and state.tasks[6].annotations == (7,)
    assert state.task_scores([6])[6].n_annotations == 2


def test_annotation_index_follows_the_task_as_read():
    state = ProjectState(1, CONTROLS, mapping=MappingOptions(), scoring=SCORING)
    state.set_task({"id": 9, "project": 1, "meta": {"k": 1}, "annotations": [pos(5, 1), pos(6, 2, "neg")]})
    assert state.task_of_annotation(6) == 9 and state.meta(9) == {}  # the diff keeps the agreement block alone
    assert state.task_scores([9])[9].controls["sentiment"]["spa"] == 0.0
    state.set_task({"id": 9, "project": 1, "meta": {}, "annotations": [pos(5, 1)]})
    assert state.task_of_annotation(6) is None and state.task_scores([9])[9].n_annotations == 1
    assert state.remove_task(9) and not state.remove_task(9)
    assert state.task_of_annotation(5) is None and state.controls["sentiment"].sums.n_items == 0


def test_a_nan_rating_is_skipped_and_poisons_nothing():
    state = ProjectState(1, CONTROLS, mapping=MappingOptions(), scoring=SCORING)
    bad = {"from_name": "quality", "type": "rating", "value": {"rating": float("nan")}}
    state.set_task({"id": 1, "project": 1, "annotations": [{**pos(1, 1), "result": [bad]}, pos(2, 2)]})
    state.set_task({"id": 1, "project": 1, "annotations": [pos(1, 1), pos(2, 2)]})
    assert state.task_scores([1])[1].controls["sentiment"]["spa"] == 1.0


def test_the_state_needs_no_label_studio_client():
    import subprocess
    import sys

    code = ("import sys, plugin.state.project; print('plugin.labelstudio.client' in sys.modules, "
            "'plugin.keeper.tabs' in sys.modules, 'label_studio_sdk' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.split() == ["False", "False", "False"]  # not even the SDK: a brush mask imports its decoder when read


def test_the_compact_state_gives_back_the_rows_the_mapping_gave():
    """Rows are kept as codes (labels, annotators and spans interned per control); decoded, they are the mapping's."""
    import random
    from collections import Counter

    from plugin.mapping import map_project
    from plugin.mapping.annotations import Skips, collect_submissions
    from plugin.mapping.base import RANKED_COLUMNS, frame

    rnd = random.Random(7)
    annotations = {10 * t + a: annotation(rnd, 10 * t + a, t, a, 1) for t in range(1, 7) for a in range(1, 4)}
    for entry in annotations.values():
        entry["was_cancelled"] = False
    tasks = [snapshot(t, annotations) for t in range(1, 7)]
    state = ProjectState.from_tasks(tasks, CONTROLS, mapping=MappingOptions(), scoring=SCORING)
    expected = map_project(CONTROLS, collect_submissions(tasks, Skips()), Skips(), MappingOptions())
    kept = state.mapped()
    for name, mapped in expected.items():
        rows, wanted = kept[name].rows, frame(mapped.records)
        # the items' and the annotators' names once, codes per row; the annotators' categories sorted as names sort
        assert isinstance(rows["item"].dtype, pd.CategoricalDtype), name
        assert isinstance(rows["annotator"].dtype, pd.CategoricalDtype), name
        assert list(rows["annotator"].cat.categories) == sorted(rows["annotator"].cat.categories), name
        rows = rows.astype({"item": wanted["item"].dtype, "annotator": wanted["annotator"].dtype})
        assert Counter(rows.itertuples(index=False)) == Counter(wanted.itertuples(index=False)), name
        assert rows.dtypes.equals(wanted.dtypes), name
        # decoded with numpy, in the order and with the types the decoded tuples give, ranked rows too
        control = state.controls[name]
        pd.testing.assert_frame_equal(rows, frame([row for task in sorted(control.records)
                                                   for row in control.task_records(task)]))
        if mapped.ranked_records is not None:
            ranked = kept[name].ranked
            pd.testing.assert_frame_equal(ranked.astype({"item": wanted["item"].dtype, "annotator": wanted["annotator"].dtype}), frame(
                [row for task in sorted(control.ranked) for row in control.ranked_records(task)], RANKED_COLUMNS))
            assert Counter(ranked.itertuples(index=False)) == Counter(
                frame(mapped.ranked_records, RANKED_COLUMNS).itertuples(index=False))
        assert Counter(kept[name].spans or ()) == Counter(mapped.spans or ()), name
    assert any(kept["ner"].spans) and all(isinstance(row[2], str) for row in kept["ner"].spans)


def test_annotation_times_are_decoded_as_the_times_read():
    """The report's timeline reads every counted annotation's time from the codes: the same as parsing the times
    as read, a time that is not ISO 8601 included (NaT)."""
    tasks = [{"id": 3, "annotations": [dict(pos(30, 1), created_at="2026-01-05T09:00:00Z"),
                                       dict(pos(31, 2), created_at="2026-01-05T10:30:00.250000+02:00")]},
             {"id": 1, "annotations": [dict(pos(10, 2), created_at="yesterday"),
                                       dict(pos(11, 3), created_at="2026-01-06T08:00:00")]},
             {"id": 2, "annotations": []}]
    state = ProjectState.from_tasks(tasks, CONTROLS, mapping=MappingOptions(), scoring=SCORING)
    read = pd.DataFrame([(task, who, when) for task, entry in state.tasks.items()
                         for who, when in zip(entry.annotators, entry.created, strict=True)],
                        columns=["task", "annotator", "created_at"])
    read["time"] = pd.to_datetime(read["created_at"], utc=True, errors="coerce", format="ISO8601")
    times = state.annotation_times()
    pd.testing.assert_frame_equal(times, read.drop(columns="created_at"))
    assert times["time"].isna().tolist() == [False, False, True, False]
    assert str(times["time"].iloc[1]) == "2026-01-05 08:30:00.250000+00:00"


@settings(max_examples=examples(30), deadline=None)
@given(st.randoms(use_true_random=False), st.booleans(), st.booleans())
def test_a_pass_finds_the_tasks_a_full_diff_of_each_finds(rnd, mirror, escalate):
    """stale_tasks builds each distinct block once and compares diff keys first; a full diff of every task as read
    (its meta, mirrored score and overlap) must name the same tasks, whatever their metas hold."""
    from plugin.settings import ReviewOptions
    from plugin.state.blocks import ALPHA_TOLERANCE, TaskAsRead, needed_write, task_score

    annotations = {}
    for t in range(1, 25):
        for a in range(1, rnd.randint(1, 4) + 1):
            entry = annotation(rnd, 10 * t + a, t, a, 1)
            entry["ground_truth"] = rnd.random() < 0.1  # marked by a reviewer: a reference, scores of its own
            annotations[10 * t + a] = entry
    plain = [snapshot(t, annotations) for t in range(1, 25)]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UndefinedMeasureWarning)
        blocks = ProjectState.from_tasks(plain, CONTROLS, mapping=MappingOptions(), scoring=SCORING).blocks(
            updated_at="2026-01-01T00:00:00Z")
        tasks = []
        for task in plain:
            block = copy.deepcopy(blocks[task["id"]])
            kind = rnd.choice(["none", "same", "same", "later", "drift", "changed", "junk"])
            block["updated_at"] = f"2026-0{rnd.randint(1, 9)}-01T00:00:00Z"
            if kind == "drift" and block["alpha"] is not None:
                block["alpha"] += rnd.choice([0.4, 1.5]) * ALPHA_TOLERANCE  # within the tolerance, or past it
            if kind == "changed":
                block["n_annotations"] += 1
            meta = {"none": {}, "junk": {"agreement": "?"}}.get(kind, {"agreement": block, "other": 1})
            # equal as keys of a dict but not as the diff reads them (1, 1.0, True), and not hashable at all
            data_score = task_score(block) if rnd.random() < 0.5 else rnd.choice([None, 0.5, 1, 1.0, True, [0.5]])
            tasks.append({**task, "meta": meta, "overlap": rnd.choice([1, 2, 3, 5, 2.0, True, None, [2]]),
                          "data": {"agreement_score": data_score}})
        review = ReviewOptions(tab=False, mirror_to_data=mirror, escalate=escalate)
        state = ProjectState.from_tasks(tasks, CONTROLS, mapping=MappingOptions(), scoring=SCORING)
        should = state.blocks(updated_at="2026-02-02T00:00:00Z")
        expected = sorted(task["id"] for task in tasks
                          if needed_write(TaskAsRead.of(task), should[task["id"]], review=review) is not None)
        # the blocks and answers held let go when full (down to one at a time): the same tasks
        with mock.patch.object(stale, "BLOCKS_HELD", rnd.choice([1, 2, 5, stale.BLOCKS_HELD])):
            assert state.stale_tasks(review=review) == expected


@pytest.mark.parametrize("overlaps", [(2, 2.0), (2.0, 2)])
def test_a_pass_diffs_tasks_read_alike_but_for_the_type_of_their_overlap_apart(overlaps):
    # two tasks with the same block, whose metas carry it: an overlap of 2 asks for one more annotator, one of 2.0
    # is not a count; equal as keys of a dict, so a pass that diffs each task read alike once must tell them apart
    from plugin.settings import ReviewOptions

    def two(task):
        return [{"id": 10 * task + who, "task": task, "completed_by": who, "was_cancelled": False,
                 "ground_truth": False, "result": [{"from_name": "sentiment", "type": "choices",
                                                    "value": {"choices": [label]}}]}
                for who, label in ((1, "pos"), (2, "neg"))]

    tasks = [{"id": task, "project": 1, "meta": {}, "annotations": two(task)} for task in (1, 2)]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UndefinedMeasureWarning)
        blocks = ProjectState.from_tasks(tasks, CONTROLS, mapping=MappingOptions(), scoring=SCORING).blocks(
            updated_at="2026-01-01T00:00:00Z")
        assert blocks[1]["flagged"] and blocks[1]["controls"] == blocks[2]["controls"]
        read = [{**task, "meta": {"agreement": blocks[task["id"]]}, "overlap": overlap}
                for task, overlap in zip(tasks, overlaps, strict=True)]
        state = ProjectState.from_tasks(read, CONTROLS, mapping=MappingOptions(), scoring=SCORING)
        asks = [task for task, overlap in zip((1, 2), overlaps, strict=True) if isinstance(overlap, int)]
        assert state.stale_tasks(review=ReviewOptions(tab=False, escalate=True)) == asks


@settings(max_examples=examples(25), deadline=None)
@given(st.randoms(use_true_random=False), st.integers(4, 16))
def test_a_pass_on_a_state_that_did_not_change_gives_the_last_answer_and_any_change_computes_it_again(rnd, steps):
    """A pass keeps its answer until a task is read other than as it was held, or removed; whatever happened in
    between (annotations changed, tasks deleted, blocks written and read back, blocks written but not read yet, tasks
    read again as they were, passes with other options), each pass names what a pass on a fresh state, read from the
    same task reads, names."""
    from plugin.settings import ReviewOptions

    truth, next_id = {}, iter(range(1, 10_000))
    for t in range(1, 7):
        for who in range(1, rnd.randint(2, 3) + 1):
            identifier = next(next_id)
            truth[identifier] = annotation(rnd, identifier, t, who, 1)
    seen = {t: snapshot(t, truth) for t in range(1, 7)}  # each task as the state last read it
    reviews = (ReviewOptions(tab=False), ReviewOptions(tab=False, escalate=True))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UndefinedMeasureWarning)
        state = ProjectState.from_tasks(list(seen.values()), CONTROLS, mapping=MappingOptions(), scoring=SCORING)
        for version in range(2, steps + 2):
            step = rnd.choice(["annotate", "delete", "write", "write unread", "read again", "pass", "pass"])
            task = rnd.choice(sorted(seen)) if seen else None
            if step == "annotate" and task is not None:
                identifier = rnd.choice([a for a, entry in truth.items() if entry["task"] == task] or [next(next_id)])
                truth[identifier] = annotation(rnd, identifier, task, rnd.randint(1, 3), version)
                seen[task] = snapshot(task, truth, meta=seen[task]["meta"])
                state.set_task(seen[task])
            elif step == "delete" and task is not None and len(seen) > 2:
                del seen[task]
                assert state.remove_task(task)
            elif step in ("write", "write unread") and (stale := state.stale_tasks()):
                task = rnd.choice(stale)
                block = state.blocks([task], updated_at="2026-02-02T00:00:00Z")[task]
                if step == "write":  # written, then read back by a pass of changed tasks
                    seen[task] = {**seen[task], "meta": {"agreement": block}}
                    state.set_task(seen[task])
            elif step == "read again" and task is not None:
                state.set_task(seen[task])  # read as it was (a pass of changed tasks reads the last few again)
            review = rnd.choice(reviews)
            fresh = ProjectState.from_tasks(list(seen.values()), CONTROLS, mapping=MappingOptions(), scoring=SCORING)
            assert state.stale_tasks(review=review) == fresh.stale_tasks(review=review)


def test_a_second_pass_on_an_unchanged_state_scores_nothing_and_a_change_scores_again(monkeypatch):
    rnd = random.Random(3)
    truth = {10 * t + who: {**annotation(rnd, 10 * t + who, t, who, 1), "was_cancelled": False}
             for t in range(1, 5) for who in (1, 2)}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UndefinedMeasureWarning)
        state = ProjectState.from_tasks([snapshot(t, truth) for t in range(1, 5)], CONTROLS,
                                        mapping=MappingOptions(), scoring=SCORING)
        scored = []
        task_scores = ProjectState.task_scores
        monkeypatch.setattr(ProjectState, "task_scores", lambda self, *a, **k: scored.append(1) or task_scores(
            self, *a, **k))
        first = state.stale_tasks()
        assert first == [1, 2, 3, 4] and len(scored) == 1  # nothing written yet: every task
        first.clear()  # the caller's list is its own
        assert state.stale_tasks() == [1, 2, 3, 4] and len(scored) == 1
        block = state.blocks([2], updated_at="2026-02-02T00:00:00Z")[2]
        assert len(scored) == 2  # one task's block
        state.set_task(snapshot(2, truth, meta={"agreement": block}))  # written, and read back
        assert state.stale_tasks() == [1, 3, 4] and len(scored) == 3
        changes = state.changes
        for task in (1, 2, 3, 4):  # every task read again as it was: nothing changed
            state.set_task(snapshot(task, truth, meta={"agreement": block} if task == 2 else None))
        assert state.changes == changes
        assert state.stale_tasks() == [1, 3, 4] and len(scored) == 3
        assert state.remove_task(3)
        after = state.stale_tasks()  # task 2 may be stale again: alphas move with the project's expected disagreement
        assert 3 not in after and {1, 4} <= set(after) and len(scored) == 4


@given(st.sampled_from([["a", "b", "c"], [1, 2, 3, 4, 5], [1.5, 2, 3], [True, False], ["x", 1], [("a", "b"), ("c",)],
                        [1, 2.5], [None, "a"], [1, None]]),
       st.lists(st.integers(0, 4), max_size=12))
def test_a_label_column_has_the_type_pandas_infers_for_the_labels_as_a_list(values, picks):
    # the snapshot's label column is taken from the distinct labels used, typed as pandas types a list of every
    # row's label (ratings int64, text pandas' string type where it infers one, mixed labels objects)
    from plugin.state.decoded import label_column

    codes = np.array([pick % len(values) for pick in picks], dtype=np.intp)
    held = np.empty(len(values), dtype=object)
    held[:] = values
    pd.testing.assert_frame_equal(pd.DataFrame({"label": label_column(values, codes)}),
                                  pd.DataFrame({"label": held[codes].tolist()}))


def test_task_entries_read_back_and_stay_out_of_the_garbage_collectors_passes():
    """Each field of the task entries is held in a dict of its own, which the collector never tracks while it holds
    numbers, text, bytes and None alone (only the tasks with skips hold a Counter); reading an entry back gives what
    was read."""
    import gc

    from plugin.demo import CONFIG, simulated_export

    tasks = simulated_export(30, seed=3)
    tasks[4]["annotations"][0]["result"].append({"from_name": "nowhere", "type": "choices", "value": {}})
    tasks[7]["annotations"][0]["created_at"] = "yesterday"  # not ISO 8601: the times are kept as read
    state = ProjectState.from_tasks(tasks, parse_label_config(CONFIG), mapping=MappingOptions(),
                                    scoring=ScoringOptions())
    assert list(state.tasks) == [t["id"] for t in tasks] and len(state.tasks) == 30 and 5 in state.tasks
    held = {name: value for name, value in vars(state.tasks).items() if isinstance(value, dict)}
    assert len(held) == 7 and all(len(held[name]) == 30 for name in ("_codes", "_meta", "_data_score", "_overlap"))
    assert [name for name, fields in held.items() if gc.is_tracked(fields)] == ["_skips", "_times"]  # no collection
    assert held["_prediction"] == {}  # only tasks that carry a consensus prediction
    assert list(held["_skips"]) == [5] and list(held["_times"]) == [8] and "yesterday" in held["_times"][8]
    entry = state.tasks[5]
    assert entry.annotators == tuple(sorted(str(a["completed_by"]) for a in tasks[4]["annotations"]))
    assert dict(entry.skips) == {"control not in the config: Choices 'nowhere'": 1}
    assert state.tasks.codes([5]) == [entry.codes] and state.tasks.skips_by_task() == {5: entry.skips}
    assert state.tasks.times_by_task() == {8: state.tasks[8].times}
    assert state.remove_task(5) and 5 not in state.tasks and len(state.tasks.codes()) == 29
    assert all(5 not in fields for fields in held.values()) and not state.tasks.skips_by_task()
    state.set_task({**tasks[2], "overlap": 7})  # read again: in its place, every field replaced
    assert state.tasks.codes() == [state.tasks[task].codes for task in state.tasks]
    assert [state.tasks.read_alike(task) for task in state.tasks] == [
        (e.meta, type(e.data_score), e.data_score, type(e.overlap), e.overlap, e.prediction)
        for e in map(state.tasks.__getitem__, state.tasks)]
    assert list(state.tasks)[2] == 3 and state.tasks.read_alike(3)[3:5] == (int, 7) and state.tasks[3].overlap == 7


@pytest.mark.parametrize(("first", "then"), [(2, 2.0), (1, True), (None, {}), ({"agreement": 1}, {"agreement": 1.0})])
def test_a_task_read_again_with_a_field_equal_in_python_but_not_as_read_is_a_change(first, then):
    # an overlap of 2 asks for one more annotator and 2.0 does not; 1 == True; an empty meta is not a missing one
    rnd = random.Random(5)
    task = {"id": 1, "project": 1, "annotations": [annotation(rnd, 1, 1, 1, 1)]}
    state = ProjectState.from_tasks([{**task, "overlap": first, "meta": first}], CONTROLS, mapping=MappingOptions(),
                                    scoring=SCORING)
    changes = state.changes
    state.set_task({**task, "overlap": first, "meta": first})
    assert state.changes == changes
    state.set_task({**task, "overlap": then, "meta": then})
    assert state.changes == changes + 1


def test_a_span_control_counts_its_annotations_apart_from_its_regions():
    # before, /status gave a span control's regions as its n_annotations (1,469 where the project had 742)
    from plugin.demo import CONFIG, simulated_export

    state = ProjectState.from_tasks(simulated_export(60, seed=4), parse_label_config(CONFIG),
                                    mapping=MappingOptions(), scoring=ScoringOptions(n_resamples=20))
    entities = state.controls["entities"]
    pairs = {(task, row[2]) for task in entities.records for row in entities.task_records(task)}
    live = state.live_summary()["entities"]
    assert live["n_annotations"] == len(pairs) <= state.n_annotations() < live["n_labels"]
    assert live["n_labels"] == sum(len(entities.task_records(task)) for task in entities.records)
