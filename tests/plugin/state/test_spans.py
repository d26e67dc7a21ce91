"""A span control's units built from the packed rows at once equal those built from the rows as tuples."""

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from plugin.mapping.labelconfig import parse_label_config
from plugin.mapping.span_units import span_units
from plugin.settings import MappingOptions, ScoringOptions
from plugin.state.project import ProjectState
from tests.exports import read_export
from tests.plugin.conftest import DATA
from tests.profiles import examples

SPANS = DATA / "spans"
CORPORA = [("krippendorff2004", "krippendorff2004_config.xml"), ("leoka_team_2", "leoka_config.xml"),
           ("lsf_audio", "lsf_audio_config.xml"), ("lsf_hypertext", "lsf_hypertext_config.xml"),
           ("lsf_paragraphs", "lsf_paragraphs_config.xml"), ("lsf_timeseries", "lsf_timeseries_config.xml")]
NER = parse_label_config('<View><Text name="text" value="$text"/><Labels name="ner" toName="text">'
                         '<Label value="PER"/><Label value="ORG"/></Labels></View>')


def assert_same_units(spans, tasks):
    """``units(tasks)`` equals ``span_units`` of the same tasks' rows, field by field."""
    mapped = spans._mapped(sorted(tasks))
    expected, got = span_units(mapped, lengths=mapped.lengths), spans.units(sorted(tasks))
    assert got.docs == expected.docs and got.annotators == expected.annotators and got.labels == expected.labels
    for name in ("doc", "annotator", "label", "start", "end", "present", "lengths"):
        assert np.array_equal(getattr(got, name), getattr(expected, name)), name


@pytest.mark.parametrize(("name", "config"), CORPORA)
def test_units_of_every_corpus_equal_those_of_its_rows(name, config):
    state = ProjectState.from_tasks(read_export(SPANS / f"{name}.json"), parse_label_config((SPANS / config).read_text()),
                                    mapping=MappingOptions(), scoring=ScoringOptions())
    checked = 0
    for control in state.controls.values():
        if control.spans is not None:
            every = sorted(control.spans.tasks)
            assert_same_units(control.spans, every)
            assert_same_units(control.spans, every[::2])
            checked += 1
    assert checked


spans_of_a_task = st.lists(st.tuples(st.integers(1, 4), st.sampled_from(["PER", "ORG", "MISC"]),
                                     st.integers(0, 30), st.integers(1, 8), st.sampled_from([0, 0, 0.5, 0.1])),
                           max_size=5)


@settings(max_examples=examples(40), deadline=None)
@given(st.lists(st.tuples(st.booleans(), st.lists(st.tuples(st.integers(1, 4), spans_of_a_task), max_size=3)),
                min_size=1, max_size=6))
def test_units_equal_those_of_the_rows_for_any_tasks(tasks):
    """Tasks with or without text (a known or unknown length), annotators who mark nothing, labels outside the
    config, offsets that float32 holds exactly or not (each task packed in its own layout): the same units
    either way."""
    state = ProjectState(None, NER, mapping=MappingOptions(), scoring=ScoringOptions())
    for number, (has_text, annotations) in enumerate(tasks, start=1):
        results = {who: [{"from_name": "ner", "to_name": "text", "type": "labels", "id": f"r{k}",
                          "value": {"start": start + shift, "end": start + size, "labels": [label]}}
                         for k, (_, label, start, size, shift) in enumerate(spans)] for who, spans in annotations}
        state.set_task({"id": number, "data": {"text": "x" * 40} if has_text else {"other": 1}, "annotations": [
            {"id": 10 * number + who, "completed_by": who, "result": result} for who, result in results.items()]})
    spans = state.controls["ner"].spans
    assert_same_units(spans, list(spans.tasks))
    assert_same_units(spans, list(spans.tasks)[1::2])
    assert_same_units(spans, [])


def test_each_task_is_packed_in_float32_only_where_that_holds_its_numbers_exactly():
    """Offsets in characters take 20 bytes a span; a time float32 cannot hold takes 40, and reads back as it was."""
    from plugin.state.spans import SpanTasks

    state = ProjectState(None, NER, mapping=MappingOptions(), scoring=ScoringOptions())
    for task, (start, end) in enumerate([(3, 9), (0.1, 2.75), (1.5, 4.25)], start=1):
        state.set_task({"id": task, "data": {"text": "x" * 40}, "annotations": [
            {"id": 10 * task + who, "completed_by": who, "result": [
                {"from_name": "ner", "to_name": "text", "type": "labels",
                 "value": {"start": start, "end": end + who, "labels": ["PER"]}}]} for who in (1, 2)]})
    spans: SpanTasks = state.controls["ner"].spans
    sizes = {task: len(blob) for task, blob in spans.tasks.items()}
    # a head, 3 counts, 2 rows of 5, 2 submitters, 1 continuum's scope and length: 17 numbers
    assert sizes == {1: 4 + 17 * 4, 2: 8 + 17 * 8, 3: 4 + 17 * 4}
    assert [row[4:] for row in spans.task_spans(2)[0]] == [(0.1, 3.75), (0.1, 4.75)]
    assert [row[4:] for row in spans.task_spans(3)[0]] == [(1.5, 5.25), (1.5, 6.25)]
    assert all(spans._submitted(task) for task in (1, 2, 3))
    for task, length in ((4, 2.0), (5, 0.1)):  # a continuum's length and no submitter, in each layout
        spans.tasks[task] = spans._pack([], [], {(task, ()): length})
        assert spans.task_spans(task) == ((), (), {(task, ()): length}) and not spans._submitted(task)
    assert len(spans.tasks[4]) == 4 + 5 * 4 and len(spans.tasks[5]) == 8 + 5 * 8
    assert_same_units(spans, [1, 2, 3])
    assert_same_units(spans, [2])


