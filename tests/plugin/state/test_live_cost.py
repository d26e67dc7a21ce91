"""An event costs O(its task), whatever the number of distinct answers a control has seen, with the values unchanged.

A free-text control has as many labels as answers: an event's consensus ranks and votes over the labels its items
name alone (not every label), and ``/status`` after it reads a tally kept as tasks change (not every task's rows).
"""

import random
import warnings
from collections.abc import Sequence

import numpy as np
import pandas as pd
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from agreement import UndefinedMeasureWarning
from agreement.bootstrap import canonical_rows
from agreement.consensus import held_posterior, majority_vote
from agreement.itemsums import compress_rows
from plugin.mapping.labelconfig import parse_label_config
from plugin.settings import MappingOptions, ScoringOptions
from plugin.state import consensus as consensus_module
from plugin.state.codes import RowsTally, answered, item_counts, pack_rows, stacked_rows
from plugin.state.consensus import (
    ItemConsensus,
    LabelNumbers,
    LabelValues,
    _vote,
    _with_known,
    fit_items,
    held_items,
    label_order,
    ranks_among,
)
from plugin.state.project import ProjectState
from plugin.state.scoring import spa_interval, spa_interval_of_shapes
from tests.profiles import examples

TEXT = parse_label_config('<View><Text name="text" value="$text"/><TextArea name="note" toName="text"/></View>')
LABELS = st.one_of(st.sampled_from(["b", "a", "no span", "c", "10", "9", "a\x00"]), st.integers(-3, 12),
                   st.floats(-2, 12, allow_nan=False), st.sampled_from([True, None, float("nan")]))
"""Labels as a state codes them: text, numbers (a rating's), and odd values; text that numpy reads alike ("a" and
"a\x00")."""
ANSWERS = ("b", "a", "c", "no span", "d", "e", "f", "g")


def _dense_reference(model, rows, n_items, *, known, n_labels, labels):
    """:func:`held_items` as it was: every label ranked by :func:`label_order`, and voted over in a column each."""
    items, who, said = rows[:, 0], rows[:, 1], rows[:, 2]
    order = label_order(labels, model.n_categories)
    ranks = np.empty(len(order), dtype=np.intp)
    ranks[order] = np.arange(len(order))
    if model.fit is None:
        return _vote(items, said, n_items, known, ranks=ranks)
    posterior = held_posterior(model.fit, items, who, np.minimum(said, len(model.labels)), n_items=n_items,
                               known=np.where(known < len(model.labels), known, -1))
    newer = said >= len(model.labels)
    if newer.any() or (known >= len(model.labels)).any():
        vote = majority_vote(items, said, n_items=n_items, n_labels=n_labels).posterior
        unfit = np.bincount(items[newer], minlength=n_items) > 0
        wide = np.zeros((n_items, n_labels))
        wide[:, : posterior.shape[1]] = posterior
        wide[unfit] = vote[unfit]
        posterior = _with_known(wide, known)
    return ItemConsensus.of(posterior, ranks=ranks)


@settings(max_examples=examples(60), deadline=None)
@given(st.lists(LABELS, min_size=1, max_size=8), st.data())
def test_codes_rank_among_themselves_as_label_order_ranks_them(labels, data):
    n_categories = data.draw(st.integers(0, len(labels)))
    codes = np.array(data.draw(st.lists(st.integers(0, len(labels) - 1), max_size=10)), dtype=np.intp)
    ranks = ranks_among(labels, codes, n_categories)
    place = np.empty(len(labels), dtype=np.intp)
    place[label_order(labels, n_categories)] = np.arange(len(labels))
    distinct = np.unique(codes)
    assert sorted(distinct.tolist(), key=lambda code: ranks[code]) == sorted(distinct.tolist(),
                                                                            key=lambda code: place[code])
    assert sorted(ranks[distinct].tolist()) == list(range(len(distinct)))
    assert (np.delete(ranks, distinct) == len(labels)).all()


@settings(max_examples=examples(60), deadline=None)
@given(st.lists(st.lists(st.one_of(LABELS, st.just(("x", 1))), max_size=4), max_size=6))
def test_label_numbers_follow_labels_appended_as_label_order_reads_them(chunks):
    numbers, labels = LabelNumbers(), []
    for chunk in chunks:
        labels += chunk
        values = np.fromiter(labels, dtype=object, count=len(labels))  # one object each, tuples included
        assert numbers(labels) == (pd.api.types.infer_dtype(values, skipna=False)
                                   in ("integer", "floating", "mixed-integer-float"))


def test_label_values_are_the_labels_at_the_time_then_the_others():
    coded = ["x", "y"]
    labels = LabelValues(coded, ("truth",))
    coded.append("z")  # a label coded since: not seen
    assert list(labels) == ["x", "y", "truth"] and len(labels) == 3 and labels[1:] == ("y", "truth")
    assert (labels[0], labels[2], labels[-3]) == ("x", "truth", "x")
    with pytest.raises(IndexError):
        labels[3]


