"""Task scores held as columns read as a plain reading of the flag rule gives them, flags and reasons included.

The oracle below (:func:`_summarize_task`) is the rule of :mod:`plugin.state.flags` written task by task in plain
Python, apart from the product's arrays, so that the columns and the words are checked against a second reading.
"""

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from plugin.settings import ScoringOptions
from plugin.state.flags import CONSTANT_LOW, control_value, lowest_decile, task_score_of
from plugin.state.scoring import TaskScore, number
from plugin.state.task_scores import ControlColumns, TaskScores, score_values
from tests.profiles import examples

CLASSES = (None, CONSTANT_LOW, "constant high", "better at p=1.0")


_KINDS = {"f1_overlap": "overlap F1", "f1": "F1", "gamma": "gamma"}


def _score(by_control):
    """A task's lowest defined control value, or None."""
    values = [control_value(c) for c in by_control.values()]
    defined = [v for v in values if isinstance(v, (int, float)) and not isinstance(v, bool)]
    return min(defined) if defined else None


def _reasons(n_annotations, by_control, options, decile_cut):
    reasons = []
    if n_annotations >= 2:
        for name, c in sorted(by_control.items()):
            value = control_value(c)
            limit = options.thresholds.get(name, options.threshold)
            if value is not None and value < limit:
                kind = (_KINDS[c["flag_on"]] if "flag_on" in c
                        else "weighted agreement" if "agreement" in c else "agreement")
                reasons.append(f"{name}: {kind} {value:.2f} below {limit:.2f}")
            if options.flag_constant_low and c.get("item_class") == CONSTANT_LOW:
                reasons.append(f"{name}: annotators disagree on most labels whichever comes first")
        score = _score(by_control)
        if decile_cut is not None and score is not None and score < decile_cut:
            reasons.append(f"score {score:.2f} in the project's lowest tenth (below {decile_cut:.2f})")
    return tuple(reasons)


def _summarize_task(task, n_annotations, by_control, options, *, decile_cut=None):
    """The oracle: one task's TaskScore, the rule read in plain Python."""
    spas = [c["spa"] for c in by_control.values() if c["spa"] is not None]
    alphas = [c["alpha"] for c in by_control.values() if c["alpha"] is not None]
    reasons = _reasons(n_annotations, by_control, options, decile_cut)
    return TaskScore(task=task, n_annotations=n_annotations, spa=number(float(np.mean(spas))) if spas else None,
                     alpha=number(float(np.mean(alphas))) if alphas else None, flagged=bool(reasons),
                     reasons=reasons, controls=by_control)


def _cells(draw, size, *, allow_nan=True):
    """Rounded values in [0, 1] (or NaN, undefined)."""
    values = draw(st.lists(st.one_of(st.floats(0, 1), st.just(math.nan)) if allow_nan else st.floats(0, 1),
                           min_size=size, max_size=size))
    return np.round(np.array(values, dtype=float), 6)


@st.composite
def columns(draw):
    """A few controls' columns on a few tasks: nominal, ordered, multiple choices and a span control."""
    size = draw(st.integers(1, 12))
    out = {}
    for name in draw(st.lists(st.sampled_from(["choice", "rating", "topics", "spans"]), min_size=1, max_size=4,
                              unique=True)):
        has_items = np.array(draw(st.lists(st.booleans(), min_size=size, max_size=size)))
        has_spans = (np.array(draw(st.lists(st.booleans(), min_size=size, max_size=size))) if name == "spans"
                     else np.zeros(size, dtype=bool))
        spa, alpha = _cells(draw, size), _cells(draw, size)
        present = has_items | has_spans
        spa[~has_items], alpha[~has_items] = np.nan, np.nan
        n_items = np.where(has_items, draw(st.integers(1, 5)), 0)
        out[name] = ControlColumns(
            has_items, has_spans, spa, alpha, n_items,
            agreement=np.where(has_items, _cells(draw, size), np.nan) if name == "rating" else None,
            item_class=(np.array(draw(st.lists(st.sampled_from(CLASSES), min_size=size, max_size=size)),
                                 dtype=object) if name == "topics" else None),
            spans=({key: np.where(has_spans, _cells(draw, size), np.nan) for key in ("f1", "f1_overlap", "gamma")}
                   if name == "spans" else None),
            flag_on=draw(st.sampled_from([None, "f1", "f1_overlap", "gamma"])) if name == "spans" else None,
            extra={at: {"ground_truth": 0.5} for at in np.flatnonzero(present)[:1].tolist()})
    n_annotations = draw(st.lists(st.integers(0, 4), min_size=size, max_size=size))
    return size, out, n_annotations