@pytest.mark.parametrize(("name", "config"), CORPORA)
def test_each_task_scored_together_counts_as_scored_alone(name, config):
    """The span measures of every task at once (per task and annotator pair: TP and |A| + |B|, F1 the mean over
    the pairs) equal span_f1 of each task's units alone; the running sums are the sums over tasks."""
    from agreement.span_f1 import span_f1
    from plugin.state.spans import MATCHES, pair_f1

    state = ProjectState.from_tasks(read_export(SPANS / f"{name}.json"), parse_label_config((SPANS / config).read_text()),
                                    mapping=MappingOptions(), scoring=ScoringOptions())
    checked = 0
    for control in state.controls.values():
        spans = control.spans
        if spans is None:
            continue
        every = sorted(t for t in spans.tasks if spans._submitted(t))
        spans._score(every, state.mapping, state.scoring)
        running = {match: {} for match in MATCHES}
        for task in every:
            units = spans.units([task])
            for match in MATCHES:
                result = span_f1(units, match=match, jaccard=state.mapping.span_jaccard)
                alone = {}
                for a, b, tp, total in zip(result.annotator_a, result.annotator_b, result.tp.sum(axis=1),
                                           (result.n_a + result.n_b).sum(axis=1), strict=True):
                    pair = (units.annotators[a], units.annotators[b])
                    old = alone.get(pair, (0, 0))
                    alone[pair] = (old[0] + int(tp), old[1] + int(total))
                held = spans.scored[task]
                assert held.pairs[match] == alone, (task, match)
                f1 = held.f1(match)
                assert (np.isnan(f1) and np.isnan(pair_f1(alone))) or f1 == pair_f1(alone), (task, match)
                for pair, (tp, total) in alone.items():
                    old = running[match].get(pair, [0, 0])
                    running[match][pair] = [old[0] + tp, old[1] + total]
                checked += 1
        assert spans.sums == running
    assert checked


@given(st.lists(st.tuples(st.sampled_from([0.0, 0.5, 2.0, 7.25]), st.sampled_from([-1.0, 0.0, 1.0, 3.0])),
                max_size=12),
       st.sampled_from([None, math.nan, math.inf, -0.5, 0.0, 0.3, 1.0]))
def test_every_task_gamma_at_once_equals_each_task_gamma(tasks, expected):
    # the columns a scoring pass reads and each task's own rule (undefined without units or a usable D_e; 1 without
    # disorder) agree task by task, NaN for NaN
    from plugin.state.spans import TaskSpans, _gammas

    one_by_one = [TaskSpans(b"", [], disorder, weight).gamma(expected) for disorder, weight in tasks]
    at_once = _gammas(np.array([d for d, _ in tasks]), np.array([w for _, w in tasks]), expected)
    np.testing.assert_array_equal(at_once, np.array(one_by_one, dtype=float))


@pytest.mark.parametrize(("name", "config"), CORPORA)
def test_the_expected_disorder_of_a_first_scoring_is_that_of_every_task_units(name, config):
    # a first scoring of every task samples D_e from the units it just scored with: the same sample as from the
    # units built again from every held task
    state = ProjectState.from_tasks(read_export(SPANS / f"{name}.json"), parse_label_config((SPANS / config).read_text()),
                                    mapping=MappingOptions(), scoring=ScoringOptions())
    state.task_scores()
    for control in state.controls.values():
        if control.spans is not None and control.spans.expected is not None:
            again = control.spans._expected(state.scoring)
            assert again.value == control.spans.expected.value or (
                math.isnan(again.value) and math.isnan(control.spans.expected.value))
            np.testing.assert_array_equal(again.samples, control.spans.expected.samples)


def test_scored_tasks_read_back_what_was_stored_a_task_at_a_time():
    """Three tasks stored at once, the middle one without a pair: each reads back its own four numbers and rows."""
    from plugin.state.spans import ScoredTasks

    scored = ScoredTasks([("a", "b"), ("a", "c"), ("b", "c")])
    heads = np.array([[0.5, 2.0, 1.0, 0.75], [0.0, 0.0, math.nan, math.nan], [3.0, 6.0, 0.0, 0.25]])
    rows = np.array([[0, 1, 2, 1, 2], [2, 0, 4, 1, 4], [1, 3, 6, 3, 6]], dtype=np.int64)
    scored.store([7, 8, 9], heads, rows, np.array([0, 2, 2, 3]))
    assert sorted(scored) == [7, 8, 9] and len(scored) == 3 and 8 in scored
    assert np.array_equal(scored.heads([9, 7]), heads[[2, 0]])
    assert scored[7].pairs == {"exact": {("a", "b"): (1, 2), ("b", "c"): (0, 4)},
                               "overlap": {("a", "b"): (1, 2), ("b", "c"): (1, 4)}}
    assert scored[8].pairs == {"exact": {}, "overlap": {}} and math.isnan(scored[8].f1("exact"))
    assert scored[9].f1("overlap") == 0.25 and scored[9].gamma(1.0) == 0.5  # 1 - (3 / 6) / 1
    assert scored.pop(7).disorder == 0.5 and scored.pop(7) is None and sorted(scored) == [8, 9]