@settings(max_examples=examples(80), deadline=None)
@given(st.lists(st.tuples(st.integers(0, 5), st.integers(0, 3), st.integers(0, 7)), min_size=1, max_size=30),
       st.lists(st.tuples(st.integers(0, 3), st.integers(0, 4), st.integers(0, 7)), min_size=1, max_size=10),
       st.permutations(ANSWERS),
       st.integers(1, 8), st.integers(0, 2), st.sampled_from(["dawid-skene", "majority"]),
       st.lists(st.integers(-1, 7), min_size=4, max_size=4), st.booleans())
@example(fitted=[(0, 0, 0), (0, 1, 1)], event=[(0, 0, 0), (0, 1, 1), (1, 0, 7), (1, 1, 3)], labels=list(ANSWERS),
         n_fit=2, n_categories=0, method="majority", known=[-1] * 4, ratings=False)  # ties: "a" and "g" win
@example(fitted=[(0, 0, 0), (0, 1, 1)], event=[(0, 0, 0), (0, 1, 1), (1, 0, 7), (1, 1, 3)], labels=list(ANSWERS),
         n_fit=2, n_categories=0, method="dawid-skene", known=[-1, 5, -1, -1], ratings=False)
def test_an_events_items_get_the_consensus_of_every_label_ranked_and_voted_over(
        fitted, event, labels, n_fit, n_categories, method, known, ratings):
    """Labels coded after the fit (a free-text control's new answers), ties, ground truth, categories: ranking and
    voting over the labels the items name alone gives each item what ranking and voting over every label gave."""
    labels = [3, 1, 2, 5, 4, 8, 7, 6] if ratings else labels
    n_categories = min(n_categories, n_fit)
    fitted = np.array(sorted({(i, w): (i, w, min(l, n_fit - 1)) for i, w, l in fitted}.values()))
    model = fit_items(fitted, int(fitted[:, 0].max()) + 1, known=np.full(int(fitted[:, 0].max()) + 1, -1),
                      method=method, labels=labels[:n_fit], annotators="abcd", n_categories=n_categories)[0]
    rows = np.array(sorted({(i, w): (i, w, l) for i, w, l in event}.values()))
    known = np.array(known)
    known[np.bincount(rows[:, 0], minlength=4) == 0] = -1  # an item nobody annotated has no known label
    got = held_items(model, rows, 4, known=known, n_labels=len(labels), labels=labels)
    want = _dense_reference(model, rows, 4, known=known, n_labels=len(labels), labels=labels)
    np.testing.assert_array_equal(got.label, want.label)
    np.testing.assert_array_equal(got.posterior, want.posterior)
    np.testing.assert_array_equal(got.tie, want.tie)


class _Watched(Sequence):
    """Labels that count what is read of them."""

    def __init__(self, values):
        self.values, self.read = values, set()

    def __len__(self):
        return len(self.values)

    def __getitem__(self, code):
        self.read.add(code)
        return self.values[code]

    def __iter__(self):
        raise AssertionError("every label was read")


def test_an_events_consensus_reads_the_labels_its_items_name_and_no_other():
    labels = _Watched([f"answer {k}" for k in range(10_000)])
    model = fit_items(np.array([[0, 0, 0], [0, 1, 1]]), 1, known=np.full(1, -1), method="dawid-skene",
                      labels=("answer 0", "answer 1"), annotators="ab")[0]
    rows = np.array([[0, 0, 9_000], [0, 1, 7], [1, 0, 5_000], [1, 1, 5_000]])
    for fit in (model, fit_items(np.array([[0, 0, 0]]), 1, known=np.full(1, -1), method="majority",
                                 labels=tuple(f"answer {k}" for k in range(60)), annotators="a")[0]):
        labels.read.clear()
        items = held_items(fit, rows, 2, known=np.full(2, -1), n_labels=len(labels), labels=labels, numbers=False)
        assert labels.read <= {0, 1, 7, 5_000, 9_000}
        assert items.label.tolist() == [7, 5_000]  # a tie goes to the first as text: "answer 7" before "answer 9000"


def _task(task, answers):
    return {"id": task, "project": 1, "data": {"text": "x"}, "meta": {}, "annotations": [
        {"id": 10 * task + k, "completed_by": k + 1, "updated_at": "2026-01-01T00:00:00Z",
         "result": [{"from_name": "note", "to_name": "text", "type": "textarea", "value": {"text": [answer]}}]}
        for k, answer in enumerate(answers)]}