@settings(max_examples=examples(200), deadline=None)
@given(columns(), st.floats(0, 1), st.one_of(st.none(), st.floats(0, 1)), st.booleans())
def test_every_task_reads_as_the_rule_read_task_by_task_gives_it(drawn, threshold, cut, constant_low):
    size, controls, n_annotations = drawn
    options = ScoringOptions(threshold=round(threshold, 3), thresholds={"rating": 0.8}, flag_constant_low=constant_low)
    tasks = list(range(100, 100 + size))
    held = TaskScores(tasks, n_annotations, controls, options, decile_cut=cut)
    by_task = {t: {name: s for name, c in controls.items() if (s := c.scores(at)) is not None}
               for at, t in enumerate(tasks)}
    expected = {t: _summarize_task(t, n_annotations[at], by_task[t], options, decile_cut=cut)
                for at, t in enumerate(tasks)}
    assert dict(held.items()) == expected
    assert held == expected and len(held) == size and list(held) == tasks
    assert held.n_flagged() == sum(score.flagged for score in expected.values())
    for at, t in enumerate(tasks):
        score = _score(by_task[t])
        assert task_score_of(by_task[t]) == score
        assert (math.isnan(held.score_values()[at]) if score is None else held.score_values()[at] == score)
    defined = [s for t, n in zip(tasks, n_annotations, strict=True) if n >= 2 and (s := _score(by_task[t])) is not None]
    expected_cut = float(np.quantile(defined, 0.1)) if defined else None
    assert lowest_decile(score_values(controls, size), n_annotations) == expected_cut


def _twice(column):
    return None if column is None else np.concatenate([column, column])


@settings(max_examples=examples(200), deadline=None)
@given(columns(), st.floats(0, 1), st.one_of(st.none(), st.floats(0, 1)), st.booleans())
def test_the_reasons_column_says_what_each_task_s_own_score_says(drawn, threshold, cut, constant_low):
    # every task twice over (equal columns: their words are built once), the one with extra scores only once
    size, controls, n_annotations = drawn
    doubled = {name: ControlColumns(_twice(c.has_items), _twice(c.has_spans), _twice(c.spa), _twice(c.alpha),
                                    _twice(c.n_items), agreement=_twice(c.agreement), item_class=_twice(c.item_class),
                                    spans=None if c.spans is None else {k: _twice(v) for k, v in c.spans.items()},
                                    flag_on=c.flag_on, extra=c.extra)
               for name, c in controls.items()}
    options = ScoringOptions(threshold=round(threshold, 3), thresholds={"rating": 0.8}, flag_constant_low=constant_low)
    held = TaskScores(list(range(2 * size)), n_annotations * 2, doubled, options, decile_cut=cut)
    texts = held.reason_texts()
    assert texts.tolist() == ["; ".join(score.reasons) for score in held.values()]
    assert sum(map(bool, texts)) == held.n_flagged()


def test_a_task_is_found_by_its_id_whatever_the_order_and_others_are_not():
    controls = {"c": ControlColumns(np.array([True, True, False]), np.zeros(3, dtype=bool), np.array([1.0, 0.0, np.nan]),
                                    np.array([0.5, np.nan, np.nan]), np.array([1, 1, 0]))}
    held = TaskScores([30, 10, 20], [2, 2, 0], controls, ScoringOptions(threshold=0.5))
    assert list(held) == [30, 10, 20]
    assert held[10].flagged and held[10].reasons == ("c: agreement 0.00 below 0.50",)
    assert held[30].controls == {"c": {"spa": 1.0, "alpha": 0.5, "n_items": 1}} and not held[30].flagged
    assert held[20].controls == {} and held[20].spa is None
    assert 20 in held and 40 not in held and "10" not in held and True not in held
    with pytest.raises(KeyError):
        held[40]