def test_an_event_on_a_free_text_control_neither_orders_its_labels_nor_reads_every_task(monkeypatch):
    """After a pass over 2,000 distinct answers, an event's task and ``/status`` read the event's rows alone."""
    scoring = ScoringOptions(n_resamples=20, seed=1)
    state = ProjectState.from_tasks([_task(t, (f"a{t}", f"b{t}")) for t in range(1, 1_001)], TEXT,
                                    mapping=MappingOptions(), scoring=scoring)
    state.stale_tasks()  # a pass: every task scored, the consensus fit
    state.live_summary()  # a first /status tallies every task's rows
    decoded = []
    control = state.controls["note"]
    monkeypatch.setattr(consensus_module, "label_order", lambda *_: pytest.fail("every label was ordered"))
    stacked = stacked_rows
    monkeypatch.setattr("plugin.state.codes.stacked_rows", lambda blobs, width: decoded.append(len(blobs)) or
                        stacked(blobs, width))
    monkeypatch.setattr("plugin.state.control.stacked_rows", lambda blobs, width: decoded.append(len(blobs)) or
                        stacked(blobs, width))
    for task in (5, 2_000):  # an answer changed, and a new task
        state.set_task(_task(task, ("changed", f"new {task}")))
        block = state.blocks([task], updated_at="now")[task]
        summary = state.live_summary()["note"]
    assert decoded and max(decoded) <= 1, decoded
    assert block["controls"]["note"]["consensus"]["label"] in ("changed", "new 2000")
    fresh = ProjectState.from_tasks([_task(t, (f"a{t}", f"b{t}")) for t in range(1, 1_001) if t != 5]
                                    + [_task(5, ("changed", "new 5")), _task(2_000, ("changed", "new 2000"))],
                                    TEXT, mapping=MappingOptions(), scoring=scoring)
    monkeypatch.undo()
    again = fresh.live_summary()["note"]
    assert {key: summary[key] for key in ("ci", "n_items", "n_annotations", "n_labels")} == {
        key: again[key] for key in ("ci", "n_items", "n_annotations", "n_labels")}
    assert (summary["spa"], summary["alpha"], summary["gwet"]["value"]) == pytest.approx(
        (again["spa"], again["alpha"], again["gwet"]["value"]), abs=1e-9)
    assert state.n_annotations() == fresh.n_annotations() == 2_002
    assert len(control.labels.values) > 2_000


@settings(max_examples=examples(40), deadline=None)
@given(st.randoms(use_true_random=False), st.integers(1, 30))
def test_the_tally_kept_as_tasks_change_equals_one_of_every_tasks_rows(rnd, n_changes):
    """Tasks added, replaced and removed, a few at a time and in batches: the annotations, the items' shapes and
    SPA's interval from them are those of every task's rows read at once."""
    def blob():
        n_items, rows = rnd.randint(1, 3), []
        for place in range(n_items):
            for who in rnd.sample(range(5), rnd.randint(1, 4)):
                rows += [place, who, rnd.randint(0, 3)]
        return pack_rows(list(range(n_items)), rows)

    held, tally = {}, RowsTally()
    for _ in range(n_changes):
        changes = [(task, blob() if rnd.random() < 0.8 else None) for task in rnd.sample(range(12), rnd.randint(1, 3))]
        for sign, blobs in ((-1, [held[t] for t, _ in changes if t in held]), (1, [b for _, b in changes if b])):
            if blobs:
                tally.update(blobs, sign=sign)
        for task, new in changes:
            if new is None:
                held.pop(task, None)
            else:
                held[task] = new
        blobs = list(held.values())
        again = RowsTally.of(blobs)
        assert tally.answered == again.answered
        rows, multiplicity = tally.shapes()
        np.testing.assert_array_equal(rows, again.shapes()[0])
        np.testing.assert_array_equal(multiplicity, again.shapes()[1])
        if not blobs:
            assert tally.answered == 0 and len(rows) == 0
            continue
        stacked = stacked_rows(blobs, 3)
        packed = item_counts(blobs, stacked=stacked)[0].packed()
        assert tally.answered == answered(stacked[0], stacked[2])
        distinct, counts = compress_rows(canonical_rows(packed))
        np.testing.assert_array_equal(rows, distinct)
        np.testing.assert_array_equal(multiplicity, counts)
        options = ScoringOptions(n_resamples=30, seed=rnd.randint(0, 99))
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", UndefinedMeasureWarning)
            assert spa_interval_of_shapes((rows, multiplicity), options) == spa_interval(packed, options)


def test_the_count_of_annotations_follows_tasks_set_and_removed():
    state = ProjectState(1, TEXT, mapping=MappingOptions(), scoring=ScoringOptions(n_resamples=20))
    rnd = random.Random(3)
    for _ in range(60):
        task = rnd.randint(1, 9)
        if rnd.random() < 0.2:
            state.remove_task(task)
        else:
            state.set_task(_task(task, [f"{task}-{k}" for k in range(rnd.randint(0, 3))]))
        assert state.n_annotations() == sum(state.tasks[t].n_annotations for t in state.tasks)
